"""Monte-Carlo Q: regress Q(s, a) of each move taken on the observed discounted return of the
rest of the game (mean squared error); epsilon-greedy behaviour."""

from __future__ import annotations

import numpy as np

from climbrl.learn.learner import OnPolicyValueLearner
from climbrl.learn.rollout import Rollout


class MCQ(OnPolicyValueLearner):
    algo = "mcq"

    def targets(self, ro: Rollout) -> np.ndarray:
        return ro.discounted_returns(self.cfg.gamma)
