"""Dou Dizhu's encoder: the state and move vectors of every Dou Dizhu learner (vectorized numpy).

Card sets are encoded as DouZero does: 54 floats per multiset of cards, 4 slots per rank
``3 .. 2`` (rank ``r`` holding ``n`` cards fills slots ``4r .. 4r + n - 1``, thermometer
style), then one slot for the black and one for the red joker ("cards" below). Seats are
relative to the acting seat: 0 itself, 1 the next to act after it, 2 the one after that (the
one right before it).

State vector (``STATE_DIM`` = 542, float32):

=========  ==================================================================================
index      meaning
=========  ==================================================================================
0-53       own hand (cards)
54-107     unseen cards: every card neither in the own hand nor played (the union of the other
           two hands, plus the kitty while the auction runs); public knowledge for this seat
108-161    the move to beat (cards; zeros when leading and in the auction)
162-176    its type, one-hot over the action table's 15 types (162 = pass: nothing to beat)
177        1 if the acting seat leads (play phase, nothing to beat)
178-180    relative seat that played the move to beat (one-hot; zeros when nothing to beat)
181-342    cards played so far, 54 per relative seat
343-345    cards left per relative seat / 20
346-354    role per relative seat, 3 each: landlord, peasant, none (no landlord yet)
355-356    phase one-hot: bid, play
357        stake / the rules' highest stake (auction: the stake the bids so far would set;
           call score: 3, rob: base stake x 8, fixed landlord: base stake)
358-378    last auction action per relative seat, 7 each: none yet, pass, bid 1, bid 2, bid 3,
           call, rob (this deal's auction, kept during play)
379        bombs and rockets played so far, min(bombs, 6) / 6
380-433    the kitty (cards; zeros until the landlord takes it and shows it)
434-487    the last play of the history (cards; zeros for a pass or no history)
488-541    the play before it (cards; likewise)
=========  ==================================================================================

In the play phase the last two plays of the history were made by relative seats 2 and 1 (seats
act in turn), so, as in DouZero, they carry no seat.

Move vector (``MOVE_DIM`` = 82, float32), one per legal action id:

=========  ==================================================================================
0-53       the cards played (cards; zeros for pass and auction actions)
54-68      type one-hot over the 15 types (54 = pass; zeros for bids, call and rob)
69         chain or plane length / 12 (1 for plain types, 2 for the rocket; 0 pass and auction)
70         main rank / 14 (the chain start, the trio's or four's rank; 0 pass and auction)
71         number of cards / 20
72         1 for pass (in either phase)
73-78      auction action one-hot over ids 0-5 (pass, bid 1-3, call, rob); bid phase only
79         cards left in hand after the move / 20
80         breaks a bomb: uses cards of a rank held four times (or a joker while holding both)
           without being that bomb or the rocket (a four with two breaks its bomb too)
81         1 for a bomb or the rocket
=========  ==================================================================================

The move rows are gathered from a per-table ``[n_ids + 1, 82]`` matrix built once (the extra
row is pass in the auction), then the two hand-dependent columns (79, 80) are filled with
numpy over all moves of the batch at once; only the reading of the observations is per
decision Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from climbrl.agents.base import Decision
from climbrl.encoders.base import RecordedEncoder, RewardTerms
from climbrl.games.doudizhu.moves import (
    FIRST_PLAY,
    NUM_RANKS,
    TYPE_BOMB,
    TYPE_NAMES,
    TYPE_ROCKET,
    ActionTable,
)
from climbrl.games.doudizhu.state import hands_at

STATE_DIM = 542
MOVE_DIM = 82
N_TYPES = len(TYPE_NAMES)  # 15
N_AUCTION = FIRST_PLAY  # ids 0..5
CARD_DIM = 54
MAX_LEN = 12.0
MAX_RANK = 14.0
MAX_CARDS = 20.0
BOMB_CAP = 6

# state layout
S_HAND, S_UNSEEN, S_BEAT, S_BEAT_TYPE, S_LEADING, S_BEAT_SEAT = 0, 54, 108, 162, 177, 178
S_PLAYED, S_LEFT, S_ROLE, S_PHASE, S_STAKE, S_AUCTION, S_BOMBS = 181, 343, 346, 355, 357, 358, 379
S_KITTY, S_LAST1, S_LAST2 = 380, 434, 488
# move layout
M_CARDS, M_TYPE, M_LEN, M_MAIN, M_NCARDS, M_PASS, M_BID, M_LEFT, M_BREAKS, M_BOMB = (
    0, 54, 69, 70, 71, 72, 73, 79, 80, 81)

_FULL = np.array([4] * 13 + [1, 1], dtype=np.int16)
_SLOTS = np.arange(4, dtype=np.int16)
_ROT = (np.arange(3)[None, :] + np.arange(3)[:, None]) % 3  # _ROT[seat, r] = absolute seat of r


def cards(counts: np.ndarray) -> np.ndarray:
    """DouZero's 54-float encoding of rank counts ``[..., 15]`` (see the module docstring)."""
    c = np.asarray(counts)
    out = np.empty((*c.shape[:-1], CARD_DIM), dtype=np.float32)
    out[..., :52] = (c[..., :13, None] > _SLOTS).reshape(*c.shape[:-1], 52)
    out[..., 52:] = c[..., 13:]
    return out


