"""SARSA: the on-policy TD target r + gamma Q(s', a') with the seat's next decision and the
move it actually took there (r alone after its last decision); epsilon-greedy (0.1)."""

from __future__ import annotations

import numpy as np
import torch

from climbrl.learn.learner import OnPolicyValueLearner
from climbrl.learn.rollout import Rollout


class SARSA(OnPolicyValueLearner):
    algo = "sarsa"

    def targets(self, ro: Rollout) -> np.ndarray:
        with torch.no_grad():
            q = self.chosen_q(ro, np.arange(ro.size)).cpu().numpy()
        nxt = ro.next_index()
        next_q = np.where(nxt >= 0, q[np.maximum(nxt, 0)], 0.0)
        return (ro.rewards + self.cfg.gamma * next_q).astype(np.float32)
