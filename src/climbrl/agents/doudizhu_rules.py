"""Dou Dizhu's rule agents: ``heuristic`` (strong), ``aggressive`` and ``conservative`` (styles).

All three see only their seat's observation (own hand, the public record: what each seat has
played, cards left, the landlord, the move to beat and who played it) and return an index into
the legal moves, so they play under every preset (``standard``, ``openspiel``, ``rlcard``,
``online``). They share two pieces: the hand split of :mod:`climbrl.agents.ddz_hand` (the
fewest plays a hand needs) and the bidding rule below.

Words used below
    *enemies*: the landlord's are both peasants; a peasant's is the landlord. *Partner*: the
    other peasant. *Unseen cards*: the deck less the own hand and every card played (the
    cards the other two seats hold together; a peasant counts the landlord's kitty cards as
    unseen too). A move is *unbeatable* when no other seat can beat it with unseen cards:
    no higher combination of its type and length fits in the unseen cards (wings are not
    needed to count), no bomb or rocket is unseen (for a bomb: no higher bomb, no rocket),
    and no other seat holds as many cards as the beating move needs. *Plays* and *weakness*
    of a hand: :mod:`climbrl.agents.ddz_hand` (fewest combinations; unattached low singles
    and pairs). A *group* move is one that removes exactly one play from the hand (it is a
    combination of some best split). A move *goes out* when it holds the whole hand.

Bidding (every agent; the auction's actions are ids 0 pass, 1-3 bids, 4 call, 5 rob)
    Hand strength, from the 17 cards held during the auction:
    ``S = 4 x red joker + 3 x black joker + 2 x (2s) + 1 x (aces) + 4 x (bombs, 2222 included)
    + 2 x (rocket) + (8 - plays)``. Jokers and 2s win tricks, bombs and the rocket win them
    and double the stake, and the fewer plays the hand needs, the fewer tricks it must win
    (a dealt hand needs 7-8 plays on average, so the last term is about 0 for a typical
    hand). Call-score auction: the agent wants bid 3 when ``S >= t3``, 2 when ``S >= t2``,
    1 when ``S >= t1``, else nothing; it bids what it wants when that bid is legal (above the
    highest so far), else passes. Rob auction: it calls landlord when ``S >= t_call`` and
    robs when ``S >= t_rob``. Thresholds ``(t1, t2, t3, t_call, t_rob)``: heuristic
    ``(7, 9, 11, 8, 11)``, aggressive ``(5, 7, 9, 6, 8)``, conservative ``(9, 11, 13, 10, 13)``.
    Calibrated on 3,000 ``rlcard`` deals of three heuristic players (the landlord is fixed,
    seat 0; ``S`` counted from its 17 cards before the kitty): the landlord won 29% of the
    games with ``S < 5`` (23% of hands), 42% with ``5 <= S < 7`` (26%), 49% with
    ``7 <= S < 9`` (22%), 56% with ``9 <= S < 11`` (14%), 72% with ``11 <= S < 13`` (8%) and
    80% with ``S >= 13`` (8%). So the heuristic bids 1 on an even chance, 3 on about 3 in 4.
    The answer is always an index of a legal action (pass is always legal in an auction).

``heuristic``, the strong agent, in this order (the first rule that applies decides):
    1. Go out when a legal move holds the whole hand.
    2. Leading
       a. Sure win: when the hand's plays, less its unbeatable groups, are at most 1, lead an
          unbeatable group (no bomb first, the lowest): it keeps the lead, and the last group
          goes out.
       b. A peasant whose partner holds one card leads its lowest single (the partner beats
          it and goes out, or the landlord must spend a card on it).
       c. Otherwise the legal move smallest by this key: danger (2: a beatable single while an
          enemy holds 1 card, or a beatable pair while one holds 2; 1: a beatable single while
          one holds 2; else 0), plays left (so a group of the best split comes first),
          control (bombs, the rocket and moves decided by a 2 or a joker are kept to win
          tricks later), main rank (the lowest first; under danger the highest, so a forced
          single is the hardest to beat), more cards, the weakness left. Leading the lowest
          group first sheds the cards that could never win a trick while the agent holds the
          lead.
    3. Following its partner's play (a peasant): a sure-win move (4a) is taken. When the
       landlord acts next and holds 1 card and the partner's play is beatable, the agent tops
       it with its strongest non-bomb move (the landlord cannot go out over a low card).
       Otherwise it passes: it never beats its partner's play, never bombs it.
    4. Following an enemy's play:
       a. A sure-win move: it is unbeatable, and the hand left needs at most one play beyond
          its unbeatable groups (looked for when at most 3 plays are left); no bomb first,
          then the lowest.
       b. Urgent, an enemy holds 1 card: the strongest non-bomb move that beats (fewest plays
          left among equals), else the lowest bomb, else the rocket.
       c. The cheapest group move that is no bomb or rocket: fewest plays left, then the
          lowest main rank, then the least weakness left (the split is not broken; a 2 or a
          joker goes only when no lower group does it).
       d. Else the cheapest non-bomb move that leaves at most one play more than passing
          (a little damage to the split rather than handing the enemy the trick).
       e. A bomb or the rocket (the lowest first) when an enemy holds at most 4 cards, or
          when it is a group of the split and leaves at most 2 plays.
       f. Pass.
    Nothing in it is random: the same observation gives the same move (like the styles it
    draws one number from its seat's stream per turn, and ignores it).

    Choices measured while building it (``rlcard`` rules, duplicate deals, seed 1, 3,000 to
    9,000 games, the agent in one seat; between equal agents the landlord wins about 0.49):
    urgency at 1 card rather than 2 (landlord against greedy peasants 0.73 against 0.72,
    peasant 0.61 against 0.59); rule 4d (as landlord against peasants without it 0.56; with
    greedy opponents 0.74 against 0.73 as landlord); leading by weakness first (low singles
    before chains) lost as landlord against this order (0.43), leading the largest group
    first lost to greedy peasants (0.67 against 0.74); topping the partner (rule 3) took the
    peasant before the landlord from 0.51 to 0.62 against greedy players (0.57 when it topped
    only with unbeatable moves, 0.60 when the landlord held up to 2 cards).

``aggressive`` (a style for opponent pools): goes out when it can; passes on its partner's
    play; leads the legal move that sheds the most cards (no bomb or rocket unless nothing
    else is left; among equals the lowest type, then the lowest rank); follows an enemy with
    its strongest beating move of the same kind and, when it has none, with its lowest
    bomb, then the rocket, at any point of the game (bombs early). It never passes when it
    can beat an enemy.

``conservative`` (a style for opponent pools): goes out when it can; passes on its partner's
    play. It keeps its bombs, rocket and high cards (2s and jokers) and does not break a bomb:
    before the *late phase* (its hand at most 6 cards, or an enemy at most 1) it leads and
    follows only with moves that use none of those, the lowest main rank first (leads: more
    cards first among equals); in the late phase any non-bomb move. A bomb or the rocket it
    plays only when the hand left holds nothing but bombs and the rocket. When following an
    enemy before the late phase it waits (passes) one time in four even when it could beat
    (a uniform draw from its seeded stream, made every turn). With nothing kept left to
    lead, it leads its lowest move.

Measured strength (WP by role with intervals): README, "Dou Dizhu's rule agents".
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from climbrl.agents.base import Agent, Decision
from climbrl.agents.ddz_hand import evaluate_moves, hand_plays, split_hand
from climbrl.games.doudizhu.moves import (
    MAIN_COPIES,
    TYPE_BOMB,
    TYPE_FOUR_TWO_PAIR,
    TYPE_FOUR_TWO_SOLO,
    TYPE_PAIR,
    TYPE_ROCKET,
    TYPE_SOLO,
)

DECK = np.array([4] * 13 + [1, 1], dtype=np.int64)
TWO, BLACK, RED = 12, 13, 14
ACE = 11
BID_CALL, BID_ROB = 4, 5

THRESHOLDS = {
    "heuristic": (7, 9, 11, 8, 11),
    "aggressive": (5, 7, 9, 6, 8),
    "conservative": (9, 11, 13, 10, 13),
}
"""Bidding thresholds per style: (bid 1, bid 2, bid 3, call, rob)."""

URGENT_CARDS = 1
"""An enemy holding this many cards or fewer must be stopped at any cost."""
RELAX_PLAYS = 1
"""When no group move beats an enemy, a move that leaves at most this many plays more than
passing would is played."""
TOP_CARDS = 1
"""A peasant tops its partner's beatable play when the landlord, next to act, holds this many
cards or fewer."""
BOMB_CARDS = 4
"""An enemy holding this many cards or fewer may be bombed."""
LATE_HAND = 6
"""The conservative agent's late phase starts when its hand holds this many cards or fewer."""


