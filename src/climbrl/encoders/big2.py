"""Big 2's encoder: the state and move vectors of every Big 2 learner (compiled with numba).

State vector (``STATE_DIM`` = 558, float32); seats are relative to the acting seat: 0 itself,
1 the next to act after it, 2 across, 3 the one before it.

=========  ==================================================================================
index      meaning
=========  ==================================================================================
0-51       own hand (52-bit card mask, card id = rank * 4 + suit)
52-103     the play to beat (zeros when leading)
104-114    its type, one-hot over the engine's 11 types (index 0 = pass/leading)
115        its deciding strength / 17 (see ``agents.hand_structure``; 0 when leading)
116-119    relative seat that made it (one-hot; zeros when leading)
120-122    passes since it was played: 0, 1, 2 (one-hot)
123-330    cards played so far, 52 per relative seat (the public action history)
331-538    the current trick: each relative seat's last play in it, 52 per seat
539-542    relative seats that passed since the trick's last play
543-546    cards left per relative seat / 13 (public in Big 2, so no estimate is needed)
547-550    relative seats still holding cards
551        own pairs / 6          552  own triples / 4        553  own four of a kinds / 3
554        own suits with five or more cards (flushes available) / 2
555        own 5-card straight windows fully present (straight potential) / 9
556        own dead cards (in no combination) / 13
557        1 if the acting seat leads
=========  ==================================================================================

Move vector (``MOVE_DIM`` = 72, float32):

=========  ==================================================================================
0-51       the cards played (mask)
52-62      combination type, one-hot over the 11 types (52 = pass)
63         number of cards / 13
64         deciding strength / 17 (strength rank of the combination)
65         cards left in hand after the move / 13
66         breaks a pair or triple          67  breaks a five-card structure
68         1 for pass
69-71      the hand left after the move: pairs / 6, five-card structures / 9, dead cards / 13
=========  ==================================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit

from climbrl.agents.base import Decision
from climbrl.agents.hand_structure import SUIT_MASK, breaks, deciding_strength, hand_structure
from climbrl.encoders.base import RecordedEncoder
from climbrl.games.big2.combos import _CACHE, _popcount
from climbrl.games.big2.state import hands_at

STATE_DIM = 558
MOVE_DIM = 72
N_TYPES = 11


@njit(cache=_CACHE)
def _bits(mask, out, row, offset):
    for c in range(52):
        if (mask >> c) & 1:
            out[row, offset + c] = 1.0


@njit(cache=_CACHE)
def encode_states(ints, t, out):
    """Fill ``out[b]`` from the packed integers ``ints[b]`` (layout: see :func:`pack_decision`)."""
    for b in range(ints.shape[0]):
        hand = ints[b, 0]
        to_beat = ints[b, 1]
        typ = ints[b, 2]
        power = ints[b, 3]
        rel_beat = ints[b, 4]
        passes = ints[b, 5]
        leading = ints[b, 6]
        _bits(hand, out, b, 0)
        if not leading:
            _bits(to_beat, out, b, 52)
            out[b, 104 + typ] = 1.0
            out[b, 115] = deciding_strength(to_beat, typ, power, t) / 17.0
            out[b, 116 + rel_beat] = 1.0
            out[b, 120 + min(passes, 2)] = 1.0
        else:
            out[b, 104] = 1.0
            out[b, 557] = 1.0
        for r in range(4):
            _bits(ints[b, 7 + r], out, b, 123 + 52 * r)  # played
            _bits(ints[b, 11 + r], out, b, 331 + 52 * r)  # last play in this trick
            out[b, 539 + r] = float(ints[b, 15 + r])  # passed in this trick
            out[b, 543 + r] = ints[b, 19 + r] / 13.0  # cards left
            out[b, 547 + r] = 1.0 if ints[b, 19 + r] > 0 else 0.0
        pairs, fives, dead = hand_structure(hand, t)
        triples = 0
        quads = 0
        suits5 = 0
        for r in range(13):
            k = _popcount((hand >> (4 * r)) & 0xF)
            if k >= 3:
                triples += 1
            if k == 4:
                quads += 1
        for s in range(4):
            if _popcount(hand & (SUIT_MASK << s)) >= 5:
                suits5 += 1
        out[b, 551] = pairs / 6.0
        out[b, 552] = triples / 4.0
        out[b, 553] = quads / 3.0
        out[b, 554] = suits5 / 2.0
        out[b, 555] = max(0, fives - suits5 - quads) / 9.0
        out[b, 556] = dead / 13.0


@njit(cache=_CACHE)
def encode_moves(hands, seg, masks, types, powers, t, out):
    """Fill ``out[i]`` for every legal move ``i`` (``seg[i]`` = its decision's row in ``hands``)."""
    last = -1
    f0 = 0
    for i in range(masks.shape[0]):
        h = hands[seg[i]]
        if seg[i] != last:
            _, f0, _ = hand_structure(h, t)
            last = seg[i]
        m = masks[i]
        typ = types[i]
        out[i, 52 + typ] = 1.0
        pairs, fives, dead = hand_structure(h & ~m, t)
        out[i, 69] = pairs / 6.0
        out[i, 70] = fives / 9.0
        out[i, 71] = dead / 13.0
        if m == 0:
            out[i, 68] = 1.0
            out[i, 65] = _popcount(h) / 13.0
            continue
        _bits(m, out, i, 0)
        n = _popcount(m)
        out[i, 63] = n / 13.0
        out[i, 64] = deciding_strength(m, typ, powers[i], t) / 17.0
        out[i, 65] = (_popcount(h) - n) / 13.0
        pb, fb = breaks(h, m, f0, t)
        out[i, 66] = 1.0 if pb else 0.0
        out[i, 67] = 1.0 if fb else 0.0


N_INTS = 23


def pack_decision(d: Decision, row: np.ndarray) -> None:
    """The integers :func:`encode_states` reads, relative to the acting seat."""
    obs = d.observation
    seat = obs.seat
    row[0] = obs.hand
    row[1] = obs.to_beat
    row[2] = obs.to_beat_type
    row[3] = obs.to_beat_power
    row[4] = (obs.to_beat_player - seat) % 4 if obs.to_beat_player >= 0 else 0
    row[5] = obs.passes
    row[6] = 1 if obs.leading else 0
    last = [0, 0, 0, 0]
    passed = [0, 0, 0, 0]
    for s, m in obs.trick:
        if m:
            last[s] = m
            passed = [0, 0, 0, 0]
        else:
            passed[s] = 1
    for r in range(4):
        s = (seat + r) % 4
        row[7 + r] = obs.played[s]
        row[11 + r] = last[s]
        row[15 + r] = passed[s]
        row[19 + r] = obs.cards_left[s]


def encode_decisions(decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states [B, STATE_DIM], moves [R, MOVE_DIM], offsets [B + 1]) for a batch of decisions.

    The legal moves of decision ``b`` are rows ``offsets[b]:offsets[b + 1]`` in move order.
    """
    b = len(decisions)
    ints = np.zeros((b, N_INTS), dtype=np.int64)
    counts = np.empty(b, dtype=np.int64)
    for i, d in enumerate(decisions):
        pack_decision(d, ints[i])
        counts[i] = len(d.moves)
    offsets = np.zeros(b + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    t = decisions[0].game.tables if b else None
    states = np.zeros((b, STATE_DIM), dtype=np.float32)
    moves = np.zeros((int(offsets[-1]), MOVE_DIM), dtype=np.float32)
    if b:
        encode_states(ints, t, states)
        seg = np.repeat(np.arange(b, dtype=np.int64), counts)
        masks = np.fromiter((m for d in decisions for m in d.moves), dtype=np.int64, count=len(seg))
        types = np.fromiter((x for d in decisions for x in d.types), dtype=np.int64, count=len(seg))
        powers = np.fromiter((x for d in decisions for x in d.powers), dtype=np.int64, count=len(seg))
        encode_moves(ints[:, 0].copy(), seg, masks, types, powers, t, moves)
    return states, moves, offsets


LEAD_BONUS = 0.05
BEATEN_PENALTY = 0.02


class Big2Encoder(RecordedEncoder):
    """Big 2's encoder (version 1 is the study's encoding above; its name and version are what
    checkpoints written before encoders were recorded were trained with).

    Rewards: ``shaping`` gives +0.05 at a decision where the seat leads after winning a trick and
    -0.02 at a decision where its last play in the current trick has been beaten; the card-count
    score is the cards left of every loser collected by the winner (a loser: minus its own), / 13.
    """

    game = "big2"
    name = "big2"
    version = 1
    state_dim = STATE_DIM
    move_dim = MOVE_DIM
    hidden_dim = 3 * 52
    """The hands of the three other seats in turn order after the acting one, 52 card bits each."""

    def encode(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return encode_decisions(decisions)

    def hidden_targets(self, final_state: Any, observation: Any) -> tuple[np.ndarray, bool]:
        """Every decision (:func:`~climbrl.games.big2.state.hands_at`)."""
        hands = hands_at(final_state, observation)
        if hands is None:
            return np.zeros(self.hidden_dim, dtype=np.float32), False
        seat = observation.seat
        masks = np.array([hands[(seat + r) % 4] for r in (1, 2, 3)], dtype=np.uint64)
        return ((masks[:, None] >> np.arange(52, dtype=np.uint64)) & np.uint64(1)).astype(np.float32).ravel(), True

    def shaping(self, decision: Decision) -> float:
        obs = decision.observation
        r = 0.0
        if obs.leading and len(obs.history) > 0:  # it won the last trick
            r += LEAD_BONUS
        own = [i for i, (s, m) in enumerate(obs.trick) if s == obs.seat and m]
        if own and any(m and s != obs.seat for s, m in obs.trick[own[-1] + 1:]):
            r -= BEATEN_PENALTY
        return r

    def card_score(self, state: Any, seat: int) -> float:
        left = state.cards_left()
        return (sum(left) if state.winner == seat else -left[seat]) / 13.0
