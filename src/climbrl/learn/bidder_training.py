"""A bid model for a fixed play policy: the practice guide's bidding model (叫地主模型) trained
on top of a play model that already exists (issue 26: "a bidding model is also trained on top of
the strongest play model the lab has").

Every seat of every self-play game is the play policy (greedy, frozen) with the bid model being
trained (:class:`~climbrl.learn.bidding.LearnedBidder`, epsilon-greedy over the legal bids). The
bid model is :mod:`climbrl.learn.bidding`'s: a Q-function over the auction ids regressed on the
final return of the game that followed (Monte-Carlo, :class:`~climbrl.learn.bidding.BidLearner`),
here on the bids of all three seats. The play model never changes, so what the bids learn is the
value of taking the landlord's seat at a stake *with this play model*.

Deals: ``deal_seeds(seed + epoch, games, "train")``; seat streams ``seat_seed(seed, epoch,
game, seat)``; the update's minibatch order from ``(seed, 26, epoch)``. Each epoch writes
``checkpoint.pt`` (bid network, optimizer, counters, history), so a killed run continues from
its last finished epoch; a checkpoint of other settings is refused. The result, ``policy.pt``,
is the play policy's file with the bid model added (``bidding: learned``), so
``checkpoint:PATH`` bids with it everywhere (matches, ``climbrl serve``).
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from climbrl.agents.bidding import BiddingAgent
from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.config import TrainConfig
from climbrl.games.registry import make_game
from climbrl.learn.bidding import BidCollector, BidLearner
from climbrl.learn.checkpoint import CheckpointError, load, save_atomic
from climbrl.learn.policy import PolicyAgent, load_policy_agent
from climbrl.threads import single_thread

CHECKPOINT = "checkpoint.pt"
POLICY = "policy.pt"
HISTORY = "history.csv"


@dataclass(frozen=True)
class BidTraining:
    play: str
    """The play policy's file (a ``policy.pt`` of Dou Dizhu)."""
    rules: str = "standard"
    """A Dou Dizhu preset with an auction."""
    epochs: int = 20
    games_per_epoch: int = 2000
    seed: int = 0
    bid_epsilon: float = 0.1
    bid_lr: float = 1e-3
    pool: tuple[str, ...] = ()
    """Rule agents the bidder also meets (the guide's opponent pool): of every ``len(pool) + 1``
    games, one is self-play (every seat the play policy with the bid model) and each other one puts
    the learner in one seat (rotating) against two copies of a pool agent, which bid and play as
    they do. Only the learner's bids are learned from. Empty: self-play only."""

    def check(self) -> None:
        for name in ("epochs", "games_per_epoch"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        # the auction, epsilon and learning rate are checked as a training's are
        self.config()
        from climbrl.learn.specs import make_agent

        for spec in self.pool:
            make_agent(spec, f"doudizhu:{self.rules}")

    def config(self) -> TrainConfig:
        from climbrl.config import train_config

        return train_config(game="doudizhu", rules=self.rules, seed=self.seed, bidding="learned",
                            bid_epsilon=self.bid_epsilon, bid_lr=self.bid_lr)


def _play_agent(path: str | Path, game: str) -> PolicyAgent:
    agent = load_policy_agent(path, mode="greedy", game=game)
    if isinstance(agent, BiddingAgent):  # a play policy that bids with a model of its own: its play part
        agent = agent.play
    return agent


def train_bidder(spec: BidTraining, out: str | Path, on_epoch=None) -> list[dict[str, Any]]:
    """Train (or continue) the bid model into ``out``; returns the history, one row per epoch."""
    spec.check()
    out = Path(out)
    cfg = spec.config()
    name = f"doudizhu:{spec.rules}"
    game = make_game(name)
    play = _play_agent(spec.play, name)
    learner = BidLearner(cfg)
    history: list[dict[str, Any]] = []
    start = 0
    ck = out / CHECKPOINT
    if ck.exists():
        state = load(ck)
        if state.get("bid_training") != _key(spec):
            raise CheckpointError(f"{ck} was trained with other settings ({state.get('bid_training')}); "
                                  "remove the folder to start over")
        learner.load_state_dict(state["learner"])
        history = list(state["history"])
        start = len(history)
    from climbrl.learn.specs import make_agent

    pool = [make_agent(p, name) for p in spec.pool]
    n = game.num_players
    for epoch in range(start, spec.epochs):
        rng = np.random.default_rng([spec.seed, 26, epoch])  # the update's shuffles, per epoch: resumable
        seat = BiddingAgent(play, learner.behaviour())
        seeds = deal_seeds(spec.seed + epoch, spec.games_per_epoch, "train")
        seat_seeds = [[seat_seed(spec.seed, epoch, g, s) for s in range(n)] for g in range(len(seeds))]
        seatings = []
        for g in range(len(seeds)):
            k = g % (len(pool) + 1)
            if k == 0:
                seatings.append([seat] * n)
            else:
                row = [pool[k - 1]] * n
                row[g // (len(pool) + 1) % n] = seat
                seatings.append(row)
        collector = BidCollector(seat.bidder)
        with single_thread():
            states = play_games(game, seatings, seeds, seat_seeds, on_step=collector)
            batch = collector.build(states, lambda st, s: float(st.returns()[s]))
            stats = learner.update(batch, rng)
        landlord = [st.landlord for st in states]
        row = {"epoch": epoch + 1, "games": len(states), "bids": batch.size, **stats,
               "all_pass": float(np.mean([ll < 0 for ll in landlord])),
               "stake": float(np.mean([st.stake for st in states if st.landlord >= 0] or [0.0]))}
        history.append(row)
        save_atomic({"format": "climbrl-checkpoint", "version": 1, "bid_training": _key(spec),
                     "learner": learner.state_dict(), "history": history}, ck)
        if on_epoch:
            on_epoch(row)
    _write_policy(spec, learner, out)
    with (out / HISTORY).open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(history[0]))
        w.writeheader()
        w.writerows(history)
    return history


def _key(spec: BidTraining) -> str:
    """The settings as the checkpoint keeps them (a resumed run must have the same)."""
    return json.dumps(asdict(spec), sort_keys=True)


def _write_policy(spec: BidTraining, learner: BidLearner, out: Path) -> None:
    """The play policy's file with the bid model added."""
    _with_bidder(spec.play, out / POLICY, bidding="learned", bid_net=learner.net.state_dict(),
                 bid_net_config=learner.net.config(), bid_training=asdict(spec))


def write_rule_bidder(play: str | Path, path: str | Path) -> None:
    """The play policy's file bidding with the heuristic's hand-strength rule (``bidding: rule``):
    the control that shows what a learned bid model adds to the same play model."""
    _with_bidder(play, path, bidding="rule")


def _with_bidder(play: str | Path, path: str | Path, **bid: Any) -> None:
    """``play``'s policy file, any bid model it held replaced by ``bid``, written to ``path``."""
    payload = {k: v for k, v in load(play).items() if k not in ("bidding", "bid_net", "bid_net_config")}
    save_atomic({**payload, **bid}, path)
