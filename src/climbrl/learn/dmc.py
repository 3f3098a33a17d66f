"""Deep Monte-Carlo (DMC), DouZero's learner (Zha et al., 2021): Q(s, a) over the state and each
legal move's features, regressed on the seat's undiscounted return of the episode (Dou Dizhu:
the score with its doublings, by role; Big 2: the preset's reward), mean-squared error,
epsilon-greedy behaviour (0.01), RMSprop at 1e-4 with gradients clipped at norm 40, and in Dou
Dizhu one network per position (``role_networks``). Each decision is learned from once, in the
epoch after the games that made it, as DouZero's learner consumes its actors' batches.

It is Monte-Carlo Q (:class:`climbrl.learn.mcq.MCQ`) with DouZero's target and settings
(:data:`climbrl.config.ALGO_DEFAULTS`); the actors, the network, the checkpoints and the
evaluation are the shared ones."""

from __future__ import annotations

import numpy as np

from climbrl.learn.mcq import MCQ
from climbrl.learn.rollout import Rollout


class DMC(MCQ):
    algo = "dmc"

    def targets(self, ro: Rollout) -> np.ndarray:
        return ro.discounted_returns(1.0)  # the episode's return, undiscounted (config refuses gamma != 1)
