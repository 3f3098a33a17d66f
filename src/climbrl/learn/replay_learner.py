"""Off-policy value learning from replay: the shared core of Q-learning and the DQN family.

Target ``r + gamma * max_a' Q_target(s', a')`` over the next decision's legal moves (double:
the online network picks ``a'``, the target network scores it), a target network synced hard
every ``target_sync`` gradient updates or softly with rate ``tau``, uniform or prioritized
replay, Huber loss weighted by the importance-sampling weights. Each epoch adds the epoch's
decisions to the buffer, then makes ``updates_per_epoch`` updates of ``batch_size``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from climbrl.config import TrainConfig
from climbrl.learn.learner import Learner, t
from climbrl.learn.network import segment_max
from climbrl.learn.replay import PrioritizedReplayBuffer, ReplayBuffer, ReplaySample
from climbrl.learn.rollout import Rollout


class ReplayLearner(Learner):
    behaviour_mode = "epsilon"

    def __init__(self, cfg: TrainConfig) -> None:
        self.dueling = cfg.dueling
        super().__init__(cfg)
        self.target = copy.deepcopy(self.net).eval()
        for p in self.target.parameters():
            p.requires_grad_(False)
        self.buffer: ReplayBuffer = (
            PrioritizedReplayBuffer(cfg.replay_capacity, cfg.priority_alpha) if cfg.prioritized
            else ReplayBuffer(cfg.replay_capacity)
        )

    def next_values(self, s: ReplaySample) -> torch.Tensor:
        n = len(s.indices)
        seg = t(np.repeat(np.arange(n), np.diff(s.next_offsets)))
        states, moves = t(s.next_states), t(s.next_moves)
        with torch.no_grad():
            target_scores = self.target(states, moves, seg)
            if self.cfg.double:
                online = self.net(states, moves, seg)
                best = segment_max(online, seg, n)
                is_best = online == best[seg]
                masked = torch.where(is_best, target_scores, torch.full_like(target_scores, float("-inf")))
                value = segment_max(masked, seg, n)
            else:
                value = segment_max(target_scores, seg, n)
        return torch.where(t(s.dones), torch.zeros_like(value), value)

    def q_chosen(self, s: ReplaySample) -> torch.Tensor:
        """Q(s, a) of the sampled moves. A dueling head needs every legal move of s (its advantage
        mean); a plain head scores the chosen move alone."""
        n = len(s.indices)
        if not self.net.dueling:
            return self.net(t(s.states), t(s.actions), torch.arange(n))
        seg = t(np.repeat(np.arange(n), np.diff(s.offsets)))
        return self.net(t(s.states), t(s.moves), seg)[t(s.chosen)]

    def sync_target(self) -> None:
        if self.cfg.tau > 0:
            with torch.no_grad():
                for p, q in zip(self.target.parameters(), self.net.parameters(), strict=True):
                    p.mul_(1 - self.cfg.tau).add_(q, alpha=self.cfg.tau)
        elif self.updates % self.cfg.target_sync == 0:
            self.target.load_state_dict(self.net.state_dict())

    def beta(self, epoch_fraction: float) -> float:
        return self.cfg.priority_beta + (1.0 - self.cfg.priority_beta) * epoch_fraction

    def update(self, ro: Rollout, rng: np.random.Generator, progress: float = 0.0) -> dict[str, float]:
        self.decisions_seen += ro.size
        self.buffer.add_rollout(ro)
        losses, qs = [], []
        for _ in range(self.cfg.updates_per_epoch):
            if len(self.buffer) < self.cfg.batch_size:
                break
            s = self.buffer.sample(self.cfg.batch_size, rng, beta=self.beta(progress))
            target = t(s.rewards) + self.cfg.gamma * self.next_values(s)
            q = self.q_chosen(s)
            td = q - target
            loss = torch.mean(t(s.weights) * torch.nn.functional.smooth_l1_loss(q, target, reduction="none"))
            self._step(loss)
            self.sync_target()
            self.buffer.update_priorities(s.indices, td.detach().numpy())
            losses.append(float(loss.detach()))
            qs.append(float(q.detach().mean()))
        return {"loss": float(np.mean(losses)) if losses else float("nan"),
                "q_mean": float(np.mean(qs)) if qs else float("nan"),
                "epsilon": self.epsilon(), "buffer": float(len(self.buffer))}

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "target": self.target.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.target.load_state_dict(state["target"])
