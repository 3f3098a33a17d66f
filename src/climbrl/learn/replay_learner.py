"""Off-policy value learning from replay: the shared core of Q-learning and the DQN family.

Target ``r + gamma * max_a' Q_target(s', a')`` over the next decision's legal moves (double:
the online network picks ``a'``, the target network scores it), a target network synced hard
every ``target_sync`` gradient updates or learner decisions (``target_sync_unit``) or softly
with rate ``tau`` after every update, uniform or prioritized replay, Huber loss weighted by the
importance-sampling weights. Each epoch adds the epoch's decisions to the buffer, then makes
``updates_per_epoch`` updates of ``batch_size`` (or, with ``updates_per_decision``, that many per
decision of the epoch: the practice guide's 4.2 loop of one update per environment step).

The guide's 5.5 remedies for a replay that holds stale play: ``replay_capacity`` caps it (the
oldest go first), ``replay_recent`` samples among the newest part only, and ``replay_drop_every``
drops the oldest ``replay_drop_fraction`` when the learner's decisions cross a multiple of it (a
decision count, so a resumed run drops where an uninterrupted one does).

Counting decisions: the epoch's ``D`` learner decisions (those added to replay; in self-play
every seat's) are spread evenly over its ``U`` updates, update ``k`` (1..U) standing for the
decisions up to ``before + k * D // U``, as if the updates were interleaved with play. After
update ``k`` the target is copied when that span crossed a multiple of ``target_sync`` (once,
even if it crossed several: copies with no update between them are the same copy). The rule
reads only the decision count, so a resumed run syncs where an uninterrupted one does.

Prioritized replay's importance-sampling exponent beta anneals linearly from
``priority_beta`` to 1 over the run (Schaul et al.): :func:`beta` of the run's progress,
stepped per update within the epoch (see :meth:`ReplayLearner.update`).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from climbrl.config import TrainConfig
from climbrl.encoders import Encoder
from climbrl.learn.learner import Learner
from climbrl.learn.network import segment_max
from climbrl.learn.replay import PrioritizedReplayBuffer, ReplayBuffer, ReplaySample
from climbrl.learn.rollout import Rollout


class ReplayLearner(Learner):
    behaviour_mode = "epsilon"

    def __init__(self, cfg: TrainConfig, encoder: Encoder | None = None) -> None:
        self.dueling = cfg.dueling
        super().__init__(cfg, encoder)
        dims = (self.encoder.state_dim, self.encoder.move_dim)
        self.target = copy.deepcopy(self.net).eval()
        for p in self.target.parameters():
            p.requires_grad_(False)
        self.buffer: ReplayBuffer = (
            PrioritizedReplayBuffer(cfg.replay_capacity, *dims, alpha=cfg.priority_alpha) if cfg.prioritized
            else ReplayBuffer(cfg.replay_capacity, *dims)
        )

    def next_values(self, s: ReplaySample) -> torch.Tensor:
        n = len(s.indices)
        seg = self.t(np.repeat(np.arange(n), np.diff(s.next_offsets)))
        states, moves = self.t(s.next_states), self.t(s.next_moves)
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
        return torch.where(self.t(s.dones), torch.zeros_like(value), value)

    def q_chosen(self, s: ReplaySample) -> torch.Tensor:
        """Q(s, a) of the sampled moves. A dueling head needs every legal move of s (its advantage
        mean); a plain head scores the chosen move alone."""
        n = len(s.indices)
        if not self.net.dueling:
            return self.net(self.t(s.states), self.t(s.actions), torch.arange(n, device=self.device))
        seg = self.t(np.repeat(np.arange(n), np.diff(s.offsets)))
        return self.net(self.t(s.states), self.t(s.moves), seg)[self.t(s.chosen)]

    def sync_target(self, decisions_from: int, decisions_to: int) -> None:
        """After a gradient update standing for the learner's decisions ``(from, to]``."""
        if self.cfg.tau > 0:
            with torch.no_grad():
                for p, q in zip(self.target.parameters(), self.net.parameters(), strict=True):
                    p.mul_(1 - self.cfg.tau).add_(q, alpha=self.cfg.tau)
            return
        if self.cfg.target_sync_unit == "decisions":
            due = decisions_to // self.cfg.target_sync > decisions_from // self.cfg.target_sync
        else:
            due = self.updates % self.cfg.target_sync == 0
        if due:
            self.target.load_state_dict(self.net.state_dict())

    def beta(self, progress: float) -> float:
        """Importance-sampling exponent at ``progress`` (0: start of the run, 1: its end)."""
        return self.cfg.priority_beta + (1.0 - self.cfg.priority_beta) * min(max(progress, 0.0), 1.0)

    def update(self, ro: Rollout, rng: np.random.Generator,
               progress: tuple[float, float] = (0.0, 0.0)) -> dict[str, float]:
        """Add the epoch's decisions, then up to ``updates_per_epoch`` updates. ``progress``: the
        run's progress (0..1) at the start and at the end of this epoch; update ``k`` of ``U``
        samples with beta at ``start + (end - start) * k / U``, so the last update of the run
        uses beta = 1."""
        before = self.decisions_seen
        self.decisions_seen += ro.size
        cfg = self.cfg
        dropped = 0
        if cfg.replay_drop_every and self.decisions_seen // cfg.replay_drop_every > before // cfg.replay_drop_every:
            dropped = self.buffer.drop_oldest(cfg.replay_drop_fraction)  # before the epoch's own are added
        self.buffer.add_rollout(ro)
        losses, qs, betas = [], [], []
        n_updates = round(cfg.updates_per_decision * ro.size) if cfg.updates_per_decision > 0 else cfg.updates_per_epoch
        for k in range(1, n_updates + 1):
            if len(self.buffer) < self.cfg.batch_size:
                break
            beta = self.beta(progress[0] + (progress[1] - progress[0]) * k / n_updates)
            betas.append(beta)
            recent = {"recent": cfg.replay_recent} if cfg.replay_recent < 1 else {}
            s = self.buffer.sample(self.cfg.batch_size, rng, beta=beta, **recent)
            target = self.t(s.rewards) + self.cfg.gamma * self.next_values(s)
            q = self.q_chosen(s)
            td = q - target
            loss = torch.mean(self.t(s.weights) * torch.nn.functional.smooth_l1_loss(q, target, reduction="none"))
            self._step(loss)
            self.sync_target(before + (k - 1) * ro.size // n_updates, before + k * ro.size // n_updates)
            self.buffer.update_priorities(s.indices, td.detach().cpu().numpy())
            losses.append(float(loss.detach()))
            qs.append(float(q.detach().mean()))
        stats = {"loss": float(np.mean(losses)) if losses else float("nan"),
                 "q_mean": float(np.mean(qs)) if qs else float("nan"),
                 "epsilon": self.epsilon(), "buffer": float(len(self.buffer))}
        if self.cfg.prioritized:
            stats["beta"] = betas[-1] if betas else float("nan")
        if cfg.replay_drop_every:
            stats["replay_dropped"] = float(dropped)
        if cfg.updates_per_decision > 0:
            stats["updates"] = float(len(losses))
        return stats

    def state_dict(self) -> dict[str, Any]:
        """The learner's state with the target network and the replay buffer (its transitions and
        priorities: without them a resumed run would sample from the epochs after the checkpoint
        only, and train other numbers)."""
        return {**super().state_dict(), "target": self.target.state_dict(), "replay": self.buffer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`. A state without ``replay`` (a checkpoint written before they
        held the buffer) leaves the buffer empty: :func:`climbrl.learn.checkpoint.resume_conflicts`
        refuses to resume such a checkpoint, since the run would not be the uninterrupted one."""
        super().load_state_dict(state)
        self.target.load_state_dict(state["target"])
        if "replay" in state:
            self.buffer.load_state_dict(state["replay"])
