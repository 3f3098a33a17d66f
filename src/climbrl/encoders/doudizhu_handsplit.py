"""``doudizhu+handsplit``: Dou Dizhu's encoder plus six hand-split features per legal move
(``encoder=doudizhu+handsplit`` in the config).

Named ``doudizhu+search`` until issue 26, which renamed it for what it is: the guide's "search
features grafted onto the learner" (its 6.1) are a look-ahead, rule-engine play-outs of the next
plays, and these columns look at nothing ahead; they read the split of the hand left after each
move and whether its groups can be beaten. Checkpoints that record the old name still load
(:data:`climbrl.encoders.base.RENAMED`).

The state vector is :mod:`climbrl.encoders.doudizhu`'s (542). The move vector is its 82 columns
then six more (``MOVE_DIM`` = 88), read only from the acting seat's observation: its own hand,
the *unseen cards* (the deck less the own hand and every card played: the other two hands
together, plus the kitty while the auction runs; public knowledge for this seat) and the cards
each other seat holds (public). Re-dealing the opponents' hidden cards changes none of them.

=========  ==================================================================================
82         plays the hand left after the move needs / 20 (the fewest combinations it splits
           into, :func:`climbrl.agents.ddz_hand.split_hand`; pass and auction actions leave
           the hand as it is; an empty hand needs 0)
83         beatable groups of that split / 20 (see *beatable* below)
84         1 if the remainder is unbeatable: no group of its split is beatable (1 for an empty
           remainder). With column 82 at 1/20 this is a sure win after the move.
85         1 if the move itself is beatable (0 for pass and auction actions)
86         ways to beat the move with a combination of its own type: the number of higher main
           ranks (single, pair, trio and their wings; fours) or higher chain starts (chains and
           planes of the same length) whose main cards all lie in the unseen cards, / 13
87         bombs and the rocket in the unseen cards that beat the move (a higher bomb for a
           bomb; none for the rocket), min(n, 4) / 4
=========  ==================================================================================

*Beatable* (the rule agents' definition, :meth:`climbrl.agents.doudizhu_rules._View.beatable`,
cheap and exact on the unseen multiset, blind to how the unseen cards are split between the
two other seats): a combination of type ``T``, main rank ``m``, length ``L`` and ``n`` cards is
beatable when a rocket is unseen and another seat holds 2 cards or more; or an unseen bomb (of
a rank above ``m`` when it is itself a bomb) while another seat holds 4 or more; or, for a
combination that is no bomb or four-with-two, when another seat holds ``n`` cards or more and
some higher main of ``T`` fits in the unseen cards (wings are not needed to count): for singles
any higher rank up to the red joker, for pairs and trios up to the 2, for chains and planes
a higher start of the same length ending at the ace at the latest. The rocket is never
beatable.

All six columns come from one compiled call per batch (a split of the remainder per legal
move, as the heuristic agent already does every turn).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from climbrl.agents.base import Decision
from climbrl.agents.ddz_hand import MAX_GROUPS, _split
from climbrl.encoders.doudizhu import MOVE_DIM as BASE_MOVE_DIM
from climbrl.encoders.doudizhu import STATE_DIM, DdzEncoder, encode_decisions
from climbrl.games.doudizhu.combos import _CACHE
from climbrl.games.doudizhu.moves import (
    FIRST_PLAY,
    MAIN_COPIES,
    TYPE_BOMB,
    TYPE_FOUR_TWO_PAIR,
    TYPE_FOUR_TWO_SOLO,
    TYPE_PAIR,
    TYPE_ROCKET,
    TYPE_SOLO,
    TYPE_TRIO,
    TYPE_TRIO_PAIR,
    TYPE_TRIO_SOLO,
)

N_SEARCH = 6
MOVE_DIM = BASE_MOVE_DIM + N_SEARCH  # 88
M_PLAYS, M_BEATABLE_GROUPS, M_REST_SAFE, M_MOVE_BEATABLE, M_WAYS, M_BOMBS = range(BASE_MOVE_DIM, MOVE_DIM)

_DECK = np.array([4] * 13 + [1, 1], dtype=np.int64)
_COPIES = np.array(MAIN_COPIES, dtype=np.int64)
TWO, ACE, BLACK, RED = 12, 11, 13, 14
_SINGLE_RANK = np.zeros(len(MAIN_COPIES), dtype=np.bool_)
_SINGLE_RANK[[TYPE_SOLO, TYPE_PAIR, TYPE_TRIO, TYPE_TRIO_SOLO, TYPE_TRIO_PAIR,
              TYPE_FOUR_TWO_SOLO, TYPE_FOUR_TWO_PAIR]] = True


@njit(cache=_CACHE)
def _beaters(typ, main, length, ncards, u, other_max):
    """(ways of the same type, bombs and rocket) that beat a combination (module docstring);
    ``other_max``: the most cards another seat holds. Beatable iff either is positive."""
    if typ == TYPE_ROCKET:
        return 0, 0
    bombs = 0
    if u[BLACK] >= 1 and u[RED] >= 1 and other_max >= 2:
        bombs += 1
    if other_max >= 4:
        lo = main + 1 if typ == TYPE_BOMB else 0
        for q in range(lo, 13):
            if u[q] == 4:
                bombs += 1
    if typ == TYPE_BOMB or typ == TYPE_FOUR_TWO_SOLO or typ == TYPE_FOUR_TWO_PAIR or other_max < ncards:  # noqa: SIM109 (numba)
        return 0, bombs  # a higher four is a bomb: counted above
    k = _COPIES[typ]
    ways = 0
    if _SINGLE_RANK[typ]:
        top = RED if typ == TYPE_SOLO else TWO
        for q in range(main + 1, top + 1):
            if u[q] >= k:
                ways += 1
        return ways, bombs
    for s in range(main + 1, ACE - length + 2):  # chains and planes end at the ace
        fits = True
        for q in range(s, s + length):
            if u[q] < k:
                fits = False
                break
        if fits:
            ways += 1
    return ways, bombs


@njit(cache=_CACHE)
def _group_shape(typ, counts):
    """(main rank, length, cards) of a split group (its main ranks hold MAIN_COPIES cards)."""
    k = _COPIES[typ]
    main = -1
    length = 0
    n = 0
    for q in range(15):
        n += counts[q]
        if counts[q] >= k and k > 0:
            if main < 0:
                main = q
            length += 1
    return main, length, n


@njit(cache=_CACHE)
def search_features(hands, unseen, other_max, seg, ids, counts, types, mains, lengths, ncards, first_play):
    """``[R, N_SEARCH]`` features of the move rows ``ids`` (decision ``seg[r]``), see above."""
    r_n = len(ids)
    out = np.zeros((r_n, 6), dtype=np.float32)
    gtype = np.zeros(MAX_GROUPS, dtype=np.int64)
    gcounts = np.zeros((MAX_GROUPS, 15), dtype=np.int8)
    rest = np.zeros(15, dtype=np.int8)
    for r in range(r_n):
        b = seg[r]
        m = ids[r]
        play = m >= first_play
        left = 0
        for q in range(15):
            rest[q] = hands[b, q] - (counts[m, q] if play else 0)
            left += rest[q]
        u = unseen[b]
        om = other_max[b]
        beatable = 0
        plays = 0
        if left > 0:
            plays, _, ng, _ = _split(rest, True, gtype, gcounts)
            for g in range(ng):
                gm, gl, gn = _group_shape(gtype[g], gcounts[g])
                w, bo = _beaters(gtype[g], gm, gl, gn, u, om)
                if w + bo > 0:
                    beatable += 1
        out[r, 0] = plays / 20.0
        out[r, 1] = beatable / 20.0
        out[r, 2] = 1.0 if beatable == 0 else 0.0
        if play:
            w, bo = _beaters(types[m], mains[m], lengths[m], ncards[m], u, om)
            out[r, 3] = 1.0 if w + bo > 0 else 0.0
            out[r, 4] = w / 13.0
            out[r, 5] = min(bo, 4) / 4.0
    return out


def encode_search(decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states [B, 542], moves [R, 88], offsets [B + 1]): the base encoding plus the columns above."""
    states, base, offsets = encode_decisions(decisions)
    moves = np.zeros((len(base), MOVE_DIM), dtype=np.float32)
    moves[:, :BASE_MOVE_DIM] = base
    if not decisions:
        return states, moves, offsets
    t = decisions[0].game.table
    obs = [d.observation for d in decisions]
    hands = np.array([o.hand for o in obs], dtype=np.int64)
    played = np.array([o.played for o in obs], dtype=np.int64).sum(axis=1)
    left = np.array([o.cards_left for o in obs], dtype=np.int64)
    seats = np.array([o.seat for o in obs], dtype=np.int64)
    left[np.arange(len(obs)), seats] = -1
    ids = np.fromiter((m for d in decisions for m in d.moves), dtype=np.int64, count=len(base))
    seg = np.repeat(np.arange(len(decisions)), np.diff(offsets))
    moves[:, BASE_MOVE_DIM:] = search_features(
        hands, _DECK - hands - played, left.max(axis=1), seg, ids, t.counts, np.asarray(t.type),
        np.asarray(t.main), np.asarray(t.length), np.asarray(t.ncards), FIRST_PLAY)
    return states, moves, offsets


class DdzHandSplitEncoder(DdzEncoder):
    """``doudizhu+handsplit`` (version 1): :class:`DdzEncoder`'s vectors plus the six hand-split
    columns per move; the same rewards."""

    name = "doudizhu+handsplit"
    version = 1
    state_dim = STATE_DIM
    move_dim = MOVE_DIM

    def encode(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return encode_search(decisions)
