"""The separate bid model (``bidding=learned``) and how training routes auction decisions.

With ``bidding`` ``rule`` or ``learned`` (rules with an auction only, see
:class:`~climbrl.config.TrainConfig`), the learner's seats are
:class:`~climbrl.agents.bidding.BiddingAgent` (play policy, bidder): the play network never
sees an auction decision, so none enters the play learner's rollout.

``learned``: :class:`BidNet`, a small MLP on the game's bid features
(:class:`~climbrl.encoders.doudizhu_bid.DdzBidEncoder`: hand, auction so far, stake, the hand's
plays) with one output per auction id, is a Q-function
over the bids. :class:`LearnedBidder` plays it: the best legal bid, or while training a uniform
legal one with probability ``bid_epsilon`` (one draw per decision from the seat's stream, like
:class:`~climbrl.learn.policy.PolicyAgent`). :class:`BidLearner` regresses Q(s, a) of every
bid the learner's seats made in the epoch on the final return of the game that followed
(Monte-Carlo; the same final reward as the play learner: the rules' return, or the card score
with ``card_score_reward``) with its own Adam optimizer, :data:`BID_PASSES` passes of
minibatches of :data:`BID_MINIBATCH`. Its buffer is the epoch's bids (on-policy, like ``mcq``).
Frozen snapshots of the curriculum bid with the current bid network, greedily.

``rule``: the heuristic's hand-strength bid (:class:`~climbrl.agents.bidding.RuleBidder`).

The bid model lives in the training checkpoint (``bidder``: net, optimizer, counters) and in
``policy.pt`` (``bidding`` and ``bid_net``), so a ``checkpoint:PATH`` agent bids as it was trained.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from climbrl.agents.base import Agent, Decision
from climbrl.agents.bidding import BiddingAgent, RuleBidder, routed
from climbrl.config import TrainConfig
from climbrl.encoders.registry import make_bid_encoder
from climbrl.learn.network import linear
from climbrl.learn.trainable import TrainableState

BID_HIDDEN = 128
BID_PASSES = 4
BID_MINIBATCH = 256


class BidNet(nn.Module):
    """``in_dim`` bid features -> hidden -> hidden -> one Q-value per auction id."""

    def __init__(self, in_dim: int, n_out: int, hidden: int = BID_HIDDEN,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.in_dim, self.n_out, self.hidden = in_dim, n_out, hidden
        self.body = nn.Sequential(linear(in_dim, hidden, generator), nn.ReLU(),
                                  linear(hidden, hidden, generator), nn.ReLU(),
                                  linear(hidden, n_out, generator))

    def config(self) -> dict[str, int]:
        return {"in_dim": self.in_dim, "n_out": self.n_out, "hidden": self.hidden}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class LearnedBidder(Agent):
    """A :class:`BidNet` as an auction agent (``record``: keep the last batch for training)."""

    def __init__(self, net: BidNet, game: str = "doudizhu", epsilon: float = 0.0, name: str = "learned-bid",
                 record: bool = False) -> None:
        self.net = net
        self.encoder = make_bid_encoder(game)
        self.games = (self.encoder.game,)
        self.epsilon = epsilon
        self.name = name
        self.record = record
        self.last: dict[str, np.ndarray] | None = None

    def act_batch(self, decisions: Sequence[Decision], rngs: Sequence[random.Random]) -> list[int]:
        if not decisions:
            return []
        x = self.encoder.features(decisions)
        with torch.no_grad():
            q = self.net(torch.from_numpy(x)).numpy()
        picks = []
        for b, (d, rng) in enumerate(zip(decisions, rngs, strict=True)):
            u = rng.random()  # one draw per decision keeps the seat's stream aligned
            k = rng.randrange(len(d.moves)) if u < self.epsilon else int(np.argmax(q[b, d.moves]))
            picks.append(k)
        if self.record:
            self.last = {"x": x, "mask": self.encoder.legal_mask(decisions),
                         "action": np.array([d.moves[k] for d, k in zip(decisions, picks, strict=True)])}
        return picks

    def act(self, decision: Decision, rng: random.Random) -> int:
        return self.act_batch([decision], [rng])[0]


@dataclass
class BidBatch:
    """The learner's bids of an epoch, ordered by game and seat: features, the auction id
    chosen, the legal ids, the final return of the game for the bidding seat."""

    x: np.ndarray  # [N, BID_DIM]
    action: np.ndarray  # [N]
    mask: np.ndarray  # [N, 6]
    ret: np.ndarray  # [N]

    @property
    def size(self) -> int:
        return len(self.action)


class BidCollector:
    """Records the decisions of one :class:`LearnedBidder` during a lockstep run (an ``on_step``)."""

    def __init__(self, bidder: LearnedBidder) -> None:
        self.bidder = bidder
        self.shape = (bidder.encoder.dim, bidder.encoder.n_actions)
        self.rows: list[tuple[int, int, int, int]] = []  # (game, seat, chunk, row)
        self.chunks: list[dict[str, np.ndarray]] = []

    def __call__(self, agent: Agent, gis: list[int], decisions: list[Decision], picks: list[int]) -> None:
        for sub, g2, d2, _ in routed(agent, gis, decisions, picks):
            if sub is not self.bidder:
                continue
            assert sub.last is not None
            c = len(self.chunks)
            self.chunks.append(sub.last)
            self.rows += [(g, d.seat, c, b) for b, (g, d) in enumerate(zip(g2, d2, strict=True))]

    def build(self, final_states: list, final: Callable[[Any, int], float]) -> BidBatch:
        """``final(state, seat)``: the seat's final reward of a finished game."""
        rows = sorted(self.rows)  # stable: a seat's bids stay in time order
        if not rows:
            return BidBatch(np.zeros((0, self.shape[0]), np.float32), np.zeros(0, np.int64),
                            np.zeros((0, self.shape[1]), bool), np.zeros(0, np.float32))
        return BidBatch(
            x=np.stack([self.chunks[c]["x"][b] for _, _, c, b in rows]),
            action=np.array([self.chunks[c]["action"][b] for _, _, c, b in rows], dtype=np.int64),
            mask=np.stack([self.chunks[c]["mask"][b] for _, _, c, b in rows]),
            ret=np.array([final(final_states[g], s) for g, s, _, _ in rows], dtype=np.float32),
        )


