"""The public Big 2 agent's observation, action space and network as compiled code.

:class:`~climbrl.agents.external.charlesworth.CharlesworthAgent` plays the network through
torch, one forward pass per batch of decisions, from a :class:`~climbrl.agents.base.Decision`
(its observation built by :func:`encode_active`, as here). A rollout search needs the same
policy thousands of times per decision, from bare arrays inside compiled loops, so this module
holds the pieces in numba:

- :func:`encode_active`: the active entries of the 412-dim observation (it is binary, about 70
  of 412 entries are set), from the quantities a rollout tracks: the hand, every seat's cards
  left, cards played and types played, the play to beat and the passes since it;
- :func:`legal_logits`: the network's logits of the legal moves only. The first layer sums the
  rows of the active entries (no dense product), the second skips the units the ReLU zeroed,
  and the policy layer is evaluated for the legal moves' actions alone (a move's action is
  found from the positions its cards take in the sorted hand, :data:`POS_ACTION`). The value
  head is not needed.

The observation is the public agent's own at every decision of its reference games, and the
logits agree with the torch network's to float32 rounding there and in random games
(``tests/test_charlesworth_compiled.py``, ``tests/test_charlesworth_agent.py``). The action
space (:func:`action_positions`) and the observation's type slots are that agent's.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
from numba import njit

from climbrl.games.big2 import combos
from climbrl.games.big2.combos import _CACHE

OBS_SIZE = 412
N_ACTIONS = 1695
PASS_ACTION = 1694

# prev-hand type slots 18..25. That engine also sets "full house" for a plain straight (in
# the play to beat and in the types a player has played); we reproduce it, since the network
# was trained on it.
_TYPE_SLOT = {
    combos.SINGLE: (0,), combos.PAIR: (1,), combos.TRIPLE: (2,), combos.TWO_PAIR: (3,),
    combos.FOUR_OF_A_KIND: (4,), combos.STRAIGHT: (5, 7), combos.FLUSH: (6,),
    combos.FULL_HOUSE: (7,), combos.STRAIGHT_FLUSH: (5, 6),
}
# types-played slots 21..26: pair, triple, 4-card hand, straight, flush, full house
_PLAYED_SLOT = {
    combos.PAIR: (0,), combos.TRIPLE: (1,), combos.TWO_PAIR: (2,), combos.FOUR_OF_A_KIND: (2,),
    combos.STRAIGHT: (3, 5), combos.FLUSH: (4,), combos.FULL_HOUSE: (5,), combos.STRAIGHT_FLUSH: (3, 4),
}


def action_positions() -> list[tuple[int, ...]]:
    """The 1695 actions as hand positions, in that agent's order (its ``actionIndices.pkl``).

    Hand positions index the hand sorted by card id, so cards of one rank sit at most 3 apart:
    a pair or a triple spans at most 4 positions, a four-card hand is two such pairs, and every
    5 of the 13 positions is an action (lexicographic order in each block).
    """
    n = 13
    near = [(i, j) for i in range(n) for j in range(i + 1, min(i + 4, n))]
    acts: list[tuple[int, ...]] = [(i,) for i in range(n)]
    acts += near
    acts += [(i, j, k) for i in range(n) for j in range(i + 1, n) for k in range(j + 1, min(i + 4, n))]
    acts += [a + b for a in near for b in near if b[0] > a[1]]
    acts += list(combinations(range(n), 5))
    acts.append(())  # pass
    return acts


MAX_ACTIVE = 160
"""Room for the observation's active entries: at most 13 x 7 for the hand, 3 x 15 for the
others, 16 high cards and 5 for the play to beat (157)."""


def _slot_bits(table: dict[int, tuple[int, ...]]) -> np.ndarray:
    out = np.zeros(16, dtype=np.int64)
    for typ, slots in table.items():
        for s in slots:
            out[typ] |= 1 << s
    return out


TYPE_SLOT_BITS = _slot_bits(_TYPE_SLOT)
"""Combination type -> the bits of its slots 18..25 in the play-to-beat block."""
PLAYED_SLOT_BITS = _slot_bits(_PLAYED_SLOT)
"""Combination type -> the bits of its slots 21..26 in an opponent's types-played block."""


def _pos_action() -> np.ndarray:
    out = np.full(1 << 13, -1, dtype=np.int64)
    for i, pos in enumerate(action_positions()):
        key = 0
        for p in pos:
            key |= 1 << p
        if out[key] != -1:
            raise AssertionError(f"two actions play hand positions {pos}")
        out[key] = i
    return out


POS_ACTION = _pos_action()
"""Hand-position mask (bit k: the k-th card of the hand sorted by id) -> action index (-1: none)."""


