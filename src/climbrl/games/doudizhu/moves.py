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


def _multisets(n: int, cap: np.ndarray) -> np.ndarray:
    """Rank counts (``int8[m, 15]``) of every multiset of ``n`` ranks with at most ``cap[r]``
    copies of rank ``r``, in the lexicographic order of their sorted rank tuples."""
    combos = _MULTISETS.get(n)
    if combos is None:
        idx = np.array(list(combinations_with_replacement(range(NUM_RANKS), n)), dtype=np.int64)
        combos = np.zeros((len(idx), NUM_RANKS), dtype=np.int8)
        for j in range(n):
            np.add.at(combos, (np.arange(len(idx)), idx[:, j]), 1)
        _MULTISETS[n] = combos
    return combos[(combos <= cap).all(axis=1)]


_MULTISETS: dict[int, np.ndarray] = {}


def _enumerate() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every move of the most permissive rules as (type, length, main, wing counts) arrays,
    sorted by type, length, main rank, then wing ranks ascending (vectorized: building the
    table costs tens of milliseconds, not seconds)."""
    blocks: list[tuple[int, int, int, np.ndarray]] = []  # (type, length, main, wing counts)
    none = np.zeros((1, NUM_RANKS), dtype=np.int8)
    eye = np.eye(NUM_RANKS, dtype=np.int8)
    solo_cap = np.array([3] * 13 + [1, 1], dtype=np.int8)
    pair_cap = np.array([2] * 13 + [0, 0], dtype=np.int8)
    blocks += [(TYPE_SOLO, 1, r, none) for r in range(15)]
    blocks += [(TYPE_PAIR, 1, r, none) for r in range(13)]
    blocks += [(TYPE_TRIO, 1, r, none) for r in range(13)]
    blocks += [(TYPE_TRIO_SOLO, 1, r, np.delete(eye, r, axis=0)) for r in range(13)]
    blocks += [(TYPE_TRIO_PAIR, 1, r, 2 * np.delete(eye[:13], r, axis=0)) for r in range(13)]
    for typ, lengths in ((TYPE_SOLO_CHAIN, range(5, 13)), (TYPE_PAIR_CHAIN, range(3, 11)),
                         (TYPE_TRIO_CHAIN, range(2, 7))):
        blocks += [(typ, n, s, none) for n in lengths for s in range(ACE - n + 2)]
    for n in range(2, 6):
        for s in range(ACE - n + 2):
            cap = solo_cap.copy()
            cap[s:s + n] = 1  # a plane rank's fourth card (only ``wing_same_rank`` allows it)
            blocks.append((TYPE_TRIO_SOLO_CHAIN, n, s, _multisets(n, cap)))
    for n in range(2, 5):
        for s in range(ACE - n + 2):
            cap = pair_cap.copy()
            cap[s:s + n] = 0
            blocks.append((TYPE_TRIO_PAIR_CHAIN, n, s, 2 * _multisets(n, cap)))
    for r in range(13):
        cap = solo_cap.copy()
        cap[r] = 0
        blocks.append((TYPE_FOUR_TWO_SOLO, 1, r, _multisets(2, cap)))
    for r in range(13):
        cap = pair_cap.copy()
        cap[r] = 0
        blocks.append((TYPE_FOUR_TWO_PAIR, 1, r, 2 * _multisets(2, cap)))
    blocks += [(TYPE_BOMB, 1, r, none) for r in range(13)]
    blocks.append((TYPE_ROCKET, 2, BLACK_JOKER, none))
    sizes = [len(w) for *_, w in blocks]
    typ, length, main = (np.repeat(np.array([b[k] for b in blocks], dtype=np.int32), sizes) for k in range(3))
    return typ, length, main, np.concatenate([w for *_, w in blocks])


AUCTION_ROWS = 5  # ids 1..5: bid 1, bid 2, bid 3, call landlord, rob landlord
FIRST_PLAY = 1 + AUCTION_ROWS


def _in_plane(main: np.ndarray, length: np.ndarray) -> np.ndarray:
    """``bool[n, 15]``: rank r lies in row i's main ranks ``main .. main + length - 1``."""
    r = np.arange(NUM_RANKS)
    return (r >= main[:, None]) & (r < (main + length)[:, None])