# --- bidding -----------------------------------------------------------------------------------
def hand_strength(hand: Any) -> int:
    """The bidding score ``S`` of the module docstring for a hand (15 rank counts)."""
    c = np.asarray(hand, dtype=np.int64)
    rocket = int(c[BLACK] == 1 and c[RED] == 1)
    bombs = int(np.sum(c[:13] == 4))
    plays = hand_plays(c)[0]
    return int(4 * c[RED] + 3 * c[BLACK] + 2 * c[TWO] + c[ACE] + 4 * bombs + 2 * rocket + (8 - plays))


def bid_action(strength: int, legal: list[int], thresholds: tuple[int, ...]) -> int:
    """The auction action (an id among ``legal``) for a hand of this strength."""
    t1, t2, t3, t_call, t_rob = thresholds
    if BID_CALL in legal:
        return BID_CALL if strength >= t_call else 0
    if BID_ROB in legal:
        return BID_ROB if strength >= t_rob else 0
    want = 3 if strength >= t3 else 2 if strength >= t2 else 1 if strength >= t1 else 0
    return want if want in legal else 0


# --- what the seat knows -----------------------------------------------------------------------
class _View:
    """The facts of one play decision that every rule reads."""

    def __init__(self, d: Decision) -> None:
        obs = d.observation
        self.d = d
        self.obs = obs
        self.table = d.game.table
        self.hand = np.asarray(obs.hand, dtype=np.int64)
        self.size = int(self.hand.sum())
        self.seat = obs.seat
        self.landlord = obs.landlord
        self.peasant = obs.seat != obs.landlord
        others = [(obs.seat + 1) % 3, (obs.seat + 2) % 3]
        self.enemies = [obs.landlord] if self.peasant else others
        self.partner = next((s for s in others if s != obs.landlord), -1) if self.peasant else -1
        self.left = obs.cards_left
        self.enemy_min = min(self.left[e] for e in self.enemies)
        self.other_max = max(self.left[s] for s in others)
        self.unseen = DECK - self.hand - np.sum(np.asarray(obs.played, dtype=np.int64), axis=0)
        self.ncards = [d.game.ncards[m] for m in d.moves]
        self.leading = obs.to_beat == 0

    def beatable(self, move: int) -> bool:
        """Whether another seat could beat ``move`` with the unseen cards (module docstring)."""
        t = self.table
        typ, main, length = int(t.type[move]), int(t.main[move]), int(t.length[move])
        u = self.unseen
        rocket = u[BLACK] >= 1 and u[RED] >= 1 and self.other_max >= 2
        if typ == TYPE_ROCKET:
            return False
        if rocket:
            return True
        if self.other_max >= 4 and any(u[q] == 4 for q in range(main + 1 if typ == TYPE_BOMB else 0, 13)):
            return True
        if typ in (TYPE_BOMB, TYPE_FOUR_TWO_SOLO, TYPE_FOUR_TWO_PAIR):
            return False  # a higher four is a bomb: counted above
        if self.other_max < int(t.ncards[move]):
            return False
        k = MAIN_COPIES[typ]
        if length == 1 or typ == TYPE_SOLO:  # solo, pair, trio (+ wings)
            top = RED if typ == TYPE_SOLO else TWO
            return any(u[q] >= k for q in range(main + 1, top + 1))
        # chains and planes end at the ace
        return any(all(u[q] >= k for q in range(s, s + length)) for s in range(main + 1, ACE - length + 2))

    def group_moves(self, plays: int, after: np.ndarray) -> list[int]:
        return [i for i in range(len(self.d.moves)) if self.d.moves[i] and after[i] <= plays - 1]


