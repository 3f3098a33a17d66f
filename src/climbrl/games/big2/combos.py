"""Big 2 combinations: classification of a set of cards and legal-move generation.

This is the engine's hot path, compiled with numba (``cache=True``). Setting
``NUMBA_DISABLE_JIT=1`` runs the very same functions as plain Python, so there is one set of
semantics whichever way it runs.

A combination is described by three integers:

``type``
    :data:`PASS` (no cards), :data:`SINGLE`, :data:`PAIR`, :data:`TRIPLE`, :data:`TWO_PAIR`,
    :data:`FOUR_OF_A_KIND` (alone, a 4-card hand), :data:`STRAIGHT`, :data:`FLUSH`,
    :data:`FULL_HOUSE`, :data:`FOUR_KICKER` (four of a kind plus one card),
    :data:`STRAIGHT_FLUSH`; :data:`INVALID` when the cards form no combination.
``cls``
    Which plays it can meet: a play beats another only when both have the same ``cls``.
    Singles 1, pairs 2, triples 3, 4-card hands 4, 5-card hands 5 (5-card straights
    included), a straight of any other length L: ``16 + L``.
``power``
    Within one ``cls`` a higher power beats a lower one. A card's strength is
    ``rank * 4 + suit strength`` (suit strength from the rules' suit order). Singles, pairs,
    two pairs: the strength of the highest card; triples: its highest card; four of a kind
    alone: ``64 + rank`` (above any two pair); straights: the strength of the top card (the
    last in sequence order); 5-card hands: ``order << 24 | within`` with order straight 0,
    flush 1, full house 2, four + kicker 3, straight flush 4, and ``within`` the top card for
    straights and straight flushes, the triple's rank for full houses, the quad's rank for
    four + kicker, and for flushes per ``flush_compare``: ``top_card`` the top card's
    strength; ``rank_then_suit`` the five ranks from the highest down (4 bits each) then the
    suit strength (2 bits); ``suit_then_rank`` the suit strength then the five ranks.

Canonical order of legal moves: pass first (when it is legal), then the plays by number of
cards, then ``type``, then ``power``, then the card mask as an integer, all ascending.
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np
from numba import njit

from climbrl.games.big2.rules import FLUSH_COMPARES, Rules

INVALID = -1
PASS = 0
SINGLE = 1
PAIR = 2
TRIPLE = 3
TWO_PAIR = 4
FOUR_OF_A_KIND = 5
STRAIGHT = 6
FLUSH = 7
FULL_HOUSE = 8
FOUR_KICKER = 9
STRAIGHT_FLUSH = 10

TYPE_NAMES = {
    INVALID: "invalid",
    PASS: "pass",
    SINGLE: "single",
    PAIR: "pair",
    TRIPLE: "triple",
    TWO_PAIR: "two_pair",
    FOUR_OF_A_KIND: "four_of_a_kind",
    STRAIGHT: "straight",
    FLUSH: "flush",
    FULL_HOUSE: "full_house",
    FOUR_KICKER: "four_of_a_kind_kicker",
    STRAIGHT_FLUSH: "straight_flush",
}

CLS_FIVE = 5
MAX_LEGAL_MOVES = 8192
"""Bound on the number of legal moves: they are distinct subsets of a 13-card hand (pass is
the empty one), so never more than 2**13."""

_CACHE = os.environ.get("CLIMBRL_NUMBA_CACHE", "1") != "0"


# Layout of the single int64 table array the compiled functions take (one array keeps the
# numba call overhead low: every argument costs a type check per call).
T_STRENGTH = 0  # [52] card strength = rank * 4 + suit strength
T_SUIT = 52  # [4] suit strength of D, C, H, S
T_FOUR_CARD = 56  # two pair / four of a kind alone allowed
T_KICKER = 57  # four of a kind + kicker allowed
T_FLUSH_CMP = 58  # 0 top_card, 1 rank_then_suit, 2 suit_then_rank
T_NLENGTHS = 59  # number of allowed straight lengths
T_LENGTHS = 60  # [13] allowed straight lengths, ascending
T_NWINDOWS = 73  # number of valid straight windows (rank sets) under the rules
T_WINDOWS = 74  # [169] their 13-bit rank sets
T_WINDOW_LEN = T_WINDOWS + 169  # [169] their lengths
T_STRAIGHT_TOP = T_WINDOW_LEN + 169  # [8192] top rank of a valid straight's rank set, else -1
T_SIZE = T_STRAIGHT_TOP + (1 << 13)


@lru_cache(maxsize=64)
def rule_tables(rules: Rules) -> np.ndarray:
    """The rules compiled into the read-only table array the numba functions take."""
    t = np.full(T_SIZE, -1, dtype=np.int64)
    suit_strength = [rules.suit_order.index(s) for s in "DCHS"]
    t[T_SUIT:T_SUIT + 4] = suit_strength
    t[T_STRENGTH:T_STRENGTH + 52] = [(c >> 2) * 4 + suit_strength[c & 3] for c in range(52)]
    t[T_FOUR_CARD] = int(rules.four_card_hands)
    t[T_KICKER] = int(rules.four_of_a_kind_kicker)
    t[T_FLUSH_CMP] = FLUSH_COMPARES.index(rules.flush_compare)
    t[T_NLENGTHS] = len(rules.straight_lengths)
    t[T_LENGTHS:T_LENGTHS + len(rules.straight_lengths)] = rules.straight_lengths
    highest = 12 if rules.twos_in_straights else 11
    n_windows = 0
    for length in rules.straight_lengths:
        for start in range(13 if length < 13 else 1):
            ranks = [(start + k) % 13 for k in range(length)]
            if start + length - 1 > 12 and not rules.wrap_straights:
                continue
            if not rules.wrap_straights and ranks[-1] > highest:
                continue
            rank_set = sum(1 << r for r in ranks)
            # all thirteen ranks make one straight, topped by the 2
            t[T_STRAIGHT_TOP + rank_set] = 12 if length == 13 else ranks[-1]
            t[T_WINDOWS + n_windows] = rank_set
            t[T_WINDOW_LEN + n_windows] = length
            n_windows += 1
    t[T_NWINDOWS] = n_windows
    t.setflags(write=False)
    return t


@njit(cache=_CACHE)
def _popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=_CACHE)
def _flush_within(ranks5, suit_str, top_strength, mode):
    """``ranks5`` ascending ranks of the five cards."""
    if mode == 0:
        return top_strength
    key = 0
    for k in range(4, -1, -1):
        key = (key << 4) | ranks5[k]
    if mode == 1:
        return (key << 2) | suit_str
    return (suit_str << 20) | key


@njit(cache=_CACHE)
def classify_mask(mask, t):
    """(type, cls, power) of a set of cards; type INVALID (-1) if it is no combination."""
    strength = t[T_STRENGTH:T_STRENGTH + 52]
    suit_strength = t[T_SUIT:T_SUIT + 4]
    straight_top = t[T_STRAIGHT_TOP:]
    n = _popcount(mask)
    if n == 0:
        return PASS, 0, 0
    rank_count = np.zeros(13, dtype=np.int64)
    rank_top = np.full(13, -1, dtype=np.int64)  # highest-strength card of each rank
    suits = 0
    best = -1
    ranks5 = np.zeros(5, dtype=np.int64)
    k = 0
    for c in range(52):
        if not (mask >> c) & 1:
            continue
        r = c >> 2
        rank_count[r] += 1
        if rank_top[r] < 0 or strength[c] > strength[rank_top[r]]:
            rank_top[r] = c
        suits |= 1 << (c & 3)
        if strength[c] > best:
            best = strength[c]
        if k < 5:
            ranks5[k] = r
        k += 1
    distinct = 0
    rmask = 0
    for r in range(13):
        if rank_count[r] > 0:
            distinct += 1
            rmask |= 1 << r
    one_suit = suits & (suits - 1) == 0
    if distinct == 1:
        if n == 1:
            return SINGLE, 1, best
        if n == 2:
            return PAIR, 2, best
        if n == 3:
            return TRIPLE, 3, best
        if n == 4 and t[T_FOUR_CARD]:
            for r in range(13):
                if rank_count[r] == 4:
                    return FOUR_OF_A_KIND, 4, 64 + r
        return INVALID, 0, 0
    if distinct == n and straight_top[rmask] >= 0:
        top = straight_top[rmask]
        top_strength = strength[rank_top[top]]
        if n == 5:
            if one_suit:
                return STRAIGHT_FLUSH, CLS_FIVE, (4 << 24) | top_strength
            return STRAIGHT, CLS_FIVE, top_strength
        return STRAIGHT, 16 + n, top_strength
    if n == 4 and t[T_FOUR_CARD] and distinct == 2:
        pairs = 0
        for r in range(13):
            if rank_count[r] == 2:
                pairs += 1
        if pairs == 2:
            return TWO_PAIR, 4, best
        return INVALID, 0, 0
    if n == 5:
        if one_suit:
            suit = 0
            while not (suits >> suit) & 1:
                suit += 1
            return FLUSH, CLS_FIVE, (1 << 24) | _flush_within(
                ranks5, suit_strength[suit], best, t[T_FLUSH_CMP]
            )
        if distinct == 2:
            for r in range(13):
                if rank_count[r] == 3:
                    return FULL_HOUSE, CLS_FIVE, (2 << 24) | r
                if rank_count[r] == 4 and t[T_KICKER]:
                    return FOUR_KICKER, CLS_FIVE, (3 << 24) | r
    return INVALID, 0, 0


@njit(cache=_CACHE)
def _push(out, count, mask, typ, power, min_power, must):
    """Append a candidate if it beats ``min_power`` and meets the must-include mask."""
    if power > min_power and (must == 0 or (mask & must) != 0):
        out[0, count] = mask
        out[1, count] = typ
        out[2, count] = power
        return count + 1
    return count


@njit(cache=_CACHE)
def generate_moves(hand, want_cls, min_power, must, allow_pass, t, out):
    """Fill ``out[0:3, :n]`` (mask, type, power) with the legal moves, in canonical order.

    ``want_cls`` 0 means leading (any combination); otherwise only plays of that ``cls`` with a
    power above ``min_power``. ``must`` is a mask of which a play must contain a card (0: none).
    Returns ``n``.
    """
    strength = t[T_STRENGTH:T_STRENGTH + 52]
    suit_strength = t[T_SUIT:T_SUIT + 4]
    straight_top = t[T_STRAIGHT_TOP:]
    straight_lengths = t[T_LENGTHS:T_LENGTHS + t[T_NLENGTHS]]
    by_rank = np.full((13, 4), -1, dtype=np.int64)
    cnt = np.zeros(13, dtype=np.int64)
    by_suit = np.full((4, 13), -1, dtype=np.int64)
    scnt = np.zeros(4, dtype=np.int64)
    hand_ranks = 0
    for c in range(52):
        if not (hand >> c) & 1:
            continue
        r = c >> 2
        s = c & 3
        by_rank[r, cnt[r]] = c
        cnt[r] += 1
        by_suit[s, scnt[s]] = c
        scnt[s] += 1
        hand_ranks |= 1 << r
    lead = want_cls == 0
    if not lead:
        min_p = min_power
    else:
        min_p = -1
    n = 0
    if lead or want_cls == 1:
        for r in range(13):
            for i in range(cnt[r]):
                c = by_rank[r, i]
                n = _push(out, n, 1 << c, SINGLE, strength[c], min_p, must)
    if lead or want_cls == 2:
        for r in range(13):
            for i in range(cnt[r]):
                for j in range(i + 1, cnt[r]):
                    a = by_rank[r, i]
                    b = by_rank[r, j]
                    p = max(strength[a], strength[b])
                    n = _push(out, n, (1 << a) | (1 << b), PAIR, p, min_p, must)
    if lead or want_cls == 3:
        for r in range(13):
            for i in range(cnt[r]):
                for j in range(i + 1, cnt[r]):
                    for k in range(j + 1, cnt[r]):
                        a = by_rank[r, i]
                        b = by_rank[r, j]
                        d = by_rank[r, k]
                        p = max(strength[a], max(strength[b], strength[d]))
                        n = _push(out, n, (1 << a) | (1 << b) | (1 << d), TRIPLE, p, min_p, must)
    if t[T_FOUR_CARD] and (lead or want_cls == 4):
        for r1 in range(13):
            for i1 in range(cnt[r1]):
                for j1 in range(i1 + 1, cnt[r1]):
                    a = by_rank[r1, i1]
                    b = by_rank[r1, j1]
                    for r2 in range(r1 + 1, 13):
                        for i2 in range(cnt[r2]):
                            for j2 in range(i2 + 1, cnt[r2]):
                                x = by_rank[r2, i2]
                                y = by_rank[r2, j2]
                                p = max(strength[x], strength[y])
                                mk = (1 << a) | (1 << b) | (1 << x) | (1 << y)
                                n = _push(out, n, mk, TWO_PAIR, p, min_p, must)
        for r in range(13):
            if cnt[r] == 4:
                mk = 0
                for i in range(4):
                    mk |= 1 << by_rank[r, i]
                n = _push(out, n, mk, FOUR_OF_A_KIND, 64 + r, min_p, must)
    # straights (and straight flushes)
    idx = np.zeros(13, dtype=np.int64)
    for li in range(straight_lengths.shape[0]):
        length = straight_lengths[li]
        cls = CLS_FIVE if length == 5 else 16 + length
        if not (lead or want_cls == cls):
            continue
        for start in range(13):
            wmask = 0
            for k in range(length):
                wmask |= 1 << ((start + k) % 13)
            top = straight_top[wmask]
            if top < 0 or top != (start + length - 1) % 13 or (hand_ranks & wmask) != wmask:
                continue
            if length == 13 and start != 0:
                continue
            for k in range(length):
                idx[k] = 0
            while True:
                mk = 0
                suits = 0
                for k in range(length):
                    c = by_rank[(start + k) % 13, idx[k]]
                    mk |= 1 << c
                    suits |= 1 << (c & 3)
                topc = by_rank[top, idx[length - 1]]
                if length == 5:
                    if suits & (suits - 1) == 0:
                        n = _push(out, n, mk, STRAIGHT_FLUSH, (4 << 24) | strength[topc], min_p, must)
                    else:
                        n = _push(out, n, mk, STRAIGHT, strength[topc], min_p, must)
                else:
                    n = _push(out, n, mk, STRAIGHT, strength[topc], min_p, must)
                # odometer
                k = length - 1
                while k >= 0:
                    idx[k] += 1
                    if idx[k] < cnt[(start + k) % 13]:
                        break
                    idx[k] = 0
                    k -= 1
                if k < 0:
                    break
    if lead or want_cls == CLS_FIVE:
        # flushes (straight flushes were made above)
        ranks5 = np.zeros(5, dtype=np.int64)
        for s in range(4):
            ns = scnt[s]
            if ns < 5:
                continue
            for a in range(ns):
                for b in range(a + 1, ns):
                    for c in range(b + 1, ns):
                        for d in range(c + 1, ns):
                            for e in range(d + 1, ns):
                                ca = by_suit[s, a]
                                cb = by_suit[s, b]
                                cc = by_suit[s, c]
                                cd = by_suit[s, d]
                                ce = by_suit[s, e]
                                rm = (1 << (ca >> 2)) | (1 << (cb >> 2)) | (1 << (cc >> 2))
                                rm |= (1 << (cd >> 2)) | (1 << (ce >> 2))
                                if straight_top[rm] >= 0:
                                    continue
                                ranks5[0] = ca >> 2
                                ranks5[1] = cb >> 2
                                ranks5[2] = cc >> 2
                                ranks5[3] = cd >> 2
                                ranks5[4] = ce >> 2
                                w = _flush_within(ranks5, suit_strength[s], strength[ce],
                                                  t[T_FLUSH_CMP])
                                mk = (1 << ca) | (1 << cb) | (1 << cc) | (1 << cd) | (1 << ce)
                                n = _push(out, n, mk, FLUSH, (1 << 24) | w, min_p, must)
        # full houses
        for r3 in range(13):
            if cnt[r3] < 3:
                continue
            for i in range(cnt[r3]):
                for j in range(i + 1, cnt[r3]):
                    for k in range(j + 1, cnt[r3]):
                        t3 = (1 << by_rank[r3, i]) | (1 << by_rank[r3, j]) | (1 << by_rank[r3, k])
                        for r2 in range(13):
                            if r2 == r3:
                                continue
                            for x in range(cnt[r2]):
                                for y in range(x + 1, cnt[r2]):
                                    mk = t3 | (1 << by_rank[r2, x]) | (1 << by_rank[r2, y])
                                    n = _push(out, n, mk, FULL_HOUSE, (2 << 24) | r3, min_p, must)
        if t[T_KICKER]:
            for r in range(13):
                if cnt[r] != 4:
                    continue
                quad = 0
                for i in range(4):
                    quad |= 1 << by_rank[r, i]
                rest = hand & ~quad
                while rest:
                    low = rest & -rest
                    rest ^= low
                    n = _push(out, n, quad | low, FOUR_KICKER, (3 << 24) | r, min_p, must)
    # canonical order: by (cards, type, power, mask)
    if n > 1:
        keys = np.empty(n, dtype=np.int64)
        masks = out[0, :n].copy()
        order0 = np.argsort(masks, kind="mergesort")
        for i in range(n):
            j = order0[i]
            keys[i] = (_popcount(out[0, j]) << 56) | (out[1, j] << 48) | out[2, j]
        order1 = np.argsort(keys, kind="mergesort")
        tmp = out[:, :n].copy()
        for i in range(n):
            j = order0[order1[i]]
            out[0, i] = tmp[0, j]
            out[1, i] = tmp[1, j]
            out[2, i] = tmp[2, j]
    if allow_pass:
        for i in range(n, 0, -1):
            out[0, i] = out[0, i - 1]
            out[1, i] = out[1, i - 1]
            out[2, i] = out[2, i - 1]
        out[0, 0] = 0
        out[1, 0] = PASS
        out[2, 0] = 0
        n += 1
    return n


def combo_cls(typ: int, ncards: int) -> int:
    """The ``cls`` of a combination of ``typ`` with ``ncards`` cards (see module docstring)."""
    if typ == PASS:
        return 0
    if typ == STRAIGHT and ncards != 5:
        return 16 + ncards
    return ncards


def classify(mask: int, rules: Rules) -> tuple[int, int, int]:
    """(type, cls, power) of a card mask under ``rules``; type :data:`INVALID` for no combination."""
    typ, cls, power = classify_mask(np.int64(mask), rule_tables(rules))
    return int(typ), int(cls), int(power)


def beats(a: int, b: int, rules: Rules) -> bool:
    """Whether the play ``a`` beats the play ``b`` (both card masks) under ``rules``."""
    ta, ca, pa = classify(a, rules)
    tb, cb, pb = classify(b, rules)
    return ta > 0 and tb > 0 and ca == cb and pa > pb


def legal_plays(hand: int, rules: Rules, to_beat: int = 0, must: int = 0) -> list[tuple[int, int, int]]:
    """All (mask, type, power) a hand may play, leading (``to_beat`` 0) or facing ``to_beat``.

    Facing a play, pass comes first. Raises ``ValueError`` if ``to_beat`` is no combination.
    """
    if to_beat:
        typ, cls, power = classify(to_beat, rules)
        if typ == INVALID:
            raise ValueError("the play to beat is not a combination under these rules")
    else:
        cls, power = 0, -1
    out = np.empty((3, MAX_LEGAL_MOVES + 1), dtype=np.int64)
    n = generate_moves(np.int64(hand), cls, power, np.int64(must), bool(to_beat), rule_tables(rules), out)
    return [tuple(x) for x in out[:, :n].T.tolist()]
