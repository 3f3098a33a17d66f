"""Dou Dizhu combinations: classification and legal-move generation.

The generator is the engine's hot path, compiled with numba (``cache=True``); with
``NUMBA_DISABLE_JIT=1`` the same functions run as plain Python. It walks the action table's
groups (one group = one type, length and main rank, e.g. every ``333444`` plane with solo
wings): a group is visited only when the hand holds its main cards, and then each allowed
entry whose wings the rest of the hand holds is emitted. Following, only the groups of the
move's class (same type and length) with a higher main rank are visited, then the bombs and
the rocket.

Canonical order of legal moves: ascending action id (pass, id 0, first when offered).

Classification is a table look-up: a card multiset maps to the ids the rules allow for it
(one, none, or under ``trio_wing_adjacent`` up to three planes).
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np
from numba import njit

from climbrl.games.doudizhu.moves import (
    MAIN_COPIES,
    NUM_RANKS,
    TYPE_BOMB,
    TYPE_PAIR_CHAIN,
    TYPE_ROCKET,
    TYPE_SOLO_CHAIN,
    TYPE_TRIO_CHAIN,
    ActionTable,
    action_table,
    allowed_mask,
    parse_counts,
)
from climbrl.games.doudizhu.rules import Rules

_CACHE = os.environ.get("CLIMBRL_NUMBA_CACHE", "1") != "0"
MAX_LEGAL_MOVES = 4096
"""A bound on the legal moves of one decision (the most seen in 600 random reference games
was 330; a 20-card hand could reach a few thousand winged planes only in contrived deals;
the generator raises rather than overflow)."""
MAX_WINGS = 5

# header of the packed table (one int32 array keeps the numba call cheap)
H_N, H_NG, H_NC, H_FLAGS = 0, 1, 2, 3
H_TYPE, H_MAIN, H_GLO, H_GHI, H_GTYPE, H_GLEN, H_GMAIN, H_GCLASS = 4, 5, 6, 7, 8, 9, 10, 11
H_CGROUPS, H_CPTR, H_BOMBS, H_NBOMBS, H_ROCKET, H_WN, H_WR, H_WC, H_ALLOWED, H_GOF, H_COUNTS = range(12, 23)
H_SIZE = 24
F_BOMBS_BEAT_ROCKET = 1
F_SKIP_QUAD_HEAD = 2
F_SORT = 4


@lru_cache(maxsize=64)
def packed_table(rules: Rules) -> np.ndarray:
    """The action table and the rules' allowed moves packed into one read-only int32 array."""
    t: ActionTable = action_table()
    n = t.n_ids
    # per row: the wing ranks held (ascending, at most MAX_WINGS) and their counts, 0-padded
    held = t.wing_counts > 0
    wn = held.sum(axis=1).astype(np.int32)
    wr = np.argsort(~held, axis=1, kind="stable")[:, :MAX_WINGS].astype(np.int32)
    used = np.arange(MAX_WINGS) < wn[:, None]
    wr[~used] = 0
    wc = np.where(used, np.take_along_axis(t.wing_counts, wr, axis=1), 0).astype(np.int32)
    flags = (F_BOMBS_BEAT_ROCKET * rules.bombs_beat_rocket + F_SKIP_QUAD_HEAD * rules.chain_skips_quad_head
             + F_SORT * rules.wing_same_rank)
    parts = [t.type, t.main, t.group_lo, t.group_hi, t.group_type, t.group_len, t.group_main,
             t.group_class, t.class_groups, t.class_ptr, t.bomb_groups, np.zeros(0), np.zeros(0),
             wn, wr.ravel(), wc.ravel(), allowed_mask(rules), t.group_of, t.counts.ravel()]
    header = np.zeros(H_SIZE, dtype=np.int32)
    header[H_N], header[H_NG], header[H_NC], header[H_FLAGS] = n, len(t.group_lo), len(t.class_ptr) - 1, flags
    header[H_NBOMBS] = len(t.bomb_groups)
    header[H_ROCKET] = t.rocket
    out = [header]
    offset = H_SIZE
    for slot, arr in zip(range(H_TYPE, H_COUNTS + 1), parts, strict=True):
        if slot in (H_NBOMBS, H_ROCKET):
            continue
        header[slot] = offset
        out.append(np.asarray(arr, dtype=np.int32).ravel())
        offset += out[-1].size
    packed = np.concatenate(out).astype(np.int32)
    packed.setflags(write=False)
    return packed


_MAIN_COPIES = np.array(MAIN_COPIES, dtype=np.int32)


@njit(cache=_CACHE, inline="always")
def _holds(hand, lo, hi, k):
    """Whether the hand holds ``k`` cards of each rank ``lo .. hi - 1``."""
    for r in range(lo, hi):  # noqa: SIM110 (numba: no generator in all())
        if hand[r] < k:
            return False
    return True


@njit(cache=_CACHE, inline="always")
def _holds_main(hand, g, T):
    """Whether the hand holds group ``g``'s main cards. Inlined into the loops over groups: most
    groups fail it, and a compiled call per group (346 on a lead) cost most of a lead's time."""
    main = T[T[H_GMAIN] + g]
    return _holds(hand, main, main + T[T[H_GLEN] + g], _MAIN_COPIES[T[T[H_GTYPE] + g]])


