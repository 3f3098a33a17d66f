"""Compiled hand analysis shared by the rule-based agents (heuristic, aggressive, conservative).

Definitions (all under the game's rules, through the engine's rule table):

pairs
    ranks of which the hand holds at least two cards (a triple counts once).
five-card structures
    suits holding at least five cards (flush material) + rank windows that make a valid
    5-card straight under the rules and are fully present + ranks held four times (four of a
    kind) + one full house if the hand holds a triple and a pair of another rank.
dead cards
    cards in no combination: the only card of its rank, in a suit with fewer than five
    cards, and in no fully present straight window of any allowed length.
breaking a pair or triple
    playing some but not all cards of a rank of which the hand holds two or more.
breaking a five-card structure
    a play of fewer than five cards that leaves fewer five-card structures (a play of five or
    more cards is itself such a structure, or a longer straight built on one).
deciding strength
    the combination's deciding card as ``rank + suit/4`` (0 = 3D .. 12.75 = 2S in the default
    suit order): singles by the card, pairs by the higher card, triples and four of a kind by
    rank, straights and straight flushes by the top card, flushes by the highest card, full
    houses by the triple; 5-card hands add their place in the standard order (straight 0,
    flush 1, full house 2, four + kicker 3, straight flush 4).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from climbrl.games.big2.combos import (
    _CACHE,
    FLUSH,
    FOUR_KICKER,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    PASS,
    STRAIGHT_FLUSH,
    T_NWINDOWS,
    T_STRENGTH,
    T_WINDOW_LEN,
    T_WINDOWS,
    TRIPLE,
    _popcount,
)

SUIT_MASK = sum(1 << (4 * r) for r in range(13))  # the diamonds; shift by suit for the others


@njit(cache=_CACHE)
def _rank_counts(h):
    cnt = np.zeros(13, dtype=np.int64)
    for r in range(13):
        cnt[r] = _popcount((h >> (4 * r)) & 0xF)
    return cnt


@njit(cache=_CACHE)
def hand_structure(h, t):
    """(pairs, five-card structures, dead cards) of the hand ``h``."""
    cnt = _rank_counts(h)
    ranks = 0
    pairs = 0
    triples = 0
    quads = 0
    for r in range(13):
        if cnt[r] > 0:
            ranks |= 1 << r
        if cnt[r] >= 2:
            pairs += 1
        if cnt[r] >= 3:
            triples += 1
        if cnt[r] == 4:
            quads += 1
    suit_ok = np.zeros(4, dtype=np.bool_)
    fives = quads
    for s in range(4):
        if _popcount(h & (SUIT_MASK << s)) >= 5:
            suit_ok[s] = True
            fives += 1
    if triples > 0 and pairs >= 2:
        fives += 1
    covered = 0  # ranks inside a fully present straight window
    for i in range(t[T_NWINDOWS]):
        w = t[T_WINDOWS + i]
        if (ranks & w) == w:
            covered |= w
            if t[T_WINDOW_LEN + i] == 5:
                fives += 1
    dead = 0
    for c in range(52):
        if (h >> c) & 1:
            r = c >> 2
            if cnt[r] == 1 and not suit_ok[c & 3] and not (covered >> r) & 1:
                dead += 1
    return pairs, fives, dead


@njit(cache=_CACHE)
def breaks(h, m, fives_before, t):
    """(breaks a pair or triple, breaks a five-card structure) when ``h`` plays ``m``."""
    pair_break = False
    for r in range(13):
        held = _popcount((h >> (4 * r)) & 0xF)
        taken = _popcount((m >> (4 * r)) & 0xF)
        if held >= 2 and 0 < taken < held:
            pair_break = True
    five_break = False
    if m != 0 and _popcount(m) < 5:
        _, after, _ = hand_structure(h & ~m, t)
        five_break = after < fives_before
    return pair_break, five_break


@njit(cache=_CACHE)
def deciding_strength(m, typ, power, t):
    """The deciding card's ``rank + suit/4`` plus the 5-card order (see module docstring)."""
    if typ == PASS:
        return -1.0
    strength = t[T_STRENGTH:T_STRENGTH + 52]
    if typ == FOUR_OF_A_KIND:
        return float(power - 64)
    within = power & 0xFFFFFF
    if typ == FULL_HOUSE:
        return within + 2.0
    if typ == FOUR_KICKER:
        return within + 3.0
    if typ == STRAIGHT_FLUSH:
        return within / 4.0 + 4.0
    if typ == FLUSH:
        best = 0
        for c in range(52):
            if (m >> c) & 1 and strength[c] > best:
                best = strength[c]
        return best / 4.0 + 1.0
    if typ == TRIPLE:
        return float(power // 4)
    return power / 4.0  # singles, pairs, two pair, straights: the top card's strength


@njit(cache=_CACHE)
def phase_of(hand_size):
    """0 early (more than 10 cards), 1 mid (6 to 10), 2 late (5 or fewer)."""
    if hand_size > 10:
        return 0
    if hand_size >= 6:
        return 1
    return 2


@njit(cache=_CACHE)
def forced_move(h, masks):
    """0 when there is only one legal move, else the index of a move that plays the whole hand,
    else -1 (the agent has a real choice to make)."""
    if masks.shape[0] == 1:
        return 0
    for i in range(masks.shape[0]):
        if masks[i] == h:
            return i
    return -1


# weights of the heuristic (see climbrl.agents.heuristic for the reasoning)
PAIR_PENALTY = (8.0, 4.0, 0.0)
FIVE_PENALTY = (20.0, 8.0, 4.0)
PASS_SCORE = (12.0, 13.0, 99.0)
W_PAIRS, W_FIVES, W_DEAD, W_SHED = 2.0, 3.0, 1.0, 3.0
EXTRA_CARD_BONUS = 3.0


@njit(cache=_CACHE)
def rank_action(h, masks, types, powers, t):
    """RankAction of every legal move (lower = preferred as a candidate)."""
    n = masks.shape[0]
    phase = phase_of(_popcount(h))
    length_weight = 2.0 if phase == 2 else 1.0
    score = np.empty(n, dtype=np.float64)
    for i in range(n):
        if types[i] == PASS:
            score[i] = PASS_SCORE[phase]
        else:
            extra = _popcount(masks[i]) - 1
            bonus = EXTRA_CARD_BONUS * extra * length_weight
            score[i] = deciding_strength(masks[i], types[i], powers[i], t) - bonus
    return score


@njit(cache=_CACHE)
def move_value(h, m, p0, f0, d0, phase, t):
    """The heuristic's value of playing ``m`` from hand ``h`` (``p0, f0, d0``: the structure of
    ``h``, :func:`hand_structure`): the structure of the hand left, cards shed, and BreakPenalty."""
    if m == 0:
        return W_PAIRS * p0 + W_FIVES * f0 - W_DEAD * d0
    p, f, d = hand_structure(h & ~m, t)
    value = W_PAIRS * p + W_FIVES * f - W_DEAD * d + W_SHED * _popcount(m)
    pair_break, five_break = breaks(h, m, f0, t)
    if pair_break:
        value -= PAIR_PENALTY[phase]
    if five_break:
        value -= FIVE_PENALTY[phase]
    return value


@njit(cache=_CACHE)
def heuristic_pick(h, masks, types, powers, t):
    """The study's heuristic: RankAction, k weakest candidates, structure score, BreakPenalty."""
    n = masks.shape[0]
    forced = forced_move(h, masks)
    if forced >= 0:
        return forced
    phase = phase_of(_popcount(h))
    order = np.argsort(rank_action(h, masks, types, powers, t), kind="mergesort")
    k = max(n // 2, 2)
    if k > n:
        k = n
    p0, f0, d0 = hand_structure(h, t)
    best = order[0]
    best_value = -1e18
    for j in range(k):
        i = order[j]
        value = move_value(h, masks[i], p0, f0, d0, phase, t)
        if value > best_value:  # strict: ties go to the lower RankAction
            best_value = value
            best = i
    return best


@njit(cache=_CACHE)
def rule_agent_pick(h, masks, types, powers, t, aggressive, u):
    """Aggressive or conservative play (see :class:`climbrl.agents.heuristic.RuleAgent`).

    ``u`` is a uniform [0, 1) draw for the conservative agent's random passes."""
    n = masks.shape[0]
    forced = forced_move(h, masks)
    if forced >= 0:
        return forced
    phase = phase_of(_popcount(h))
    can_pass = masks[0] == 0
    _, f0, _ = hand_structure(h, t)
    best = -1
    best_key = 0.0
    for pass_sensible in range(2):
        for i in range(n):
            m = masks[i]
            if m == 0:
                continue
            if pass_sensible == 0 and phase < 2:
                pair_break, five_break = breaks(h, m, f0, t)
                if pair_break or five_break:
                    continue
            s = deciding_strength(m, types[i], powers[i], t)
            if aggressive:
                key = 100.0 * _popcount(m) * (1.0 if not can_pass else 0.0) + (s if can_pass else -s)
                if best < 0 or key > best_key:
                    best, best_key = i, key
            else:
                # weakest: multi-card plays count as weaker when leading (as in RankAction)
                key = s if can_pass else s - EXTRA_CARD_BONUS * (_popcount(m) - 1)
                if best < 0 or key < best_key:
                    best, best_key = i, key
        if best >= 0 or can_pass:
            break
    if best < 0:
        return 0  # nothing sensible: pass
    # the conservative agent keeps its aces and twos, and often just waits
    if not aggressive and can_pass and phase < 2 and (best_key >= 11.0 or u < 0.25):
        return 0
    return best