def compile_weights(weights: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """The policy's arrays in the layout :func:`legal_logits` reads (float32, C order):
    ``(W1 [412, 512], b1, W2 [512, 256], b2, Wpi^T [1695, 256], bpi)``."""
    f = np.float32
    return (np.ascontiguousarray(weights["fc1_w"], dtype=f), np.ascontiguousarray(weights["fc1_b"], dtype=f),
            np.ascontiguousarray(weights["fc2_w"], dtype=f), np.ascontiguousarray(weights["fc2_b"], dtype=f),
            np.ascontiguousarray(weights["pi_w"].T, dtype=f), np.ascontiguousarray(weights["pi_b"], dtype=f))


@njit(cache=_CACHE)
def _deciding(mask, typ):
    """(rank, suit or -1) of the play to beat as that engine shows it: the highest card; a
    straight its middle card's rank, a full house its triple's rank, both without a suit."""
    if typ == combos.FULL_HOUSE:
        best, best_n = 0, 0
        for r in range(13):
            n = 0
            for s in range(4):
                if mask >> (4 * r + s) & 1:
                    n += 1
            if n > best_n:
                best, best_n = r, n
        return best, -1
    if typ == combos.STRAIGHT:
        k = 0
        for c in range(52):
            if mask >> c & 1:
                if k == 2:
                    return c >> 2, -1
                k += 1
    top = 0
    for c in range(52):
        if mask >> c & 1:
            top = c
    return top >> 2, top & 3


@njit(cache=_CACHE)
def encode_active(hand, seat, left, played, types, leading, to_beat, to_beat_type, passes, out):
    """Write the indices of the observation's set entries into ``out`` (int64[MAX_ACTIVE]) and
    return their count. ``left``, ``played``, ``types``: per seat (int64[4]) the cards left, the
    cards played and the bits ``1 << type`` of the types played; the rest as in
    :class:`~climbrl.games.big2.state.Big2Observation` (``passes``: since the play to beat)."""
    n = 0
    rank_count = np.zeros(13, dtype=np.int64)
    suit_count = np.zeros(4, dtype=np.int64)
    for c in range(52):
        if hand >> c & 1:
            rank_count[c >> 2] += 1
            suit_count[c & 3] += 1
    in_run = np.zeros(13, dtype=np.bool_)
    run = 0
    for r in range(13):
        run = run + 1 if rank_count[r] else 0
        if run >= 5:
            for k in range(r - run + 1, r + 1):
                in_run[k] = True
    k = 0
    for c in range(52):
        if not hand >> c & 1:
            continue
        base = 22 * k
        r = c >> 2
        s = c & 3
        out[n] = base + r
        out[n + 1] = base + 13 + s
        n += 2
        if rank_count[r] >= 2:
            out[n] = base + 17
            n += 1
        if rank_count[r] >= 3:
            out[n] = base + 18
            n += 1
        if rank_count[r] == 4:
            out[n] = base + 19
            n += 1
        if in_run[r]:
            out[n] = base + 20
            n += 1
        if suit_count[s] >= 5:
            out[n] = base + 21
            n += 1
        k += 1
    high = played[seat]
    for j in range(3):
        other = (seat + 1 + j) & 3
        base = 286 + 27 * j
        if left[other] > 0:
            out[n] = base + left[other] - 1
            n += 1
        p = played[other]
        high |= p
        for c in range(8):  # ids 44..51: the aces and twos
            if p >> (44 + c) & 1:
                out[n] = base + 13 + c
                n += 1
        bits = 0
        for typ in range(16):
            if types[other] >> typ & 1:
                bits |= PLAYED_SLOT_BITS[typ]
        for sl in range(6):
            if bits >> sl & 1:
                out[n] = base + 21 + sl
                n += 1
    for c in range(16):  # ids 36..51: queens, kings, aces, twos
        if high >> (36 + c) & 1:
            out[n] = 367 + c
            n += 1
    if leading:
        out[n] = 383 + 17
        n += 1
    else:
        rank, suit = _deciding(to_beat, to_beat_type)
        out[n] = 383 + rank
        n += 1
        if suit >= 0:
            out[n] = 383 + 13 + suit
            n += 1
        bits = TYPE_SLOT_BITS[to_beat_type]
        for sl in range(8):
            if bits >> sl & 1:
                out[n] = 383 + 18 + sl
                n += 1
        out[n] = 383 + 26 + min(passes, 2)
        n += 1
    return n


@njit(cache=_CACHE)
def move_action(hand, move):
    """The action index of ``move`` (a card mask, 0: pass) played from ``hand``; -1 when that
    agent's action space has none (a straight of other than five cards cannot occur under its
    rules)."""
    if move == 0:
        return PASS_ACTION
    key = 0
    k = 0
    for c in range(52):
        if hand >> c & 1:
            if move >> c & 1:
                key |= 1 << k
            k += 1
    return POS_ACTION[key]


@njit(cache=_CACHE, fastmath=True)
def legal_logits(w1, b1, w2, b2, wpi_t, bpi, active, n_active, hand, masks, n, out, h1, h2):
    """The network's logits of ``masks[:n]`` (moves from ``hand``) into ``out[:n]``, from the
    observation's active entries ``active[:n_active]``; ``h1`` and ``h2`` are scratch, at least
    as wide as the network's two layers (a rollout with two networks passes the wider's).

    ``fastmath``: the sums may be reassociated for SIMD, so the logits are reproducible on one
    machine kind and agree with torch's to float32 rounding (torch's own kernels also differ in
    the last bits between CPU families)."""
    n1 = b1.shape[0]
    n2 = b2.shape[0]
    if h1.shape[0] < n1 or h2.shape[0] < n2:
        raise ValueError("legal_logits: scratch narrower than the network's layers")
    for j in range(n1):
        h1[j] = b1[j]
    for i in range(n_active):
        row = active[i]
        for j in range(n1):
            h1[j] += w1[row, j]
    for j in range(n2):
        h2[j] = b2[j]
    for i in range(n1):
        x = h1[i]
        if x > 0.0:
            for j in range(n2):
                h2[j] += x * w2[i, j]
    for j in range(n2):
        if h2[j] < 0.0:
            h2[j] = 0.0
    for m in range(n):
        a = move_action(hand, masks[m])
        if a < 0:
            out[m] = -np.inf
            continue
        acc = bpi[a]
        for j in range(n2):
            acc += h2[j] * wpi_t[a, j]
        out[m] = acc


__all__ = ["MAX_ACTIVE", "N_ACTIONS", "OBS_SIZE", "PASS_ACTION", "POS_ACTION", "action_positions", "compile_weights",
           "encode_active", "legal_logits", "move_action"]
