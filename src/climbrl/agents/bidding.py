"""A separate bidding model for auction games (the practice guide's 叫地主模型 / 出牌模型 split).

:class:`BiddingAgent` ``(play, bidder)`` is one seat's agent that sends every auction decision
(observation phase ``bid``) to ``bidder`` and every other decision to ``play``, each as one
batched call with the decisions' own seat random streams, so a match, a tournament or the
self-play runner treat it as any agent. After each batch :attr:`BiddingAgent.routed` holds
which decisions went where, and :func:`routed` walks a runner step down to the agents that
actually decided (the self-play collectors record their own agent's part through it).

:class:`RuleBidder`: the heuristic's documented hand-strength bid
(:func:`climbrl.agents.doudizhu_rules.hand_strength`, :func:`~climbrl.agents.doudizhu_rules.bid_action`
with the heuristic's thresholds).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from climbrl.agents.base import Agent, Decision
from climbrl.agents.doudizhu_rules import THRESHOLDS, bid_action, hand_strength


def is_bid(d: Decision) -> bool:
    return getattr(d.observation, "phase", "play") == "bid"


class BiddingAgent(Agent):
    def __init__(self, play: Agent, bidder: Agent, name: str | None = None) -> None:
        self.play = play
        self.bidder = bidder
        self.name = name or f"{play.name}+{bidder.name}"
        self.games = play.games
        self.routed: list[tuple[Agent, list[int]]] = []

    def act_batch(self, decisions: Sequence[Decision], rngs: Sequence[random.Random]) -> list[int]:
        bids = [i for i, d in enumerate(decisions) if is_bid(d)]
        plays = [i for i, d in enumerate(decisions) if not is_bid(d)]
        picks = [0] * len(decisions)
        self.routed = []
        for agent, idx in ((self.bidder, bids), (self.play, plays)):
            if idx:
                out = agent.act_batch([decisions[i] for i in idx], [rngs[i] for i in idx])
                for i, k in zip(idx, out, strict=True):
                    picks[i] = k
                self.routed.append((agent, idx))
        return picks

    def act(self, decision: Decision, rng: random.Random) -> int:
        return self.act_batch([decision], [rng])[0]

    def __getattr__(self, name: str):
        """Anything else is the play agent's (a trained policy's ``net``, ``encoder``, ``mode``...),
        so the tools that look inside a policy agent read its play network."""
        if name in ("play", "bidder", "routed") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.play, name)


def routed(agent: Agent, gis: list[int], decisions: list[Decision],
           picks: list[int]) -> Iterator[tuple[Agent, list[int], list[Decision], list[int]]]:
    """The runner step ``(agent, gis, decisions, picks)`` as the steps of the agents that made
    them: a :class:`BiddingAgent`'s parts (recursively), any other agent as it is."""
    parts = getattr(agent, "routed", None)
    if not isinstance(agent, BiddingAgent) or parts is None:
        yield agent, gis, decisions, picks
        return
    for sub, idx in parts:
        yield from routed(sub, [gis[i] for i in idx], [decisions[i] for i in idx], [picks[i] for i in idx])


class RuleBidder(Agent):
    """The heuristic's bid from hand strength ``S`` (draws one number per decision from the
    seat's stream, as the rule agents do every turn, and ignores it)."""

    name = "rule-bid"
    games = ("doudizhu",)

    def act(self, decision: Decision, rng: random.Random) -> int:
        rng.random()
        a = bid_action(hand_strength(decision.hand), decision.moves, THRESHOLDS["heuristic"])
        return decision.moves.index(a)


__all__ = ["BiddingAgent", "RuleBidder", "routed", "is_bid"]
