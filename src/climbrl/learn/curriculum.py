"""Who the learner plays against.

``self_play``
    current-policy self-play: all four seats are the learner (the study's default); every
    seat's decisions are training data.
``checkpoint_self_play``
    one learner seat per game (rotating), the other three frozen snapshots of the learner
    sampled per game (a snapshot every ``snapshot_every`` games; the newest ``pool_size`` kept).
``fixed_opponents``
    one learner seat per game (rotating), the others sampled per game from ``fixed_opponents``.
``opponent_pool``
    the practice guide's pool: snapshots every ``snapshot_every`` games, at most ``pool_size``
    (oldest evicted), with the rule agents ``pool_rule_agents`` mixed in; opponents sampled per
    game and seat.
Frozen snapshots play by sampling from their softmax.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from climbrl.agents import Agent, make_agent
from climbrl.config import TrainConfig
from climbrl.learn.learner import Learner
from climbrl.learn.network import ActionInNet
from climbrl.learn.policy import PolicyAgent


class Curriculum:
    def __init__(self, cfg: TrainConfig, learner: Learner) -> None:
        self.cfg = cfg
        self.kind = cfg.curriculum
        self.snapshots: list[PolicyAgent] = []
        self.games_seen = 0
        self.next_snapshot = 0
        self.rule_agents = [make_agent(a) for a in cfg.pool_rule_agents]
        self.fixed = [make_agent(a) for a in cfg.fixed_opponents]
        if self.kind in ("checkpoint_self_play", "opponent_pool"):
            self._snapshot(learner.net)

    def _snapshot(self, net: ActionInNet) -> None:
        frozen = copy.deepcopy(net).eval()
        self.snapshots.append(PolicyAgent(frozen, mode="sample", name=f"snapshot@{self.games_seen}"))
        self.snapshots = self.snapshots[-self.cfg.pool_size:]
        self.next_snapshot = self.games_seen + self.cfg.snapshot_every

    def seatings(self, n_games: int, learner_agent: Agent, rng: np.random.Generator) -> list[list[Agent]]:
        if self.kind == "self_play":
            return [[learner_agent] * 4 for _ in range(n_games)]
        pool: list[Agent]
        if self.kind == "fixed_opponents":
            pool = self.fixed
        elif self.kind == "checkpoint_self_play":
            pool = list(self.snapshots)
        else:
            pool = list(self.snapshots) + self.rule_agents
        out = []
        for g in range(n_games):
            seat = g % 4
            seating = [pool[int(rng.integers(len(pool)))] for _ in range(4)]
            seating[seat] = learner_agent
            out.append(seating)
        return out

    def after_epoch(self, learner: Learner, games: int) -> None:
        self.games_seen += games
        if self.kind in ("checkpoint_self_play", "opponent_pool") and self.games_seen >= self.next_snapshot:
            self._snapshot(learner.net)

    def state_dict(self) -> dict[str, Any]:
        return {"games_seen": self.games_seen, "next_snapshot": self.next_snapshot,
                "snapshots": [s.net.state_dict() for s in self.snapshots],
                "snapshot_names": [s.name for s in self.snapshots]}

    def load_state_dict(self, state: dict[str, Any], net_template: ActionInNet) -> None:
        self.games_seen = int(state["games_seen"])
        self.next_snapshot = int(state["next_snapshot"])
        self.snapshots = []
        for sd, name in zip(state["snapshots"], state["snapshot_names"], strict=True):
            net = copy.deepcopy(net_template)
            net.load_state_dict(sd)
            self.snapshots.append(PolicyAgent(net.eval(), mode="sample", name=name))