def _go_out(v: _View) -> int | None:
    for i, n in enumerate(v.ncards):
        if n == v.size:
            return i
    return None


def _is_bomb(v: _View, i: int) -> bool:
    return v.d.types[i] >= TYPE_BOMB


# --- the strong agent ----------------------------------------------------------------------------
class _DdzAgent(Agent):
    """The auction part shared by the three: bid from :func:`hand_strength`."""

    games = ("doudizhu",)
    style = "heuristic"

    def act(self, decision: Decision, rng: random.Random) -> int:
        u = rng.random()  # drawn every turn, so a seat's stream does not depend on the position
        if len(decision.moves) == 1:
            return 0
        if decision.observation.phase == "bid":
            a = bid_action(hand_strength(decision.hand), decision.moves, THRESHOLDS[self.style])
            return decision.moves.index(a)
        return self.play(_View(decision), u)

    def play(self, v: _View, u: float) -> int:
        raise NotImplementedError


class DdzHeuristicAgent(_DdzAgent):
    """The strong rule agent (module docstring, ``heuristic``)."""

    name = "heuristic"
    style = "heuristic"

    def _unbeatable_groups(self, v: _View, groups: list[tuple[int, np.ndarray]]) -> int:
        n = 0
        for _, counts in groups:
            ids = v.table.ids_of(counts)
            if ids and not v.beatable(ids[0]):
                n += 1
        return n

    def _sure_win(self, v: _View, i: int, after_plays: int) -> bool:
        """Move ``i`` keeps the lead and the rest goes out behind unbeatable groups."""
        m = v.d.moves[i]
        if after_plays > 3 or v.beatable(m):
            return False
        plays, _, groups = split_hand(v.hand - v.table.counts[m])
        return plays - self._unbeatable_groups(v, groups) <= 1

    def play(self, v: _View, u: float) -> int:
        i = _go_out(v)
        if i is not None:
            return i
        d = v.d
        plays, _, groups = split_hand(v.hand)
        after, weak = evaluate_moves(v.hand, d.moves, v.table.counts)
        if v.leading:
            return self._lead(v, plays, groups, after, weak)
        beats = [i for i in range(len(d.moves)) if d.moves[i]]
        sure = [i for i in beats if self._sure_win(v, i, int(after[i]))]
        if sure:
            return min(sure, key=lambda i: (_is_bomb(v, i), d.powers[i], int(after[i])))
        if v.peasant and v.obs.to_beat_player == v.partner:
            return self._after_partner(v, beats)
        plain = [i for i in beats if not _is_bomb(v, i)]
        bombs = [i for i in beats if _is_bomb(v, i)]
        if v.enemy_min <= URGENT_CARDS:
            if plain:
                return max(plain, key=lambda i: (d.powers[i], -int(after[i])))
            return min(bombs, key=lambda i: (d.types[i], d.powers[i])) if bombs else 0
        for most in (plays - 1, plays + RELAX_PLAYS):
            ok = [i for i in plain if after[i] <= most]
            if ok:
                return min(ok, key=lambda i: (int(after[i]), d.powers[i], int(weak[i])))
        if bombs:
            if v.enemy_min <= BOMB_CARDS:
                return min(bombs, key=lambda i: (d.types[i], d.powers[i]))
            ok = [i for i in bombs if after[i] <= min(plays - 1, 2)]
            if ok:
                return min(ok, key=lambda i: (d.types[i], d.powers[i]))
        return 0

    def _after_partner(self, v: _View, beats: list[int]) -> int:
        d = v.d
        landlord_next = (v.seat + 1) % 3 == v.landlord
        if landlord_next and v.left[v.landlord] <= TOP_CARDS and v.beatable(v.obs.to_beat):
            plain = [i for i in beats if not _is_bomb(v, i)]
            if plain:
                return max(plain, key=lambda i: d.powers[i])
        return 0

    def _lead(self, v: _View, plays: int, groups: list, after: np.ndarray, weak: np.ndarray) -> int:
        d = v.d
        t = v.table
        if plays - self._unbeatable_groups(v, groups) <= 1:
            sure = [i for i in v.group_moves(plays, after) if not v.beatable(d.moves[i])]
            if sure:
                return min(sure, key=lambda i: (d.types[i] >= TYPE_BOMB, d.powers[i]))
        if v.peasant and v.left[v.partner] == 1:
            singles = [i for i in range(len(d.moves)) if d.types[i] == TYPE_SOLO]
            return min(singles, key=lambda i: d.powers[i])

        def danger(i: int) -> int:
            typ = d.types[i]
            if typ not in (TYPE_SOLO, TYPE_PAIR) or not v.beatable(d.moves[i]):
                return 0
            if typ == TYPE_SOLO and v.enemy_min == 1 or typ == TYPE_PAIR and v.enemy_min == 2:
                return 2
            return 1 if typ == TYPE_SOLO and v.enemy_min == 2 else 0

        def key(i: int) -> tuple:
            m = d.moves[i]
            dz = danger(i)
            control = int(d.types[i] >= TYPE_BOMB or d.powers[i] >= TWO)
            main = -d.powers[i] if dz else d.powers[i]
            return (dz, int(after[i]), control, main, -int(t.ncards[m]), int(weak[i]))

        return min(range(len(d.moves)), key=key)


