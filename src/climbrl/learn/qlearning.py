"""Deep Q-learning as in the study: a target network synced every 1000 updates, constant
epsilon-greedy (0.1) behaviour, off-policy uniform replay (the shared replay core)."""

from __future__ import annotations

from climbrl.learn.replay_learner import ReplayLearner


class QLearning(ReplayLearner):
    algo = "qlearning"