@lru_cache(maxsize=4)
def move_matrix(table: ActionTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(static rows [n_ids + 1, MOVE_DIM], rank counts [n_ids + 1, 15], bomb or rocket
    [n_ids + 1])`` of ``table``'s ids: every move column but 79 and 80 (filled per hand); row
    ``n_ids`` is pass in the auction."""
    n = table.n_ids
    typ = np.asarray(table.type)
    m = np.zeros((n + 1, MOVE_DIM), dtype=np.float32)
    m[:n, M_CARDS:M_CARDS + CARD_DIM] = cards(table.counts)
    plays = np.arange(n) >= FIRST_PLAY
    rows = np.flatnonzero(plays | (np.arange(n) == 0))
    m[rows, M_TYPE + typ[rows]] = 1.0
    m[:n, M_LEN] = np.where(plays, table.length, 0) / MAX_LEN
    m[:n, M_MAIN] = np.where(plays, table.main, 0) / MAX_RANK
    m[:n, M_NCARDS] = table.ncards / MAX_CARDS
    m[0, M_PASS] = 1.0
    m[n] = m[0]
    m[n, M_BID] = 1.0
    for i in range(1, N_AUCTION):  # auction ids only occur in the auction
        m[i, M_BID + i] = 1.0
    bomb = np.zeros(n + 1, dtype=bool)
    bomb[:n] = plays & ((typ == TYPE_BOMB) | (typ == TYPE_ROCKET))
    m[bomb, M_BOMB] = 1.0
    counts = np.zeros((n + 1, NUM_RANKS), dtype=np.int16)
    counts[:n] = table.counts
    for a in (m, counts, bomb):
        a.setflags(write=False)
    return m, counts, bomb


def _max_stake(rules: Any) -> int:
    if rules.landlord is not None:
        return rules.base_stake
    return 3 if rules.auction == "call_score" else rules.base_stake * 8


def _auction_stake(auction: Sequence[tuple[int, int]], rules: Any) -> int:
    """The stake the auction so far would set (0 before any bid or call)."""
    acts = [a for _, a in auction]
    if rules.auction == "call_score":
        return max((a for a in acts if a <= 3), default=0)
    if 4 not in acts:
        return 0
    return rules.base_stake * 2 ** acts.count(5)


def encode_decisions(decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states [B, STATE_DIM], moves [R, MOVE_DIM], offsets [B + 1]) for a batch of decisions.

    The legal moves of decision ``b`` are rows ``offsets[b]:offsets[b + 1]`` in move order.
    """
    b = len(decisions)
    offsets = np.zeros(b + 1, dtype=np.int64)
    if b == 0:
        return (np.zeros((0, STATE_DIM), dtype=np.float32), np.zeros((0, MOVE_DIM), dtype=np.float32), offsets)
    game = decisions[0].game
    table = game.table
    n_ids = table.n_ids
    mm, mcounts, mbomb = move_matrix(table)
    obs = [d.observation for d in decisions]

    # --- per-decision reading (plain Python over the observations' tuples) --------------------
    hands = np.array([o.hand for o in obs], dtype=np.int16)  # [B, 15]
    played_abs = np.array([o.played for o in obs], dtype=np.int16)  # [B, 3, 15]
    left_abs = np.array([o.cards_left for o in obs], dtype=np.float32)  # [B, 3]
    kitty = np.array([o.kitty for o in obs], dtype=np.int16)  # [B, 15]
    ints = np.zeros((b, 12), dtype=np.int64)
    # 0 seat, 1 bid phase, 2 to_beat, 3 its relative seat (-1: none), 4 the landlord's relative
    # seat (-1: none), 5 the last history id, 6 the one before, 7 bombs, 8..10 the last auction
    # action + 1 per relative seat (0: none yet), 11 number of legal moves
    stakes = np.zeros(b, dtype=np.float32)
    for i, (d, o) in enumerate(zip(decisions, obs, strict=True)):
        row = ints[i]
        seat = o.seat
        row[0] = seat
        bid = o.phase == "bid"
        row[1] = bid
        row[2] = o.to_beat
        row[3] = (o.to_beat_player - seat) % 3 if o.to_beat_player >= 0 and o.to_beat else -1
        row[4] = (o.landlord - seat) % 3 if o.landlord >= 0 else -1
        h = o.history
        if h:
            row[5] = h[-1][1]
            if len(h) > 1:
                row[6] = h[-2][1]
        row[7] = o.bombs
        for s, a in o.auction:
            row[8 + (s - seat) % 3] = a + 1
        rules = d.game.rules
        stake = _auction_stake(o.auction, rules) if bid else o.stake
        stakes[i] = min(stake / _max_stake(rules), 1.0)
        row[11] = len(d.moves)

    ar = np.arange(b)
    seat = ints[:, 0]
    rot = _ROT[seat]  # [B, 3] absolute seat of each relative seat
    played = played_abs[ar[:, None], rot]  # [B, 3, 15] relative
    states = np.zeros((b, STATE_DIM), dtype=np.float32)
    states[:, S_HAND:S_HAND + 54] = cards(hands)
    states[:, S_UNSEEN:S_UNSEEN + 54] = cards(_FULL - hands - played.sum(axis=1))
    to_beat = ints[:, 2]
    states[:, S_BEAT:S_BEAT + 54] = mm[to_beat, M_CARDS:M_CARDS + 54]
    states[ar, S_BEAT_TYPE + np.asarray(table.type)[to_beat]] = 1.0
    bid = ints[:, 1].astype(bool)
    states[:, S_LEADING] = (~bid) & (to_beat == 0)
    has = ints[:, 3] >= 0
    states[ar[has], S_BEAT_SEAT + ints[has, 3]] = 1.0
    states[:, S_PLAYED:S_PLAYED + 162] = cards(played).reshape(b, 162)
    states[:, S_LEFT:S_LEFT + 3] = left_abs[ar[:, None], rot] / MAX_CARDS
    land = ints[:, 4]
    role = np.where(land[:, None] < 0, 2, np.where(np.arange(3)[None, :] == land[:, None], 0, 1))  # [B, 3]
    states[ar[:, None], S_ROLE + 3 * np.arange(3)[None, :] + role] = 1.0
    states[ar, S_PHASE + 1 - ints[:, 1]] = 1.0
    states[:, S_STAKE] = stakes
    states[ar[:, None], S_AUCTION + 7 * np.arange(3)[None, :] + ints[:, 8:11]] = 1.0
    states[:, S_BOMBS] = np.minimum(ints[:, 7], BOMB_CAP) / BOMB_CAP
    states[:, S_KITTY:S_KITTY + 54] = cards(kitty)
    states[:, S_LAST1:S_LAST1 + 54] = mm[ints[:, 5], M_CARDS:M_CARDS + 54]
    states[:, S_LAST2:S_LAST2 + 54] = mm[ints[:, 6], M_CARDS:M_CARDS + 54]

    # --- moves: a gather from the static matrix, then the two hand-dependent columns ------------
    counts = ints[:, 11]
    np.cumsum(counts, out=offsets[1:])
    r = int(offsets[-1])
    ids = np.fromiter((m for d in decisions for m in d.moves), dtype=np.int64, count=r)
    seg = np.repeat(ar, counts)
    ids_row = np.where((ids == 0) & bid[seg], n_ids, ids)
    moves = mm[ids_row]  # fancy indexing copies: writable
    hand_n = hands.sum(axis=1)
    moves[:, M_LEFT] = (hand_n[seg] - mcounts[ids_row].sum(axis=1)) / MAX_CARDS
    bombs = np.zeros((b, NUM_RANKS), dtype=bool)
    bombs[:, :13] = hands[:, :13] == 4
    rocket = (hands[:, 13] > 0) & (hands[:, 14] > 0)
    bombs[:, 13] = rocket
    bombs[:, 14] = rocket
    moves[:, M_BREAKS] = ((mcounts[ids_row] > 0) & bombs[seg]).any(axis=1) & ~mbomb[ids_row]
    return states, moves, offsets


LEAD_BONUS = 0.05

GUIDE_TERMINAL = 0.1
"""The guide's terminal reward: +0.1 x the score on a win, -0.1 x the score on a loss."""
GUIDE_LEAD, GUIDE_GIVE = 0.05, 0.02
"""The guide's per-decision weights as written: taking the lead, and losing it."""
GUIDE_RATIO = 20
"""The guide's rule: an intermediate reward is at most 1/20 of a terminal one."""


def current_trick(history: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The plays of the trick in progress (``(seat, action)``, passes included): a trick ends
    after two passes in a row, and its winner leads the next."""
    start, passes = 0, 0
    for i, (_, a) in enumerate(history):
        if a == 0:
            passes += 1
            if passes == 2:
                start, passes = i + 1, 0
        else:
            passes = 0
    return list(history[start:])


def min_score(rules: Any) -> int:
    """The smallest score a finished deal can pay a seat: a peasant's, at the lowest stake, with
    no multiplier (call-score: a bid of 1; otherwise the base stake)."""
    if rules.landlord is None and rules.auction == "call_score":
        return 1
    return rules.base_stake


def guide_step_weights(rules: Any) -> tuple[float, float]:
    """(lead, give): the guide's +0.05 and -0.02, scaled so that the larger is 1/20 of the smallest
    terminal reward under ``rules`` (0.1 x :func:`min_score`). As written, +0.05 against a
    terminal 0.1 x 1 breaks the guide's own 1:20 rule by a factor of ten; its proportions are
    kept."""
    top = GUIDE_TERMINAL * min_score(rules) / GUIDE_RATIO
    return top, top * GUIDE_GIVE / GUIDE_LEAD
ROLES = ("landlord", "peasant_down", "peasant_up", "auction")
"""The roles of ``role_networks``: the game's three (``peasant_down`` acts right after the
landlord, ``peasant_up`` right before it) and ``auction``, every decision before there is a
landlord (all seats' role is ``none`` then), which gets a network of its own: bidding is another
task than playing, and no play role is known yet."""
ROLE_COLUMNS = (S_ROLE + 0, S_ROLE + 3 * 2 + 0, S_ROLE + 3 * 1 + 0, S_ROLE + 2)
"""Per role of :data:`ROLES`, the state column that is 1 exactly then: the acting seat is the
landlord; the seat before it (relative seat 2) is; the seat after it (relative seat 1) is; the
acting seat's role is none. Exactly one of the four is 1 in every state."""


def bombs_dealt_and_kept(state: Any, seat: int) -> tuple[int, int]:
    """(bombs and rockets ``seat`` held when play began, those of them it kept whole).

    The hand at the start of play is what it holds now plus what it played (the kitty included
    for the landlord). A bomb (four of a rank) or the rocket is kept whole unless the seat made
    a play, other than a bomb or the rocket, with a card of it: a four with two, or the rank's
    cards split into smaller combinations (the encoder's "breaks a bomb", move column 80).
    Played as a bomb or still whole in hand at the end both count as kept."""
    return bombs_kept_of(state.observation(seat), state.game.table)[:2]


def bombs_kept_of(obs: Any, table: Any, move: int = 0) -> tuple[int, int, int]:
    """:func:`bombs_dealt_and_kept` read from the seat's own observation (its hand, its plays): (dealt,
    kept whole so far, kept whole after it also plays ``move``), from one walk over its plays."""
    seat = obs.seat
    start = np.asarray(obs.hand, dtype=np.int16) + np.asarray(obs.played[seat], dtype=np.int16)
    bomb = start[:13] == 4  # ranks held four times
    rocket = bool(start[13] and start[14])

    def breaks(m: int) -> np.ndarray:  # the ranks a play (not a pass), neither bomb nor rocket, uses
        return np.asarray(table.counts[m]) > 0 if m and table.type[m] < TYPE_BOMB else np.zeros(NUM_RANKS, bool)

    def kept(broken: np.ndarray) -> int:
        return int((bomb & ~broken[:13]).sum()) + (rocket and not broken[13:].any())

    broken = np.zeros(NUM_RANKS, dtype=bool)
    for m in (m for s, m in obs.history if s == seat):
        broken |= breaks(m)
    return int(bomb.sum()) + rocket, kept(broken), kept(broken | breaks(move))


class DdzEncoder(RecordedEncoder):
    """Dou Dizhu's encoder (version 1: the vectors above).

    Rewards: ``shaping`` gives +0.05 at a play-phase decision where the seat leads after winning
    a trick (nothing to beat, the history non-empty), mirroring Big 2's lead bonus; nothing
    else. The card-count score: each seat of the winning side gets +(cards left of the losing
    side)/20 and each seat of the losing side -(cards left of the losing side)/20 (the losing
    side's cards: the landlord's when the peasants win, both peasants' together when the
    landlord wins), so a peasant is scored by its team's cards; 0 for everyone when nobody won.
    It is not zero-sum (two peasants share one side), like the ``win_loss`` returns.

    Roles (``role_networks``): :data:`ROLES`, read from the state's role block (:data:`ROLE_COLUMNS`).

    Terminal reward terms (:class:`~climbrl.encoders.base.RewardTerms`, each off by default), on
    top of the base (the rules' return: with ``reward: score`` the stake times the bomb and spring
    multipliers; or the card-count score), in a deal that had a landlord (a deal that ended
    without one keeps its base, 0):

    ``cards_left``
        minus ``cards_left`` x (own cards left at the end) / 20: going out, or nearly, pays even
        in a lost game. Only the seat's own hand counts (a peasant whose partner went out is
        charged for its own cards).
    ``bombs_kept``
        potential-based shaping (Ng, Harada and Russell, 1999) with the potential ``bombs_kept``
        x the bombs and rocket the seat still keeps whole (held since play began and not broken
        into small plays or a four with two; played as a bomb counts as kept: see
        :func:`bombs_dealt_and_kept`). Each play-phase decision gets ``gamma x potential after
        the move - potential before`` (:meth:`step_reward`: minus the weight for a move that
        breaks a bomb, scaled by ``gamma`` otherwise), and the end takes the potential back
        (``- gamma x potential at the end``, the potential of the terminal state being 0), so
        the shaped return of a deal is its return minus ``bombs_kept`` x the bombs dealt, a
        constant of the cards: no optimal policy moves, while the signal comes at the move that
        wastes a bomb. Before issue 26 this term paid ``bombs_kept`` per bomb kept, win or lose,
        at the end: not potential-based, it paid for sitting on bombs.
    ``guide``
        the practice guide's reward (section 2.4): the terminal reward becomes 0.1 x the score
        (:meth:`guide_final`), and each play-phase decision gets its role's terms
        (:meth:`step_reward`), scaled to the guide's 1:20 rule (:func:`guide_step_weights`).
    ``pass_penalty``
        subtracted at a decision where the seat passed although a play could beat the table (the
        guide's 5.1).
    ``partner_win``
        True (the rules' team reward): a peasant shares its side's result. False: a peasant whose
        partner went out gets no base reward (0); a peasant that went out itself, a losing
        peasant and the landlord keep theirs.
    """

    game = "doudizhu"
    name = "doudizhu"
    version = 1
    state_dim = STATE_DIM
    move_dim = MOVE_DIM
    roles = ROLES
    role_columns = ROLE_COLUMNS
    reward_terms = ("cards_left", "bombs_kept", "partner_win", "guide", "pass_penalty")
    hidden_dim = 2 * NUM_RANKS
    """The hands of the next seat and of the one after it: rank counts / 4 (jokers: / 1)."""

    def encode(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return encode_decisions(decisions)

    def hidden_targets(self, final_state: Any, observation: Any) -> tuple[np.ndarray, bool]:
        """Play-phase decisions only (:func:`~climbrl.games.doudizhu.state.hands_at`)."""
        hands = hands_at(final_state, observation)
        if hands is None:
            return np.zeros(self.hidden_dim, dtype=np.float32), False
        others = _ROT[observation.seat, 1:]
        return (hands[others] / _FULL).astype(np.float32).ravel(), True

    def final_reward(self, state: Any, seat: int, base: float, terms: RewardTerms) -> float:
        super().final_reward(state, seat, base, terms)  # refuses a term this game lacks
        if state.winner < 0 or state.landlord < 0:
            return 0.0 if terms.guide else base
        r = self.guide_final(state, seat) if terms.guide else base
        if not terms.partner_win and seat != state.winner and seat in state.result().winners:
            r = 0.0
        if terms.cards_left:
            r -= terms.cards_left * state.cards_left()[seat] / MAX_CARDS
        if terms.bombs_kept:  # the potential at the end taken back (step_reward gave the rest)
            r -= terms.gamma * terms.bombs_kept * bombs_dealt_and_kept(state, seat)[1]
        return float(r)

    @staticmethod
    def guide_final(state: Any, seat: int) -> float:
        """The guide's terminal reward: 0.1 x the score (the stake with its bomb and spring
        multipliers; the landlord's is twice a peasant's, it plays both), + on a win, - on a loss,
        whatever the rules' own reward (``win_loss`` too)."""
        sc = state.score()
        pay = sc["pay"] * (2 if seat == state.landlord else 1)
        return GUIDE_TERMINAL * pay * (1 if seat in state.result().winners else -1)

    def step_reward(self, decision: Decision, pick: int, terms: RewardTerms) -> float:
        """The guide's per-decision terms, one function per role (``reward_step``), and the pass
        penalty; the auction's decisions get none.

        - Landlord: + lead when it leads after winning a trick; - give when its last play in the
          trick in progress has been beaten (by either peasant: it lost the lead).
        - Peasant: + lead when it leads after winning a trick; - give only when its last play was
          beaten by the landlord (its partner covering it keeps the lead on their side).
        - ``pass_penalty``: subtracted when the seat passed although a play could beat the table.
        - ``bombs_kept``: ``gamma x potential after the move - potential before`` (the class
          docstring; the end takes the potential back in :meth:`final_reward`).

        ``lead`` and ``give``: :func:`guide_step_weights` of the rules."""
        self.check_terms(terms)
        obs = decision.observation
        if obs.phase != "play":
            return 0.0
        r = 0.0
        if terms.guide:
            lead, give = guide_step_weights(decision.game.rules)
            if obs.to_beat == 0 and len(obs.history) > 0:
                r += lead
            trick = current_trick(obs.history)
            mine = [i for i, (s, a) in enumerate(trick) if s == obs.seat and a]
            if mine:
                landlord = obs.seat == obs.landlord
                beaten = any(a and s != obs.seat and (landlord or s == obs.landlord) for s, a in trick[mine[-1] + 1:])
                if beaten:
                    r -= give
        if terms.pass_penalty and decision.moves[pick] == 0 and len(decision.moves) > 1:
            r -= terms.pass_penalty
        if terms.bombs_kept:
            _, before, after = bombs_kept_of(obs, decision.game.table, int(decision.moves[pick]))
            r += terms.bombs_kept * (terms.gamma * after - before)
        return r

    def shaping(self, decision: Decision) -> float:
        obs = decision.observation
        if obs.phase == "play" and obs.to_beat == 0 and len(obs.history) > 0:  # it won the last trick
            return LEAD_BONUS
        return 0.0

    def card_score(self, state: Any, seat: int) -> float:
        winners = state.result().winners
        if not winners:
            return 0.0
        left = state.cards_left()
        losing = sum(left[s] for s in range(len(left)) if s not in winners)
        return (losing if seat in winners else -losing) / MAX_CARDS
