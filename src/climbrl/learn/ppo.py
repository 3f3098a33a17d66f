"""PPO: clipped surrogate (0.2), value loss (coefficient 0.5), entropy bonus (0.01, the
ablation sweeps it), GAE advantages normalized per batch, one optimization epoch per batch by
default, gradient clipping. The policy is the softmax of the action-in scores over the legal
moves; the critic is the network's state-value head, which with ``oracle_critic`` also reads the
other seats' hands (PerfectDou's oracle critic: only the advantages' baseline sees them, the
policy's ratio does not); ``aux_hidden_coef`` adds the hidden-hand head's loss
(:meth:`~climbrl.learn.learner.Learner.aux_loss`)."""

from __future__ import annotations

import numpy as np
import torch

from climbrl.learn.learner import Learner
from climbrl.learn.rollout import Rollout


class PPO(Learner):
    algo = "ppo"
    value_head = True
    behaviour_mode = "sample"

    def advantages(self, ro: Rollout) -> tuple[np.ndarray, np.ndarray]:
        """GAE(gamma, lambda) advantages and returns along each seat's own decisions."""
        with torch.no_grad():
            values = self.net.value(self.t(ro.states), self.oracle_input(ro)).cpu().numpy()
        gamma, lam = self.cfg.gamma, self.cfg.gae_lambda
        adv = np.zeros(ro.size, dtype=np.float32)
        running = 0.0
        for i in range(ro.size - 1, -1, -1):
            next_value = 0.0 if ro.dones[i] else values[i + 1]
            if ro.dones[i]:
                running = 0.0
            delta = ro.rewards[i] + gamma * next_value - values[i]
            running = delta + gamma * lam * running
            adv[i] = running
        return adv, adv + values

    def update(self, ro: Rollout, rng: np.random.Generator,
               progress: tuple[float, float] = (0.0, 0.0)) -> dict[str, float]:
        self.decisions_seen += ro.size
        adv, returns = self.advantages(ro)
        adv_n = (adv - adv.mean()) / (adv.std() + 1e-8)
        stats: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "entropy": [],
                                         "approx_kl": [], "clip_frac": [], "ratio_mean": []}
        if self.cfg.aux_hidden_coef:
            stats["aux_loss"] = []
        for _ in range(self.cfg.update_epochs):
            for idx in self.minibatches(ro.size, rng):
                logp, entropy, states = self.log_probs(ro, idx)
                ratio = torch.exp(logp - self.t(ro.logp[idx]))
                a = self.t(adv_n[idx])
                surrogate = torch.min(ratio * a, torch.clamp(ratio, 1 - self.cfg.clip, 1 + self.cfg.clip) * a)
                policy_loss = -surrogate.mean()
                value = self.net.value(states, self.oracle_input(ro, idx))
                value_loss = torch.mean((value - self.t(returns[idx])) ** 2)
                loss = policy_loss + self.cfg.vf_coef * value_loss - self.cfg.ent_coef * entropy.mean()
                aux = self.aux_loss(ro, idx, states)
                if aux is not None:
                    loss = loss + self.cfg.aux_hidden_coef * aux
                    stats["aux_loss"].append(float(aux.detach()))
                self._step(loss)
                with torch.no_grad():
                    stats["policy_loss"].append(float(policy_loss))
                    stats["value_loss"].append(float(value_loss))
                    stats["entropy"].append(float(entropy.mean()))
                    stats["approx_kl"].append(float(torch.mean((ratio - 1) - torch.log(ratio))))
                    clipped = (torch.abs(ratio - 1) > self.cfg.clip).float()
                    stats["clip_frac"].append(float(clipped.mean()))
                    stats["ratio_mean"].append(float(ratio.mean()))
        return {k: float(np.mean(v)) for k, v in stats.items()}