def sure_win_moves(decision: Decision) -> list[int]:
    """Indices of the legal plays of a follow decision that win for sure by the heuristic's rule
    4a (unbeatable, and the hand left needs at most one play beyond its unbeatable groups). The
    interpretability window uses it to tell a peasant's winning top of its partner's play from
    one that gives the partner's trick away."""
    v = _View(decision)
    after, _ = evaluate_moves(v.hand, decision.moves, v.table.counts)
    agent = DdzHeuristicAgent()
    return [i for i, m in enumerate(decision.moves) if m and agent._sure_win(v, i, int(after[i]))]


# --- the two styles ------------------------------------------------------------------------------
class DdzStyleAgent(_DdzAgent):
    """``aggressive`` or ``conservative`` (module docstring)."""

    def __init__(self, aggressive: bool) -> None:
        self.aggressive = aggressive
        self.name = self.style = "aggressive" if aggressive else "conservative"

    def play(self, v: _View, u: float) -> int:
        i = _go_out(v)
        if i is not None:
            return i
        d = v.d
        if not v.leading and v.peasant and v.obs.to_beat_player == v.partner:
            return 0
        idx = [i for i in range(len(d.moves)) if d.moves[i]]
        plain = [i for i in idx if not _is_bomb(v, i)]
        bombs = [i for i in idx if _is_bomb(v, i)]
        if self.aggressive:
            if v.leading:
                pool = plain or bombs
                return min(pool, key=lambda i: (-v.ncards[i], d.types[i], d.powers[i]))
            if plain:
                return max(plain, key=lambda i: d.powers[i])
            if bombs:
                return min(bombs, key=lambda i: (d.types[i], d.powers[i]))
            return 0
        late = v.size <= LATE_HAND or v.enemy_min <= URGENT_CARDS
        if not v.leading and not late and u < 0.25:
            return 0
        if not late:
            held4 = v.hand[:13] == 4
            counts = v.table.counts

            def keeps(i: int) -> bool:
                c = counts[d.moves[i]]
                return not (c[TWO:].any() or (c[:13].astype(bool) & held4).any())

            safe = [i for i in plain if keeps(i)]
        else:
            safe = plain
        if safe:
            if v.leading:
                return min(safe, key=lambda i: (d.powers[i], -v.ncards[i], d.types[i]))
            return min(safe, key=lambda i: d.powers[i])
        if bombs:
            for i in sorted(bombs, key=lambda i: (d.types[i], d.powers[i])):
                rest = v.hand - v.table.counts[d.moves[i]]
                only_bombs = all(rest[q] in (0, 4) for q in range(13)) and rest[BLACK] == rest[RED]
                if only_bombs:
                    return i
        if v.leading:  # nothing kept is left to lead: the lowest move
            return min(idx, key=lambda i: (d.types[i] >= TYPE_BOMB, d.powers[i]))
        return 0


__all__ = ["DdzHeuristicAgent", "DdzStyleAgent", "hand_strength", "bid_action", "sure_win_moves", "THRESHOLDS"]