class _Moves:
    """``table.moves[i]``: the :class:`Move` of id ``i``, made on demand from the arrays."""

    def __init__(self, table: ActionTable) -> None:
        self._t = table

    def __len__(self) -> int:
        return self._t.n_ids

    def __getitem__(self, i: int) -> Move:
        t = self._t
        if not -t.n_ids <= i < t.n_ids:
            raise IndexError(f"action id {i} out of range 0..{t.n_ids - 1}")
        i = int(i) % t.n_ids
        return Move(i, int(t.type[i]), int(t.length[i]), int(t.main[i]), format_counts(t.counts[i]),
                    format_counts(t.wing_counts[i]))

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class ActionTable:
    """The fixed action table as arrays (see the module docstring)."""

    def __init__(self) -> None:
        typ, length, main, wings = _enumerate()
        same_rank = (typ == TYPE_TRIO_SOLO_CHAIN) & ((wings > 0) & _in_plane(main, length)).any(axis=1)
        order = np.argsort(same_rank, kind="stable")  # rows using the fourth card go last
        head = np.zeros(FIRST_PLAY, dtype=np.int32)
        self.type = np.concatenate([head, typ[order]])
        self.length = np.concatenate([head, length[order]])
        self.main = np.concatenate([head, main[order]])
        self.wing_counts = np.concatenate([np.zeros((FIRST_PLAY, NUM_RANKS), dtype=np.int8), wings[order]])
        n = self.n_ids = len(self.type)
        self.n_common = FIRST_PLAY + int((~same_rank).sum())
        self.counts = self.wing_counts.copy()
        plays = np.arange(FIRST_PLAY, n)
        copies = np.array(MAIN_COPIES, dtype=np.int8)[self.type[FIRST_PLAY:]]
        self.counts[FIRST_PLAY:] += _in_plane(self.main[FIRST_PLAY:], self.length[FIRST_PLAY:]) * copies[:, None]
        self.ncards = self.counts.sum(axis=1).astype(np.int32)
        self.moves = _Moves(self)
        # groups: contiguous runs of one (type, length, main) among the plays
        key = (self.type * 16 + self.length) * 16 + self.main
        starts = plays[np.r_[True, key[FIRST_PLAY + 1:] != key[FIRST_PLAY:-1]]]
        self.group_lo = starts.astype(np.int32)
        self.group_hi = np.r_[starts[1:], n].astype(np.int32)
        self.group_type = self.type[self.group_lo].copy()
        self.group_len = self.length[self.group_lo].copy()
        self.group_main = self.main[self.group_lo].copy()
        # classes (type, length) -> their groups (CSR), and the class of every group
        classes, self.group_class = np.unique(self.group_type * 16 + self.group_len, return_inverse=True)
        self.group_class = self.group_class.astype(np.int32)
        self.class_groups = np.argsort(self.group_class, kind="stable").astype(np.int32)
        self.class_ptr = np.searchsorted(self.group_class[self.class_groups],
                                         np.arange(len(classes) + 1)).astype(np.int32)
        self.group_of = np.zeros(n, dtype=np.int32)
        self.group_of[FIRST_PLAY:] = np.repeat(np.arange(len(starts), dtype=np.int32), self.group_hi - self.group_lo)
        self.bomb_groups = np.flatnonzero(self.group_type == TYPE_BOMB).astype(np.int32)
        self.rocket = int(np.flatnonzero(self.type == TYPE_ROCKET)[0])
        # cards -> ids: a base-5 key per multiset, sorted (ties keep ascending ids)
        self._card_keys = self.counts[FIRST_PLAY:].astype(np.int64) @ _KEY_POWERS
        self._by_key = np.argsort(self._card_keys, kind="stable").astype(np.int32)
        self._sorted_keys = self._card_keys[self._by_key]
        for arr in (self.type, self.length, self.main, self.counts, self.wing_counts, self.ncards,
                    self.group_lo, self.group_hi, self.group_type, self.group_len, self.group_main,
                    self.group_class, self.class_groups, self.class_ptr, self.group_of, self.bomb_groups,
                    self._card_keys, self._by_key, self._sorted_keys):
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
        """Every play id whose cards are ``counts`` (any rules), ascending; [] for no combination."""
        c = np.asarray(counts, dtype=np.int64)
        if c.shape != (NUM_RANKS,) or c.min() < 0 or c.max() > 4:
            return []
        key = int(c @ _KEY_POWERS)
        lo, hi = np.searchsorted(self._sorted_keys, [key, key + 1])
        return (self._by_key[lo:hi] + FIRST_PLAY).tolist()

    def id_of_label(self, label: str) -> int | None:
        """The first play id whose :attr:`Move.label` is ``label`` (``333444-57``), or None (a
        label without wings may be several ids: ``44447777`` is 4444+7777 and 7777+4444)."""
        parts = label.split("-")
        try:
            counts = sum(parse_counts(p).astype(np.int64) for p in parts)
        except CardError:
            return None
        return next((i for i in self.ids_of(counts) if self.moves[i].label == label), None)


_KEY_POWERS = 5 ** np.arange(NUM_RANKS, dtype=np.int64)


@lru_cache(maxsize=1)
def action_table() -> ActionTable:
    return ActionTable()


@lru_cache(maxsize=64)
def allowed_mask(rules: Rules) -> np.ndarray:
    """``uint8[n_ids]``: 1 for the plays these rules allow, and pass (auction ids are 0)."""
    t = action_table()
    typ, main, w = t.type, t.main, t.wing_counts
    top = main + t.length - 1
    ok = np.arange(t.n_ids) >= FIRST_PLAY
    if not rules.four_with_two:
        ok &= (typ != TYPE_FOUR_TWO_SOLO) & (typ != TYPE_FOUR_TWO_PAIR)
    solo = (typ == TYPE_TRIO_SOLO_CHAIN) | (typ == TYPE_FOUR_TWO_SOLO)
    bad = np.zeros(t.n_ids, dtype=bool)
    if not rules.joker_pair_wings:
        bad |= (w[:, BLACK_JOKER] > 0) & (w[:, RED_JOKER] > 0)
    if not rules.wing_same_rank:
        bad |= (typ == TYPE_TRIO_SOLO_CHAIN) & ((w > 0) & _in_plane(main, t.length)).any(axis=1)
    if not rules.solo_wings_may_pair:
        bad |= (w >= 2).any(axis=1)
    trio = w == 3
    if not rules.solo_wings_may_trio:
        bad |= trio.any(axis=1)
    if not rules.trio_wing_adjacent:
        r = np.arange(NUM_RANKS)
        adjacent = (r == (main - 1)[:, None]) | ((r == (top + 1)[:, None]) & (r <= ACE))
        bad |= (trio & adjacent).any(axis=1)
    ok &= ~(solo & bad)
    if rules.pair_wings_distinct:
        pairs = (typ == TYPE_TRIO_PAIR_CHAIN) | (typ == TYPE_FOUR_TWO_PAIR)
        ok &= ~(pairs & (w > 2).any(axis=1))
    out = ok.astype(np.uint8)
    out[0] = 1
    out.setflags(write=False)
    return out