def bid_seed(seed: int) -> int:
    """The seed of the bid network's initial weights (a stream apart from the play network's)."""
    return int(np.random.SeedSequence([seed, 31]).generate_state(1)[0])


class BidLearner(TrainableState):
    """The bid network, its optimizer and its Monte-Carlo update (module docstring)."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.cfg = cfg
        enc = make_bid_encoder(cfg.game)
        self.net = BidNet(enc.dim, enc.n_actions, generator=torch.Generator().manual_seed(bid_seed(cfg.seed)))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.bid_lr)
        self.updates = 0
        self.decisions_seen = 0

    def behaviour(self) -> LearnedBidder:
        return LearnedBidder(self.net, self.cfg.game, epsilon=self.cfg.bid_epsilon, name="bid-learner",
                             record=True)

    def greedy(self) -> LearnedBidder:
        return LearnedBidder(self.net, self.cfg.game)

    def update(self, batch: BidBatch, rng: np.random.Generator) -> dict[str, float]:
        self.decisions_seen += batch.size
        if batch.size == 0:
            return {}
        x, a, ret = (torch.from_numpy(v) for v in (batch.x, batch.action, batch.ret))
        losses = []
        for _ in range(BID_PASSES):
            order = rng.permutation(batch.size)
            for i in range(0, batch.size, BID_MINIBATCH):
                idx = torch.from_numpy(order[i:i + BID_MINIBATCH])
                q = self.net(x[idx]).gather(1, a[idx, None])[:, 0]
                loss = torch.mean((q - ret[idx]) ** 2)
                self._step(loss)
                losses.append(float(loss.detach()))
        return {"loss": float(np.mean(losses)), "rate": float(np.mean(batch.action != 0)),
                "return_mean": float(np.mean(batch.ret))}


class BidRouting:
    """What one training run does with the auction (``cfg.bidding``): nothing for ``policy``."""

    def __init__(self, cfg: TrainConfig) -> None:
        self.kind = cfg.bidding
        self.learner = BidLearner(cfg) if self.kind == "learned" else None

    @property
    def active(self) -> bool:
        return self.kind != "policy"

    def seatings(self, seatings: list[list[Agent]], behaviour: Agent,
                 frozen: Sequence[Agent] = ()) -> tuple[list[list[Agent]], BidCollector | None]:
        """The seatings with the learner's seats (``behaviour``) and the curriculum's frozen
        policies (``frozen``) wrapped in a :class:`BiddingAgent`, and the collector of the
        learner's bids (``learned``)."""
        if not self.active:
            return seatings, None
        bidder: Agent = self.learner.behaviour() if self.learner else RuleBidder()
        frozen_bidder: Agent = self.learner.greedy() if self.learner else bidder
        wrapped: dict[int, Agent] = {id(a): BiddingAgent(a, frozen_bidder) for a in frozen}
        wrapped[id(behaviour)] = BiddingAgent(behaviour, bidder)
        out = [[wrapped.get(id(a), a) for a in s] for s in seatings]
        return out, BidCollector(bidder) if self.learner else None

    def payload(self) -> dict[str, Any]:
        """What ``policy.pt`` holds of the bid model (nothing for ``policy``)."""
        if not self.active:
            return {}
        out: dict[str, Any] = {"bidding": self.kind}
        if self.learner:
            out["bid_net"] = self.learner.net.state_dict()
            out["bid_net_config"] = self.learner.net.config()
        return out


def with_recorded_bidder(agent: Agent, meta: dict[str, Any], game: str = "doudizhu") -> Agent:
    """``agent`` with the bid model a policy file records (``bidding``; unchanged without one)."""
    kind = meta.get("bidding", "policy")
    if kind == "policy":
        return agent
    if kind == "rule":
        return BiddingAgent(agent, RuleBidder(), name=agent.name)
    if kind == "learned":
        net = BidNet(**meta["bid_net_config"], generator=torch.Generator())
        net.load_state_dict(meta["bid_net"])
        return BiddingAgent(agent, LearnedBidder(net.eval(), game), name=agent.name)
    raise ValueError(f"unknown bidding {kind!r} in the policy file")
