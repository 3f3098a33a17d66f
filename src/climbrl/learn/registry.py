"""Learners by name."""

from __future__ import annotations

from climbrl.config import TrainConfig
from climbrl.encoders import Encoder
from climbrl.learn.learner import Learner


def make_learner(cfg: TrainConfig, encoder: Encoder | None = None) -> Learner:
    """The learner ``cfg.algo`` over ``encoder`` (default: the encoder of ``cfg.game``)."""
    from climbrl.learn.dmc import DMC
    from climbrl.learn.dqn import DQN
    from climbrl.learn.mcq import MCQ
    from climbrl.learn.ppo import PPO
    from climbrl.learn.qlearning import QLearning
    from climbrl.learn.sarsa import SARSA

    learners = {"ppo": PPO, "mcq": MCQ, "sarsa": SARSA, "qlearning": QLearning, "dqn": DQN, "dmc": DMC}
    return learners[cfg.algo](cfg, encoder)
