"""A network as an agent: scores every legal move of a batch of decisions in one forward pass.

Modes: ``sample`` (softmax over the legal moves' scores), ``greedy`` (argmax) and ``epsilon``
(a uniform legal move with probability ``epsilon``, else the argmax). Random draws come from
each seat's ``random.Random``, so games are reproducible. The forward pass runs on the network's
device (the learner's ``device``); the choices are made on the CPU. With ``record`` set, the last batch's
encodings, choices and log-probabilities stay in :attr:`last` for the self-play collector.
The agent plays the game of its encoder (:attr:`Agent.games`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from climbrl.agents.base import Agent, Decision
from climbrl.encoders import Encoder
from climbrl.learn.network import Net
from climbrl.learn.precision import acting_net, as_input

MODES = ("sample", "greedy", "epsilon")
POLICY_LEARNERS = ("ppo", "imitation")
"""Learners whose network scores are policy logits (the others learn Q-values)."""


class PolicyAgent(Agent):
    """``scores_are_logits``: the network was trained as a policy (PPO), so the softmax of its
    scores is its move distribution; a value learner's scores are Q-values, whose softmax is not
    (the interpretability window and play hints then show its greedy choice)."""

    def __init__(self, net: Net, encoder: Encoder, mode: str = "greedy", epsilon: float = 0.0,
                 name: str = "policy", record: bool = False, scores_are_logits: bool = True,
                 teacher: Agent | None = None, teacher_share: float = 0.0, acting: str = "fp32") -> None:
        """``teacher``, ``teacher_share``: in ``epsilon`` mode, a decision that does not explore is
        played by ``teacher`` with probability ``teacher_share`` (a second draw from the seat's
        stream, made only when a teacher is set), else by the argmax (the value learners'
        ``teacher`` option); the recorded encodings are the same whoever chose. ``acting``:
        ``fp32``, or ``bf16`` to score with a bfloat16 copy of ``net`` taken now
        (:mod:`climbrl.learn.precision`; the scores still come back as float32)."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if teacher is not None and mode != "epsilon":
            raise ValueError(f"a teacher shares the decisions of an epsilon-greedy policy, not of mode {mode!r}")
        self.acting = acting
        self.net = net
        self.encoder = encoder
        self.games = (encoder.game,)
        self.mode = mode
        self.epsilon = epsilon
        self.name = name
        self.record = record
        self.scores_are_logits = scores_are_logits
        self.teacher = teacher
        self.teacher_share = teacher_share
        self.last: dict[str, Any] | None = None

    @property
    def net(self) -> Net:
        """The policy's network (fp32: the learner's own)."""
        return self._net

    @net.setter
    def net(self, net: Net) -> None:
        self._net = net
        self.scorer = acting_net(net, self.acting)
        """The network that scores the moves: ``net``, or its bfloat16 copy taken when it was set."""

    def encoded_scores(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(scores, offsets, states, moves)``: the network's score of every legal move of every
        decision (decision ``b``'s moves are ``scores[offsets[b]:offsets[b + 1]]``, in the order
        of ``decision.moves``) and the encoded batch."""
        states, moves, offsets = self.encoder.encode(decisions)
        counts = np.diff(offsets)
        net = self.scorer
        device = next(net.parameters()).device
        seg = torch.from_numpy(np.repeat(np.arange(len(decisions)), counts)).to(device)
        with torch.no_grad():
            scores = net(as_input(torch.from_numpy(states).to(device), net),
                         as_input(torch.from_numpy(moves).to(device), net), seg).cpu().numpy()
        return scores, offsets, states, moves

    def move_scores(self, decision: Decision) -> np.ndarray:
        """The network's score of each legal move of one decision (higher: preferred); a rollout
        search ranks its candidate moves by them (``search:checkpoint:PATH``)."""
        return self.encoded_scores([decision])[0].astype(np.float64)

    def act_batch(self, decisions: Sequence[Decision], rngs: Sequence[random.Random]) -> list[int]:
        if not decisions:
            return []
        scores, offsets, states, moves = self.encoded_scores(decisions)
        picks = []
        taught: list[int] = []  # decisions the teacher plays
        logps = np.zeros(len(decisions), dtype=np.float32)
        for b, rng in enumerate(rngs):
            lo, hi = offsets[b], offsets[b + 1]
            row = scores[lo:hi].astype(np.float64)
            u = rng.random()  # one draw per decision in every mode keeps the streams aligned
            if self.mode == "sample":
                p = np.exp(row - row.max())
                p /= p.sum()
                k = min(int(np.searchsorted(np.cumsum(p), u, side="right")), len(row) - 1)
                logps[b] = np.log(max(p[k], 1e-30))
            elif self.mode == "epsilon" and u < self.epsilon:
                k = rng.randrange(len(row))
            elif self.teacher is not None and rng.random() < self.teacher_share:
                k = -1
                taught.append(b)
            else:
                k = int(np.argmax(row))
            picks.append(k)
        if taught:
            assert self.teacher is not None
            for b, k in zip(taught, self.teacher.act_batch([decisions[b] for b in taught], [rngs[b] for b in taught]),
                            strict=True):
                picks[b] = k
        if self.record:
            self.last = {"states": states, "moves": moves, "offsets": offsets,
                         "picks": np.array(picks, dtype=np.int64), "logp": logps}
        return picks

    def act(self, decision: Decision, rng: random.Random) -> int:
        return self.act_batch([decision], [rng])[0]


def load_policy_agent(path: str | Path, mode: str = "greedy", game: str | None = None) -> Agent:
    """A trained checkpoint as an agent (``checkpoint:PATH`` in :func:`climbrl.learn.specs.make_agent`).

    ``game``: the game it is meant to play (a name, with or without ``:preset``); a checkpoint
    trained for another game raises :class:`~climbrl.learn.checkpoint.CheckpointError` naming both.
    A policy trained with a separate bid model (``bidding`` rule or learned) comes back as a
    :class:`~climbrl.agents.bidding.BiddingAgent` that bids with it (its other attributes are
    the play policy's); any other is a :class:`PolicyAgent`.
    """
    from climbrl.learn.bidding import with_recorded_bidder
    from climbrl.learn.checkpoint import CheckpointError, load_network

    net, meta, encoder = load_network(path, game=game)
    agent = PolicyAgent(net.eval(), encoder, mode=mode, name=f"checkpoint:{Path(path).name}",
                        scores_are_logits=meta.get("algo") in POLICY_LEARNERS)
    try:
        return with_recorded_bidder(agent, meta, encoder.game)
    except (KeyError, RuntimeError, TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: bad bid model: {type(e).__name__}: {e}") from None
