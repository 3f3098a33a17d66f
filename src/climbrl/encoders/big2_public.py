"""Big 2's second encoder, ``big2-charlesworth``: the public agent's observation and action space.

State vector: the 412-dim observation of the public Big 2 agent (Charlesworth 2018; layout in
:mod:`climbrl.agents.external.charlesworth`), built by its compiled encoder. Move vector: one column,
the move's index in that agent's 1695 actions (the positions its cards take in the sorted hand;
1694 = pass). With it a learner trains an :class:`~climbrl.learn.network.ActionHeadNet`, a
network of the public agent's shape with our own weights, which a compiled rollout can play at
a few microseconds per decision (``search:checkpoint:PATH,own=base``).

The action space holds singles, pairs, triples, four-card hands and five-card hands only, so the
encoder plays rule sets whose straights have five cards (``charlesworth``, ``standard``; not
``paper``, whose 3-card straight would look like a triple): other rules, or a move without an
action, are an :class:`EncoderError`. Rewards are
Big 2's (:class:`~climbrl.encoders.big2.Big2Encoder`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from climbrl.agents.base import Decision
from climbrl.agents.external.charlesworth import encode
from climbrl.agents.external.charlesworth_compiled import N_ACTIONS, OBS_SIZE, move_action
from climbrl.cards import format_cards
from climbrl.encoders.base import EncoderError
from climbrl.encoders.big2 import Big2Encoder


class Big2PublicEncoder(Big2Encoder):
    name = "big2-charlesworth"
    version = 1
    state_dim = OBS_SIZE
    move_dim = 1
    n_actions = N_ACTIONS
    hidden_dim = 0  # its network is the public agent's, with no room for issue 46's training signals

    def encode(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        b = len(decisions)
        states = np.zeros((b, OBS_SIZE), dtype=np.float32)
        counts = np.fromiter((len(d.moves) for d in decisions), dtype=np.int64, count=b)
        offsets = np.zeros(b + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        moves = np.zeros((int(offsets[-1]), 1), dtype=np.float32)
        if b and tuple(decisions[0].game.rules.straight_lengths) != (5,):
            raise EncoderError(f"{self.name}: rules {decisions[0].game.rules.name} have straights of "
                               f"{list(decisions[0].game.rules.straight_lengths)} cards; the public agent's "
                               "action space holds 5-card straights only (rules such as charlesworth)")
        for i, d in enumerate(decisions):
            states[i] = encode(d)
            for j, m in enumerate(d.moves):
                a = move_action(d.hand, m)
                if a < 0:
                    raise EncoderError(f"{self.name}: the move {format_cards(m)} has no action in the public "
                                       f"agent's action space (rules {d.game.rules.name}: this encoder plays "
                                       "rule sets whose moves have at most 5 cards, e.g. charlesworth)")
                moves[offsets[i] + j, 0] = a
        return states, moves, offsets
