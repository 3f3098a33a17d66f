"""Dou Dizhu notation and the fixed action table.

Suits play no part in Dou Dizhu, so a hand or a move is a multiset of ranks: 15 counts for
``3 4 5 6 7 8 9 T J Q K A 2 B R`` (rank index 0..14; ``B`` the black/small joker, ``R`` the
red/big joker). As text it is a string of rank letters in that order (``"33344"``, ``"BR"``);
a pass is ``""`` (or ``"pass"``). Spaces are ignored; ``10`` may be written for ``T``.

Action table. Every distinct move (cards, type, plane/main rank) has a fixed id, the same under
every rule preset (the table is the union of the moves of every knob setting; a preset allows
a subset, see :func:`allowed_mask`):

========================  ===================================================================
ids                       meaning
========================  ===================================================================
0                         pass (in the auction too, as in OpenSpiel)
1, 2, 3                   bid 1, 2, 3 (call-score auction)
4, 5                      call landlord, rob landlord (rob auction)
6 .. n_common-1           plays, ordered by type (the ``TYPE_*`` order below), then length,
                          then main rank, then wing ranks ascending
n_common .. n_ids-1       planes whose solo wing is the fourth card of a plane rank (only
                          ``wing_same_rank`` allows them; kept last so that the other rules
                          use the short id range, ``ActionTable.num_actions``)
========================  ===================================================================

One card string can be several ids when a trio of solo wings sits next to a plane
(``333444555666`` is a 4-trio plane, ``333444555`` + ``666`` and ``444555666`` + ``333``), as in
OpenSpiel. Such moves differ in what they beat, so they keep their own ids; the label
``333444555-666`` (plane, then wings) names one. Under presets without
``trio_wing_adjacent`` every card string is at most one move.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations_with_replacement
from typing import NamedTuple

import numpy as np

from climbrl.games.base import GameError
from climbrl.games.doudizhu.rules import Rules

RANKS = "3456789TJQKA2BR"
NUM_RANKS = 15
BLACK_JOKER = 13
RED_JOKER = 14
MAX_COPIES = (4,) * 13 + (1, 1)
ACE = 11  # the highest rank a chain may reach

TYPE_PASS = 0
TYPE_SOLO = 1
TYPE_PAIR = 2
TYPE_TRIO = 3
TYPE_TRIO_SOLO = 4
TYPE_TRIO_PAIR = 5
TYPE_SOLO_CHAIN = 6
TYPE_PAIR_CHAIN = 7
TYPE_TRIO_CHAIN = 8
TYPE_TRIO_SOLO_CHAIN = 9
TYPE_TRIO_PAIR_CHAIN = 10
TYPE_FOUR_TWO_SOLO = 11
TYPE_FOUR_TWO_PAIR = 12
TYPE_BOMB = 13
TYPE_ROCKET = 14

TYPE_NAMES = (
    "pass", "solo", "pair", "trio", "trio_solo", "trio_pair", "solo_chain", "pair_chain",
    "trio_chain", "trio_solo_chain", "trio_pair_chain", "four_two_solo", "four_two_pair", "bomb",
    "rocket",
)
CHAIN_TYPES = (TYPE_SOLO_CHAIN, TYPE_PAIR_CHAIN, TYPE_TRIO_CHAIN, TYPE_TRIO_SOLO_CHAIN,
               TYPE_TRIO_PAIR_CHAIN)
# copies of each main rank a type needs
MAIN_COPIES = (0, 1, 2, 3, 3, 3, 1, 2, 3, 3, 3, 4, 4, 4, 1)


class CardError(GameError):
    """Cards written wrongly: an unknown token, too many copies of a rank, a bad hand size."""


def parse_counts(text: str, what: str = "cards") -> np.ndarray:
    """Rank counts (int8[15]) of a card string; errors name the offending token."""
    counts = np.zeros(NUM_RANKS, dtype=np.int8)
    s = text.strip()
    if s.lower() == "pass":
        return counts
    i = 0
    while i < len(s):
        ch = s[i]
        if ch.isspace() or ch == ",":
            i += 1
            continue
        if s.startswith("10", i):
            r, tok, i = RANKS.index("T"), "10", i + 2
        else:
            r = RANKS.find(ch.upper())
            if r < 0:
                raise CardError(f"{what}: unknown card {ch!r} at position {i} of {text!r} "
                                f"(ranks are {' '.join(RANKS)}; B/R the black/red joker)")
            tok, i = ch, i + 1
        counts[r] += 1
        if counts[r] > MAX_COPIES[r]:
            raise CardError(f"{what}: too many {tok!r} in {text!r} (a deck holds {MAX_COPIES[r]})")
    return counts


def format_counts(counts) -> str:
    return "".join(RANKS[r] * int(counts[r]) for r in range(NUM_RANKS))


class Move(NamedTuple):
    """One row of the action table."""

    id: int
    type: int
    length: int  # chain / plane length (1 for the other types; 2 for the rocket)
    main: int  # lowest main rank (the chain start, the trio's or four's rank)
    cards: str
    wings: str  # the wing cards ('' when none)

    @property
    def type_name(self) -> str:
        name = TYPE_NAMES[self.type]
        return f"{name}_{self.length}" if self.type in CHAIN_TYPES else name

    @property
    def label(self) -> str:
        """Cards, with the plane and its wings apart for winged planes (``333444-57``)."""
        if self.type in (TYPE_TRIO_SOLO_CHAIN, TYPE_TRIO_PAIR_CHAIN):
            return f"{self.cards_main}-{self.wings}"
        return self.cards or "pass"

    @property
    def cards_main(self) -> str:
        k = MAIN_COPIES[self.type]
        return "".join(RANKS[r] * k for r in range(self.main, self.main + self.length))


def _multisets(ranks: list[int], n: int, cap: dict[int, int]) -> list[tuple[int, ...]]:
    out = []
    for combo in combinations_with_replacement(ranks, n):
        if all(combo.count(r) <= cap[r] for r in set(combo)):
            out.append(combo)
    return out


def _enumerate() -> list[tuple[int, int, int, tuple[int, ...]]]:
    """Every move of the most permissive rules: (type, length, main, wing ranks)."""
    rows: list[tuple[int, int, int, tuple[int, ...]]] = []
    rows += [(TYPE_SOLO, 1, r, ()) for r in range(15)]
    rows += [(TYPE_PAIR, 1, r, ()) for r in range(13)]
    rows += [(TYPE_TRIO, 1, r, ()) for r in range(13)]
    rows += [(TYPE_TRIO_SOLO, 1, r, (w,)) for r in range(13) for w in range(15) if w != r]
    rows += [(TYPE_TRIO_PAIR, 1, r, (w, w)) for r in range(13) for w in range(13) if w != r]
    for typ, lengths in ((TYPE_SOLO_CHAIN, range(5, 13)), (TYPE_PAIR_CHAIN, range(3, 11)),
                         (TYPE_TRIO_CHAIN, range(2, 7))):
        rows += [(typ, n, s, ()) for n in lengths for s in range(ACE - n + 2)]
    solo_cap = {r: (3 if r < 13 else 1) for r in range(15)}
    for n in range(2, 6):
        for s in range(ACE - n + 2):
            plane = range(s, s + n)
            cap = {r: (1 if r in plane and r < 13 else solo_cap[r]) for r in range(15)}
            rows += [(TYPE_TRIO_SOLO_CHAIN, n, s, w) for w in _multisets(list(range(15)), n, cap)]
    for n in range(2, 5):
        for s in range(ACE - n + 2):
            others = [r for r in range(13) if not s <= r < s + n]
            for w in _multisets(others, n, dict.fromkeys(others, 2)):
                rows.append((TYPE_TRIO_PAIR_CHAIN, n, s, tuple(x for x in w for _ in (0, 1))))
    for r in range(13):
        others = [x for x in range(15) if x != r]
        rows += [(TYPE_FOUR_TWO_SOLO, 1, r, w) for w in _multisets(others, 2, solo_cap)]
    for r in range(13):
        others = [x for x in range(13) if x != r]
        for w in _multisets(others, 2, dict.fromkeys(others, 2)):
            rows.append((TYPE_FOUR_TWO_PAIR, 1, r, tuple(x for x in w for _ in (0, 1))))
    rows += [(TYPE_BOMB, 1, r, ()) for r in range(13)]
    rows.append((TYPE_ROCKET, 2, BLACK_JOKER, ()))
    return sorted(rows, key=lambda x: (x[0], x[1], x[2], x[3]))


AUCTION_ROWS = 5  # ids 1..5: bid 1, bid 2, bid 3, call landlord, rob landlord
FIRST_PLAY = 1 + AUCTION_ROWS


def _uses_same_rank(row: tuple[int, int, int, tuple[int, ...]]) -> bool:
    typ, length, main, wings = row
    return typ == TYPE_TRIO_SOLO_CHAIN and any(main <= w < main + length for w in wings)


class ActionTable:
    """The fixed action table as arrays (see the module docstring)."""

    def __init__(self) -> None:
        plays = sorted(_enumerate(), key=lambda x: (_uses_same_rank(x), x))
        rows = [(TYPE_PASS, 0, 0, ())] * (1 + AUCTION_ROWS) + plays
        n = len(rows)
        self.n_ids = n
        self.n_common = FIRST_PLAY + sum(not _uses_same_rank(r) for r in plays)
        self.type = np.array([r[0] for r in rows], dtype=np.int32)
        self.length = np.array([r[1] for r in rows], dtype=np.int32)
        self.main = np.array([r[2] for r in rows], dtype=np.int32)
        self.counts = np.zeros((n, NUM_RANKS), dtype=np.int8)
        self.wing_counts = np.zeros((n, NUM_RANKS), dtype=np.int8)
        self.moves: list[Move] = []
        self.by_cards: dict[bytes, list[int]] = {}
        self.by_label: dict[str, int] = {}
        for i, (typ, length, main, wings) in enumerate(rows):
            if typ != TYPE_PASS:
                self.counts[i, main:main + length] = MAIN_COPIES[typ]
            for w in wings:
                self.counts[i, w] += 1
                self.wing_counts[i, w] += 1
            move = Move(i, typ, length, main, format_counts(self.counts[i]),
                        "".join(RANKS[w] for w in sorted(wings)))
            self.moves.append(move)
            if i >= FIRST_PLAY:
                self.by_cards.setdefault(self.counts[i].tobytes(), []).append(i)
                self.by_label[move.label] = i
        self.ncards = self.counts.sum(axis=1).astype(np.int32)
        # groups: contiguous runs of one (type, length, main) among the plays
        starts = [FIRST_PLAY] + [i for i in range(FIRST_PLAY + 1, n) if rows[i][:3] != rows[i - 1][:3]]
        bounds = starts + [n]
        self.group_lo = np.array(bounds[:-1], dtype=np.int32)
        self.group_hi = np.array(bounds[1:], dtype=np.int32)
        self.group_type = self.type[self.group_lo].copy()
        self.group_len = self.length[self.group_lo].copy()
        self.group_main = self.main[self.group_lo].copy()
        # classes (type, length) -> their groups (CSR), and the class of every group
        keys = sorted({(int(t), int(n_)) for t, n_ in zip(self.group_type, self.group_len, strict=True)})
        index = {k: c for c, k in enumerate(keys)}
        self.group_class = np.array([index[(int(t), int(n_))] for t, n_ in
                                     zip(self.group_type, self.group_len, strict=True)], dtype=np.int32)
        order = np.argsort(self.group_class, kind="stable").astype(np.int32)
        self.class_groups = order
        self.class_ptr = np.searchsorted(self.group_class[order], np.arange(len(keys) + 1)).astype(np.int32)
        self.group_of = np.zeros(n, dtype=np.int32)
        for g, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
            self.group_of[lo:hi] = g
        self.bomb_groups = np.flatnonzero(self.group_type == TYPE_BOMB).astype(np.int32)
        self.rocket = int(np.flatnonzero(self.type == TYPE_ROCKET)[0])
        for arr in (self.type, self.length, self.main, self.counts, self.wing_counts, self.ncards,
                    self.group_lo, self.group_hi, self.group_type, self.group_len, self.group_main,
                    self.group_class, self.class_groups, self.class_ptr, self.group_of, self.bomb_groups):
            arr.setflags(write=False)

    # --- ids of the auction -------------------------------------------------------------------
    @staticmethod
    def bid_id(k: int) -> int:
        """Bid ``k`` (1..3) of the call-score auction."""
        return k

    call_id = 4
    rob_id = 5

    def num_actions(self, rules: Rules) -> int:
        """Ids these rules can use: all of them with ``wing_same_rank``, else the common ones."""
        return self.n_ids if rules.wing_same_rank else self.n_common

    def ids_of(self, counts: np.ndarray) -> list[int]:
        """Every play id whose cards are ``counts`` (any rules); [] for no combination."""
        return self.by_cards.get(np.asarray(counts, dtype=np.int8).tobytes(), [])


@lru_cache(maxsize=1)
def action_table() -> ActionTable:
    return ActionTable()


def _move_allowed(m: Move, wings: list[int], rules: Rules) -> bool:
    typ = m.type
    if typ in (TYPE_FOUR_TWO_SOLO, TYPE_FOUR_TWO_PAIR) and not rules.four_with_two:
        return False
    if typ in (TYPE_TRIO_SOLO_CHAIN, TYPE_FOUR_TWO_SOLO):
        if wings[BLACK_JOKER] and wings[RED_JOKER] and not rules.joker_pair_wings:
            return False
        top = m.main + m.length - 1
        for r in range(NUM_RANKS):
            c = wings[r]
            if not c:
                continue
            if typ == TYPE_TRIO_SOLO_CHAIN and m.main <= r <= top and not rules.wing_same_rank:
                return False
            if c >= 2 and not rules.solo_wings_may_pair:
                return False
            if c == 3:
                if not rules.solo_wings_may_trio:
                    return False
                if (r == m.main - 1 or (r == top + 1 and r <= ACE)) and not rules.trio_wing_adjacent:
                    return False
    pairs = typ in (TYPE_TRIO_PAIR_CHAIN, TYPE_FOUR_TWO_PAIR)
    return not (pairs and rules.pair_wings_distinct and any(c > 2 for c in wings))


@lru_cache(maxsize=64)
def allowed_mask(rules: Rules) -> np.ndarray:
    """``uint8[n_ids]``: 1 for the plays these rules allow, and pass (auction ids are 0)."""
    t = action_table()
    ok = np.array([i >= FIRST_PLAY and _move_allowed(m, t.wing_counts[i].tolist(), rules)
                   for i, m in enumerate(t.moves)], dtype=np.uint8)
    ok[0] = 1
    ok.setflags(write=False)
    return ok
