"""Compiled Dou Dizhu hand analysis for the rule agents (:mod:`climbrl.agents.doudizhu_rules`).

A hand is 15 rank counts (``3 4 5 6 7 8 9 T J Q K A 2 B R``, index 0..14). The central question
a rule agent asks is *how many plays does this hand still need?* -- its split into the fewest
combinations, each of which it could lead on its own.

The search (:func:`split_hand`)
    1. Chains first. The chain options are every solo chain (5..12 ranks held once or more),
       pair chain (3..10 ranks held twice) and plane (2..6 ranks held three times) inside
       ``3..A`` that the hand holds; a depth-first search tries every multiset of them that
       the hand can hold at once (options in a fixed order, each node's options at or after
       the last one taken, so every multiset is visited once, repeats such as two equal solo
       chains included). A node with as many chains as the best split has plays is cut (every
       chain is a play). The search visits at most :data:`NODE_CAP` nodes (far above what a
       dealt hand needs: the most over the 60,000 hands of 20,000 random deals, the landlord's
       with the kitty, was 415), so its cost is bounded and its result deterministic.
    2. At every node the rest is split directly: both jokers are the rocket (one play); a rank
       held four times is a bomb (one play; four + two is never formed: a bomb is worth more);
       then trios, pairs and singles by their counts.
    3. Wings. Planes (longest first) take as many solo wings as they have trios, or else as
       many pair wings, the lowest pairs; if neither is possible the plane flies bare. A wing is
       never of the plane's own ranks (the last card of a four that gave the plane a trio): no
       preset allows ``TTTJJJ+J`` (``Rules.wing_same_rank`` would; the split keeps to the
       presets). So a plane's solo wings are first the singles of another plane's ranks, which
       that plane cannot take, then the lowest singles: ``33344456 888999 9 T`` is the two winged
       planes ``33344459`` and ``8889996T``, where lowest-first would leave ``888999`` one wing
       short (bare, two more plays). That preference is no pure gain: where the other plane does
       not need the single it can leave a lower one unattached (``33344457TTJJJQQQQKK2``: the Q
       to ``333444`` leaves the 7, weakness 16; lowest first leaves the Q, 6). So every split
       is taken both ways, with the preference and plainly lowest first, and keeps the better
       (fewer plays, then the lower weakness; the preference on a tie). Trios (lowest
       first) then take the lowest single left, or else the lowest pair. A wing is never a 2 or
       a joker: those are the hand's control cards, kept to win tricks (the agents still play
       out a hand whose last move uses one). Every wing removes a play.
    4. Plays = chains + planes + trios + rocket + bombs + pairs + singles left unattached.
       Among splits with as few plays, the best leaves the strongest unattached singles and
       pairs: *weakness* = 2 x sum(12 - rank) over unattached singles + sum(12 - rank) over
       unattached pairs, counting only ranks below the 2 (a single 3 costs 24, a single A 2).
       The first split found wins further ties.

:func:`evaluate_moves` gives (plays, weakness) of the hand left after each of a list of moves
(action ids; 0 = pass leaves the hand as it is), in one compiled call.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from climbrl.games.doudizhu.combos import _CACHE
from climbrl.games.doudizhu.moves import (
    TYPE_BOMB,
    TYPE_PAIR,
    TYPE_PAIR_CHAIN,
    TYPE_ROCKET,
    TYPE_SOLO,
    TYPE_SOLO_CHAIN,
    TYPE_TRIO,
    TYPE_TRIO_CHAIN,
    TYPE_TRIO_PAIR,
    TYPE_TRIO_PAIR_CHAIN,
    TYPE_TRIO_SOLO,
    TYPE_TRIO_SOLO_CHAIN,
)

NODE_CAP = 20000
"""The most search nodes one split may visit (a bound, not a tuning knob)."""
MAX_OPTIONS = 160
MAX_GROUPS = 20
TWO = 12  # rank index of the 2: wings and the weakness count stop below it
_MIN_LEN = np.array([5, 3, 2], dtype=np.int64)
_MAX_LEN = np.array([12, 10, 6], dtype=np.int64)
_CHAIN_TYPE = np.array([TYPE_SOLO_CHAIN, TYPE_PAIR_CHAIN, TYPE_TRIO_CHAIN], dtype=np.int64)


@njit(cache=_CACHE)
def _options(c, opts):
    """Every chain the hand ``c`` holds: rows (kind 0 solo / 1 pair / 2 plane, start, length)."""
    n = 0
    for kind in range(3):
        need = kind + 1
        for s in range(12):
            run = 0
            while s + run < 12 and c[s + run] >= need:
                run += 1
            top = min(run, _MAX_LEN[kind])
            for length in range(_MIN_LEN[kind], top + 1):
                if n < MAX_OPTIONS:
                    opts[n, 0] = kind
                    opts[n, 1] = s
                    opts[n, 2] = length
                    n += 1
    return n


@njit(cache=_CACHE)
def _fits(c, opts, j):
    need = opts[j, 0] + 1
    s = opts[j, 1]
    for r in range(s, s + opts[j, 2]):  # noqa: SIM110 (numba: no generator in all())
        if c[r] < need:
            return False
    return True


@njit(cache=_CACHE)
def _take(c, opts, j, sign):
    need = opts[j, 0] + 1
    s = opts[j, 1]
    for r in range(s, s + opts[j, 2]):
        c[r] -= sign * need


@njit(cache=_CACHE)
def _add_group(gtype, gcounts, ng, typ):
    gtype[ng] = typ
    for r in range(15):
        gcounts[ng, r] = 0
    return ng + 1


@njit(cache=_CACHE)
def _in_a_plane(opts, stack, depth, q):
    """Whether rank ``q`` is one of the ranks of a plane among the chains ``stack[:depth]``."""
    for d in range(depth):
        j = stack[d]
        if opts[j, 0] == 2 and opts[j, 1] <= q < opts[j, 1] + opts[j, 2]:
            return True
    return False


@njit(cache=_CACHE)
def _leaf(c, opts, stack, depth, rec, gtype, gcounts, others_first):
    """(plays, weakness, groups, preferred) of the split: the chains ``stack[:depth]`` (already
    taken out of ``c``), then the rest as in the module docstring, a plane's solo wings first from
    another plane's ranks when ``others_first`` (else lowest first); ``preferred``: whether that
    preference took a wing. Groups are written when ``rec``."""
    r = c.copy()
    plays = 0
    ng = 0
    preferred = False
    single = np.zeros(15, dtype=np.bool_)  # unattached singles / pairs still free
    pair = np.zeros(15, dtype=np.bool_)
    # chains (planes get their wings below)
    for d in range(depth):
        j = stack[d]
        if opts[j, 0] < 2:
            plays += 1
            if rec:
                k = ng
                ng = _add_group(gtype, gcounts, ng, _CHAIN_TYPE[opts[j, 0]])
                for q in range(opts[j, 1], opts[j, 1] + opts[j, 2]):
                    gcounts[k, q] = opts[j, 0] + 1
    if r[13] == 1 and r[14] == 1:
        plays += 1
        r[13] = 0
        r[14] = 0
        if rec:
            k = ng
            ng = _add_group(gtype, gcounts, ng, TYPE_ROCKET)
            gcounts[k, 13] = 1
            gcounts[k, 14] = 1
    for q in range(13):
        if r[q] == 4:
            plays += 1
            r[q] = 0
            if rec:
                k = ng
                ng = _add_group(gtype, gcounts, ng, TYPE_BOMB)
                gcounts[k, q] = 4
    for q in range(15):
        single[q] = r[q] == 1
        pair[q] = r[q] == 2
    # planes, longest first (stable: the search order among equal lengths)
    for length in range(6, 1, -1):
        for d in range(depth):
            j = stack[d]
            if opts[j, 0] != 2 or opts[j, 2] != length:
                continue
            plays += 1
            lo = opts[j, 1]
            hi = lo + length
            ns = 0
            npr = 0
            for q in range(TWO):
                if q < lo or q >= hi:  # never a wing of the plane's own rank (a four's last card)
                    ns += single[q]
                    npr += pair[q]
            kind = 0
            if ns >= length:
                kind = 1
            elif npr >= length:
                kind = 2
            k = ng
            if rec:
                ng = _add_group(gtype, gcounts, ng, (TYPE_TRIO_CHAIN, TYPE_TRIO_SOLO_CHAIN, TYPE_TRIO_PAIR_CHAIN)[kind])
                for q in range(lo, hi):
                    gcounts[k, q] = 3
            left = length if kind else 0
            if kind == 1 and others_first:  # first the singles of another plane's ranks: no wings of that plane
                for q in range(TWO):
                    if left == 0:
                        break
                    if single[q] and not lo <= q < hi and _in_a_plane(opts, stack, depth, q):
                        single[q] = False
                        preferred = True
                        left -= 1
                        if rec:
                            gcounts[k, q] = 1
            for q in range(TWO):
                if left == 0:
                    break
                if lo <= q < hi:
                    continue
                if kind == 1 and single[q]:
                    single[q] = False
                    left -= 1
                    if rec:
                        gcounts[k, q] = 1
                elif kind == 2 and pair[q]:
                    pair[q] = False
                    left -= 1
                    if rec:
                        gcounts[k, q] = 2
    # trios, lowest first
    for t in range(13):
        if r[t] != 3:
            continue
        plays += 1
        w = -1
        wk = 0
        for q in range(TWO):
            if single[q]:
                w = q
                wk = 1
                break
        if w < 0:
            for q in range(TWO):
                if pair[q]:
                    w = q
                    wk = 2
                    break
        if w >= 0:
            if wk == 1:
                single[w] = False
            else:
                pair[w] = False
        if rec:
            k = ng
            ng = _add_group(gtype, gcounts, ng, (TYPE_TRIO, TYPE_TRIO_SOLO, TYPE_TRIO_PAIR)[wk])
            gcounts[k, t] = 3
            if w >= 0:
                gcounts[k, w] = wk
    weak = 0
    for q in range(15):
        if pair[q]:
            plays += 1
            if q < TWO:
                weak += TWO - q
            if rec:
                k = ng
                ng = _add_group(gtype, gcounts, ng, TYPE_PAIR)
                gcounts[k, q] = 2
        if single[q]:
            plays += 1
            if q < TWO:
                weak += 2 * (TWO - q)
            if rec:
                k = ng
                ng = _add_group(gtype, gcounts, ng, TYPE_SOLO)
                gcounts[k, q] = 1
    return plays, weak, ng, preferred


@njit(cache=_CACHE)
def _best_leaf(c, opts, stack, depth, gtype, gcounts):
    """(plays, weakness, others_first) of the better of the two wing orders at this split (fewer
    plays, then the lower weakness; the other planes' singles first on a tie): the preference is
    not a pure gain (``33344457TTJJJQQQQKK2``: lowest first leaves weakness 6, the other plane's
    single first 16)."""
    p, w, _, preferred = _leaf(c, opts, stack, depth, False, gtype, gcounts, True)
    if preferred:
        p0, w0, _, _ = _leaf(c, opts, stack, depth, False, gtype, gcounts, False)
        if p0 < p or (p0 == p and w0 < w):
            return p0, w0, False
    return p, w, True


@njit(cache=_CACHE)
def _split(hand, rec, gtype, gcounts):
    """(plays, weakness, number of groups, nodes visited) of the best split of ``hand``."""
    c = hand.astype(np.int64)
    opts = np.zeros((MAX_OPTIONS, 3), dtype=np.int64)
    k = _options(c, opts)
    stack = np.zeros(32, dtype=np.int64)
    best_stack = np.zeros(32, dtype=np.int64)
    best_depth = 0
    best_plays, best_weak, best_order = _best_leaf(c, opts, stack, 0, gtype, gcounts)
    depth = 0
    i = 0
    nodes = 1
    while True:
        j = i
        if depth + 1 <= best_plays and depth < 32 and nodes < NODE_CAP:
            while j < k and not _fits(c, opts, j):
                j += 1
        else:
            j = k
        if j < k:
            _take(c, opts, j, 1)
            stack[depth] = j
            depth += 1
            nodes += 1
            p, w, order = _best_leaf(c, opts, stack, depth, gtype, gcounts)
            if p < best_plays or (p == best_plays and w < best_weak):
                best_plays, best_weak, best_depth, best_order = p, w, depth, order
                best_stack[:depth] = stack[:depth]
            i = j  # the same chain may be taken again
        else:
            if depth == 0:
                break
            depth -= 1
            j = stack[depth]
            _take(c, opts, j, -1)
            i = j + 1
    ng = 0
    if rec:
        c = hand.astype(np.int64)
        for d in range(best_depth):
            _take(c, opts, best_stack[d], 1)
        _, _, ng, _ = _leaf(c, opts, best_stack, best_depth, True, gtype, gcounts, best_order)
    return best_plays, best_weak, ng, nodes


@njit(cache=_CACHE)
def _evaluate(hand, moves, counts):
    n = len(moves)
    plays = np.zeros(n, dtype=np.int64)
    weak = np.zeros(n, dtype=np.int64)
    gtype = np.zeros(MAX_GROUPS, dtype=np.int64)
    gcounts = np.zeros((MAX_GROUPS, 15), dtype=np.int8)
    rest = np.zeros(15, dtype=np.int8)
    for i in range(n):
        m = moves[i]
        for r in range(15):
            rest[r] = hand[r] - counts[m, r]
        p, w, _, _ = _split(rest, False, gtype, gcounts)
        plays[i] = p
        weak[i] = w
    return plays, weak


def split_hand(hand) -> tuple[int, int, list[tuple[int, np.ndarray]]]:
    """(plays, weakness, groups) of the best split of ``hand`` (15 rank counts); a group is
    (a ``TYPE_*`` of :mod:`climbrl.games.doudizhu.moves`, its 15 rank counts)."""
    h = np.asarray(hand, dtype=np.int8)
    gtype = np.zeros(MAX_GROUPS, dtype=np.int64)
    gcounts = np.zeros((MAX_GROUPS, 15), dtype=np.int8)
    plays, weak, ng, _ = _split(h, True, gtype, gcounts)
    return int(plays), int(weak), [(int(gtype[i]), gcounts[i].copy()) for i in range(ng)]


def split_nodes(hand) -> int:
    """Search nodes the split of ``hand`` visits (for the bound on :data:`NODE_CAP`)."""
    gtype = np.zeros(MAX_GROUPS, dtype=np.int64)
    gcounts = np.zeros((MAX_GROUPS, 15), dtype=np.int8)
    return int(_split(np.asarray(hand, dtype=np.int8), False, gtype, gcounts)[3])


def hand_plays(hand) -> tuple[int, int]:
    """(plays, weakness) of ``hand``: :func:`split_hand` without the groups."""
    gtype = np.zeros(MAX_GROUPS, dtype=np.int64)
    gcounts = np.zeros((MAX_GROUPS, 15), dtype=np.int8)
    p, w, _, _ = _split(np.asarray(hand, dtype=np.int8), False, gtype, gcounts)
    return int(p), int(w)


def evaluate_moves(hand, moves, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(plays, weakness) of the hand left after each move (action ids into ``counts``, the
    action table's rank counts)."""
    return _evaluate(np.asarray(hand, dtype=np.int8), np.asarray(moves, dtype=np.int64), counts)


__all__ = ["split_hand", "hand_plays", "evaluate_moves", "split_nodes", "NODE_CAP"]
