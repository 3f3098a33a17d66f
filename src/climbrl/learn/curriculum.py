"""Who the learner plays against.

``self_play``
    current-policy self-play: every seat is the learner (the study's default); every
    seat's decisions are training data.
``checkpoint_self_play``
    one learner seat per game (rotating), the others frozen snapshots of the learner
    sampled per game (a snapshot every ``snapshot_every`` games; the newest ``pool_size`` kept).
``fixed_opponents``
    one learner seat per game (rotating), the others sampled per game from ``fixed_opponents``.
``opponent_pool``
    the practice guide's pool: snapshots every ``snapshot_every`` games, at most ``pool_size``
    (oldest evicted), with the rule agents ``pool_rule_agents`` mixed in; opponents sampled per
    game and seat (``pool_weighting: uniform``), or a league (``pfsp``: prioritised fictitious
    self-play, Vinyals et al. 2019): one opponent per game in every other seat, drawn with weight
    ``(1 - p)^pfsp_power`` where ``p`` is the learner's recent win rate against it
    (:class:`WinRates`, counted from the games it played), so past selves and rule agents that
    still beat the learner are met most and those it has mastered rarely.
A frozen snapshot plays the learner's behaviour policy as it was when the snapshot was taken:
PPO's samples from its softmax (its scores are policy logits); a value learner's (mcq, sarsa,
qlearning, dqn) plays epsilon-greedy on its Q-values with the learner's epsilon at that moment
(DQN's decaying one included), since the softmax of Q-values is no policy any of them follows.
A snapshot plays without the learner's ``teacher`` (its network alone).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from climbrl.agents import Agent
from climbrl.config import TrainConfig
from climbrl.learn.checkpoint import CheckpointError
from climbrl.learn.learner import Learner
from climbrl.learn.network import Net
from climbrl.learn.policy import POLICY_LEARNERS, PolicyAgent
from climbrl.learn.specs import make_agent


class WinRates:
    """The learner's recent win rate against each opponent, by the opponent's name: wins and games,
    both multiplied by :data:`DECAY` after every epoch, so old games fade; ``p = (wins + 1) /
    (games + 2)`` (0.5 before any game: a new snapshot is met as often as an even opponent)."""

    DECAY = 0.8

    def __init__(self) -> None:
        self.wins: dict[str, float] = {}
        self.games: dict[str, float] = {}

    def rate(self, name: str) -> float:
        return (self.wins.get(name, 0.0) + 1.0) / (self.games.get(name, 0.0) + 2.0)

    def record(self, names: list[str], won: np.ndarray) -> None:
        """One epoch's games: ``names[g]`` the opponent of game ``g``, ``won[g]`` whether the learner won."""
        for k in self.games:
            self.games[k] *= self.DECAY
            self.wins[k] *= self.DECAY
        for name, w in zip(names, won, strict=True):
            self.games[name] = self.games.get(name, 0.0) + 1.0
            self.wins[name] = self.wins.get(name, 0.0) + float(w)

    def forget(self, keep: set[str]) -> None:
        """Drop the opponents no longer in the pool (evicted snapshots)."""
        for d in (self.wins, self.games):
            for k in [k for k in d if k not in keep]:
                del d[k]

    def state_dict(self) -> dict[str, Any]:
        return {"wins": dict(self.wins), "games": dict(self.games)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.wins = {str(k): float(v) for k, v in state.get("wins", {}).items()}
        self.games = {str(k): float(v) for k, v in state.get("games", {}).items()}


class Curriculum:
    def __init__(self, cfg: TrainConfig, learner: Learner, num_players: int = 4) -> None:
        self.cfg = cfg
        self.kind = cfg.curriculum
        self.num_players = num_players
        self.encoder = learner.encoder
        self.snapshots: list[PolicyAgent] = []
        self.games_seen = 0
        self.next_snapshot = 0
        game = cfg.game_name
        self.rule_agents = [make_agent(a, game) for a in cfg.pool_rule_agents] if self.kind == "opponent_pool" else []
        self.fixed = [make_agent(a, game) for a in cfg.fixed_opponents] if self.kind == "fixed_opponents" else []
        self.mode = learner.behaviour_mode
        self.pfsp = self.kind == "opponent_pool" and cfg.pool_weighting == "pfsp"
        self.win_rates = WinRates()
        self.drawn: list[str] | None = None
        """The opponent of each game of the last :meth:`seatings` (``pfsp`` only), for :meth:`record`."""
        if self.kind in ("checkpoint_self_play", "opponent_pool"):
            self._snapshot(learner)

    def _frozen(self, net: Net, epsilon: float, name: str) -> PolicyAgent:
        return PolicyAgent(net.eval(), self.encoder, mode=self.mode, epsilon=epsilon, name=name,
                           scores_are_logits=self.cfg.algo in POLICY_LEARNERS)

    def _snapshot(self, learner: Learner) -> None:
        self.snapshots.append(self._frozen(copy.deepcopy(learner.net), learner.epsilon(),
                                           f"snapshot@{self.games_seen}"))
        self.snapshots = self.snapshots[-self.cfg.pool_size:]
        self.win_rates.forget({a.name for a in self.snapshots + self.rule_agents})
        self.next_snapshot = self.games_seen + self.cfg.snapshot_every

    def seatings(self, n_games: int, learner_agent: Agent, rng: np.random.Generator) -> list[list[Agent]]:
        n = self.num_players
        if self.kind == "self_play":
            return [[learner_agent] * n for _ in range(n_games)]
        pool: list[Agent]
        if self.kind == "fixed_opponents":
            pool = self.fixed
        elif self.kind == "checkpoint_self_play":
            pool = list(self.snapshots)
        else:
            pool = list(self.snapshots) + self.rule_agents
        if self.pfsp:
            return self._league(n_games, learner_agent, pool, rng)
        out = []
        for g in range(n_games):
            seat = g % n
            seating = [pool[int(rng.integers(len(pool)))] for _ in range(n)]
            seating[seat] = learner_agent
            out.append(seating)
        return out

    def _league(self, n_games: int, learner_agent: Agent, pool: list[Agent],
                rng: np.random.Generator) -> list[list[Agent]]:
        """``pfsp``: one opponent per game, drawn by weight ``(1 - p)^pfsp_power``, in every seat
        but the learner's (which rotates with the game)."""
        weights = np.array([(1.0 - self.win_rates.rate(a.name)) ** self.cfg.pfsp_power for a in pool])
        weights /= weights.sum()
        picks = rng.choice(len(pool), size=n_games, p=weights)
        self.drawn = [pool[int(i)].name for i in picks]
        out = []
        for g, i in enumerate(picks):
            seating = [pool[int(i)]] * self.num_players
            seating[g % self.num_players] = learner_agent
            out.append(seating)
        return out

    def record(self, drawn: list[str] | None, outcomes: np.ndarray | None) -> None:
        """Count the learner's wins (``outcomes`` > 0: its rules' return in each game, in game order)
        against the opponents ``drawn`` for those games (``pfsp``; nothing otherwise). Games in which
        the learner never decided cannot be told apart, so an epoch with any is not counted."""
        if not self.pfsp or drawn is None or outcomes is None or len(outcomes) != len(drawn):
            return
        self.win_rates.record(drawn, outcomes > 0)

    def after_epoch(self, learner: Learner, games: int) -> None:
        self.games_seen += games
        if self.kind in ("checkpoint_self_play", "opponent_pool") and self.games_seen >= self.next_snapshot:
            self._snapshot(learner)

    def state_dict(self) -> dict[str, Any]:
        return {"games_seen": self.games_seen, "next_snapshot": self.next_snapshot,
                "snapshots": [s.net.state_dict() for s in self.snapshots],
                "snapshot_names": [s.name for s in self.snapshots],
                "snapshot_epsilons": [s.epsilon for s in self.snapshots],
                **({"win_rates": self.win_rates.state_dict()} if self.pfsp else {})}

    def load_state_dict(self, state: dict[str, Any], net_template: Net) -> None:
        self.games_seen = int(state["games_seen"])
        self.next_snapshot = int(state["next_snapshot"])
        epsilons = state.get("snapshot_epsilons")
        if epsilons is None:
            if state["snapshots"] and self.mode != "sample":
                raise CheckpointError("the checkpoint's curriculum snapshots predate epsilon-greedy snapshots of value "
                                      "learners (they sampled a softmax of Q-values): start the run over")
            epsilons = [self.cfg.epsilon] * len(state["snapshots"])
        self.win_rates.load_state_dict(state.get("win_rates", {}))
        self.snapshots = []
        for sd, name, eps in zip(state["snapshots"], state["snapshot_names"], epsilons, strict=True):
            net = copy.deepcopy(net_template)
            net.load_state_dict(sd)
            self.snapshots.append(self._frozen(net, float(eps), name))
