"""The DQN family of the Dou Dizhu practice guide: Double DQN, dueling head, prioritized replay,
gamma 0.99, learning rate 1e-4, epsilon falling linearly from 1.0 to 0.05 over
``epsilon_decay_steps`` decisions, hard syncs every ``target_sync`` updates or soft updates
(``tau``), prioritized replay's beta annealed from ``priority_beta`` to 1 over the run. Every
switch is a config field (``double``, ``dueling``, ``prioritized``, ``tau``,
``target_sync_unit``)."""

from __future__ import annotations

from climbrl.learn.replay_learner import ReplayLearner


class DQN(ReplayLearner):
    algo = "dqn"

    def epsilon(self) -> float:
        c = self.cfg
        frac = min(1.0, self.decisions_seen / c.epsilon_decay_steps)
        return c.epsilon_start + (c.epsilon_end - c.epsilon_start) * frac