@njit(cache=_CACHE)
def _emit_group(hand, g, T, out, n, skip_quad):
    """Append the allowed moves of group ``g``, whose main cards the hand holds
    (:func:`_holds_main`); returns the new count."""
    typ = T[T[H_GTYPE] + g]
    length = T[T[H_GLEN] + g]
    main = T[T[H_GMAIN] + g]
    k = _MAIN_COPIES[typ]
    if skip_quad and hand[main] == 4 and (typ == 6 or typ == 7 or typ == 8):
        return n
    for r in range(main, main + length):
        hand[r] -= k
    lo = T[T[H_GLO] + g]
    hi = T[T[H_GHI] + g]
    allowed = T[H_ALLOWED]
    wn_off = T[H_WN]
    wr_off = T[H_WR]
    wc_off = T[H_WC]
    for i in range(lo, hi):
        if T[allowed + i] == 0:
            continue
        ok = True
        for j in range(T[wn_off + i]):
            if hand[T[wr_off + i * 5 + j]] < T[wc_off + i * 5 + j]:
                ok = False
                break
        if ok:
            if n >= out.shape[0]:
                raise ValueError("more legal moves than the output buffer holds")
            out[n] = i
            n += 1
    for r in range(main, main + length):
        hand[r] += k
    return n


@njit(cache=_CACHE)
def generate_moves(hand, prev, T, out):
    """Legal action ids for ``hand`` (int8[15], modified and restored) facing ``prev`` (0: lead).

    Writes them to ``out`` in ascending order and returns how many.
    """
    flags = T[H_FLAGS]
    skip_quad = (flags & 2) != 0
    n = 0
    if prev == 0:
        gtype, glen, gmain = T[H_GTYPE], T[H_GLEN], T[H_GMAIN]  # offsets read once (T may alias out)
        for g in range(T[H_NG]):
            k = _MAIN_COPIES[T[gtype + g]]
            main = T[gmain + g]
            if hand[main] >= k and _holds(hand, main + 1, main + T[glen + g], k):
                n = _emit_group(hand, g, T, out, n, skip_quad)
    else:
        out[0] = 0
        n = 1
        ptype = T[T[H_TYPE] + prev]
        pmain = T[T[H_MAIN] + prev]
        bombs = T[H_BOMBS]
        nb = T[H_NBOMBS]
        rocket = T[H_ROCKET]
        if ptype == 14:
            if flags & 1:
                for b in range(nb):
                    if _holds_main(hand, T[bombs + b], T):
                        n = _emit_group(hand, T[bombs + b], T, out, n, skip_quad)
            return n
        if ptype != 13:
            c = T[T[H_GCLASS] + T[T[H_GOF] + prev]]
            cg = T[H_CGROUPS]
            cptr = T[H_CPTR]
            for j in range(T[cptr + c], T[cptr + c + 1]):
                g = T[cg + j]
                if T[T[H_GMAIN] + g] > pmain and _holds_main(hand, g, T):
                    n = _emit_group(hand, g, T, out, n, skip_quad)
        for b in range(nb):
            g = T[bombs + b]
            if (ptype != 13 or T[T[H_GMAIN] + g] > pmain) and _holds_main(hand, g, T):
                n = _emit_group(hand, g, T, out, n, skip_quad)
        if hand[13] >= 1 and hand[14] >= 1:
            out[n] = rocket
            n += 1
    if flags & 4:
        out[:n] = np.sort(out[:n])
    return n


@njit(cache=_CACHE)
def play_and_generate(hands, played, p, move, nxt, prev, T, out):
    """Take play ``move`` (0: pass) from seat ``p``'s hand into its played cards, then write the
    legal moves of seat ``nxt`` facing ``prev`` to ``out`` and return how many (one call per
    decision keeps the hot path in compiled code)."""
    if move > 0:
        off = T[H_COUNTS] + move * 15
        for r in range(15):
            c = T[off + r]
            hands[p, r] -= c
            played[p, r] += c
    return generate_moves(hands[nxt], prev, T, out)


def legal_ids(hand: np.ndarray, prev: int, rules: Rules) -> list[int]:
    """Legal action ids of ``hand`` (rank counts) facing the play ``prev`` (0 = leading)."""
    buf = np.empty(MAX_LEGAL_MOVES, dtype=np.int32)
    h = np.array(hand, dtype=np.int8)
    n = generate_moves(h, int(prev), packed_table(rules), buf)
    return buf[:n].tolist()


def classify(counts: np.ndarray | str, rules: Rules) -> list[int]:
    """The ids of every move these rules allow with exactly these cards ([] for none)."""
    if isinstance(counts, str):
        counts = parse_counts(counts)
    t = action_table()
    ok = allowed_mask(rules)
    return [i for i in t.ids_of(counts) if ok[i]]


def beats(move: int, prev: int) -> bool:
    """Whether play ``move`` beats play ``prev`` (ids; rules only decide which ids exist)."""
    t = action_table()
    mt, pt = int(t.type[move]), int(t.type[prev])
    if pt == TYPE_ROCKET:
        return False
    if mt == TYPE_ROCKET:
        return True
    if mt == TYPE_BOMB:
        return pt != TYPE_BOMB or t.main[move] > t.main[prev]
    return (mt, t.length[move]) == (pt, t.length[prev]) and t.main[move] > t.main[prev]


__all__ = ["MAX_LEGAL_MOVES", "NUM_RANKS", "TYPE_SOLO_CHAIN", "TYPE_PAIR_CHAIN", "TYPE_TRIO_CHAIN",
           "generate_moves", "legal_ids", "classify", "beats", "packed_table"]
