"""Big 2's dense action ids: every combination the rules allow, numbered ``0..size - 1``.

A Big 2 move is a 52-bit card mask (``0`` is a pass). :func:`action_table` numbers every mask
that :func:`climbrl.games.big2.combos.classify` accepts under one :class:`Rules` (and the
pass), so the action ids are exactly the set of plays the engine can ever offer under those
rules. The order is fixed:

* id 0 is the pass;
* then the plays by number of cards, then by combination type (``combos.SINGLE`` <
  ``PAIR`` < ``TRIPLE`` < ``TWO_PAIR`` < ``FOUR_OF_A_KIND`` < ``STRAIGHT`` < ``FLUSH`` <
  ``FULL_HOUSE`` < ``FOUR_KICKER`` < ``STRAIGHT_FLUSH``), then by the mask as an integer,
  ascending;
* except that straights of more than five cards are numbered by arithmetic rather than
  stored: for each length, its straights' rank sets (windows) in ascending order, and within
  a window the masks in ascending order (the suit of the window's ``k``-th lowest rank is
  digit ``k`` in base 4). Without wrap-around straights this is ascending mask order too
  (windows of one length then have distinct top ranks); with wrap-around, windows through
  the 2 share their top bit and the order is by window first.

Plays of at most five cards are found by classifying every subset of 1..5 cards of the deck
(2.9 million masks, compiled with numba) and stored in a table (a sorted mask array and
``numpy.searchsorted`` map a mask to its id). A play of six or more cards can only be a
straight (``classify`` accepts nothing else there): any choice of suits on the ranks of one
of the rules' straight windows, ``4 ** length`` plays per window. Storing those would take
gigabytes under some rules (the paper preset alone has 29.8 million of them), hence the
arithmetic.

Counts per preset (measured, and checked by ``tests/test_big2_actions.py``):

=============  ====  =====  =======  =========  ====================  ==========
preset         pass  1-3    3-4      5 cards    6-12-card straights   total
                     cards  cards*
=============  ====  =====  =======  =========  ====================  ==========
paper          1     182    2,944    17,676     29,814,784            29,835,587
standard       1     182    0        18,696     0                     18,879
charlesworth   1     182    2,821    18,072     0                     21,076
=============  ====  =====  =======  =========  ====================  ==========

``1-3 cards``: 52 singles, 78 pairs, 52 triples. ``3-4 cards*``: 3- and 4-card straights
(paper: 640 + 2,304) or two pair and four of a kind alone (charlesworth: 2,808 + 13). The
stored table (plays of at most five cards) has 20,803 / 18,879 / 21,076 entries; the paper
preset's long straights (6 to 12 cards: 4**L suit choices on each of 13 - L windows) make up
the rest. Building one table takes about 0.4-0.5 s on one core (plus numba's one-time
compilation, about 3 s, cached on disk); it is built lazily, once per :class:`Rules`
(``functools.lru_cache``), on the first call of ``Big2Game.num_distinct_actions``,
``action_id`` or ``move_of``.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import njit

from climbrl.cards import FULL_DECK, format_cards
from climbrl.games.base import GameError
from climbrl.games.big2 import combos
from climbrl.games.big2.rules import Rules

_CACHE = os.environ.get("CLIMBRL_NUMBA_CACHE", "1") != "0"

MAX_STORED_CARDS = 5
"""Plays of at most this many cards are stored in the table; longer ones are straights,
numbered by arithmetic."""
_BUFFER = 1 << 16  # more than any rule set's plays of at most five cards (< 30,000)


@njit(cache=_CACHE)
def _classify_small(t, out_mask, out_type):
    """Classify every subset of 1..5 of the 52 cards under the table ``t``; write the
    combinations (mask, type) into the outputs in the order met; return their number
    (-1 if the outputs are too short)."""
    idx = np.empty(MAX_STORED_CARDS, dtype=np.int64)
    n = 0
    cap = out_mask.shape[0]
    one = np.int64(1)
    for k in range(1, MAX_STORED_CARDS + 1):
        for i in range(k):
            idx[i] = i
        while True:
            m = np.int64(0)
            for i in range(k):
                m |= one << idx[i]
            typ, _cls, _power = combos.classify_mask(m, t)
            if typ > 0:
                if n >= cap:
                    return -1
                out_mask[n] = m
                out_type[n] = typ
                n += 1
            i = k - 1
            while i >= 0 and idx[i] == 52 - k + i:
                i -= 1
            if i < 0:
                break
            idx[i] += 1
            for j in range(i + 1, k):
                idx[j] = idx[j - 1] + 1
    return n


@dataclass(frozen=True)
class _StraightBlock:
    """The straights of one length above :data:`MAX_STORED_CARDS`: ids ``offset ..
    offset + len(windows) * 4 ** length - 1``."""

    length: int
    offset: int
    windows: tuple[int, ...]  # 13-bit rank sets, ascending
    ranks: tuple[tuple[int, ...], ...]  # each window's ranks, ascending
    index: dict[int, int]  # rank set -> position in ``windows``

    @property
    def size(self) -> int:
        return len(self.windows) * 4 ** self.length


class ActionTable:
    """The dense action ids of one rule set (build with :func:`action_table`).

    ``masks``: the stored plays (pass and every combination of at most five cards) in id
    order; ``types``: their combination types. Longer straights follow, by arithmetic.
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        t = combos.rule_tables(rules)
        out_mask = np.empty(_BUFFER, dtype=np.int64)
        out_type = np.empty(_BUFFER, dtype=np.int64)
        n = _classify_small(t, out_mask, out_type)
        if n < 0:  # pragma: no cover - the buffer is far larger than any rule set needs
            raise RuntimeError("action table buffer too small")
        masks, types = out_mask[:n], out_type[:n]
        ncards = np.array([int(m).bit_count() for m in masks.tolist()], dtype=np.int64)
        order = np.lexsort((masks, types, ncards))
        self.masks = np.concatenate(([0], masks[order])).astype(np.int64)
        self.types = np.concatenate(([combos.PASS], types[order])).astype(np.int8)
        self._ncards = np.concatenate(([0], ncards[order])).astype(np.int8)
        self._sorted_ids = np.argsort(self.masks, kind="stable")
        self._sorted = self.masks[self._sorted_ids]
        for a in (self.masks, self.types, self._ncards, self._sorted_ids, self._sorted):
            a.setflags(write=False)
        # straights longer than five cards: the rank sets the rules' straight table accepts
        tops = t[combos.T_STRAIGHT_TOP:combos.T_STRAIGHT_TOP + (1 << 13)]
        by_length: dict[int, list[int]] = {}
        for rank_set in np.flatnonzero(tops >= 0).tolist():
            length = rank_set.bit_count()
            if length > MAX_STORED_CARDS:
                by_length.setdefault(length, []).append(rank_set)
        offset = len(self.masks)
        blocks = []
        for length in sorted(by_length):
            windows = tuple(sorted(by_length[length]))
            ranks = tuple(tuple(r for r in range(13) if w >> r & 1) for w in windows)
            block = _StraightBlock(length, offset, windows, ranks, {w: i for i, w in enumerate(windows)})
            blocks.append(block)
            offset += block.size
        self._blocks = tuple(blocks)
        self._block_starts = [b.offset for b in blocks]
        self._block_by_length = {b.length: b for b in blocks}
        self.size = offset

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"ActionTable({self.rules.name!r}, size={self.size}, stored={len(self.masks)})"

    @property
    def num_stored(self) -> int:
        """How many ids the stored table holds (pass and the plays of at most five cards)."""
        return len(self.masks)

    def counts(self) -> dict[tuple[int, int], int]:
        """``{(number of cards, type): how many ids}``, in id order (pass is ``(0, PASS)``)."""
        out: dict[tuple[int, int], int] = {}
        for c, typ in zip(self._ncards.tolist(), self.types.tolist(), strict=True):
            out[(c, typ)] = out.get((c, typ), 0) + 1
        for b in self._blocks:
            out[(b.length, combos.STRAIGHT)] = b.size
        return out

    def _error(self, move: object) -> GameError:
        text = repr(move)
        if isinstance(move, (int, np.integer)) and not isinstance(move, bool) and 0 <= move <= FULL_DECK:
            text = format_cards(int(move)) if move else "pass"
        return GameError(f"{text} is no combination under {self.rules.name} rules: it has no action id")

    def id_of(self, move: int) -> int:
        """The id of ``move`` (a card mask); :class:`GameError` if it is no combination."""
        if isinstance(move, bool) or not isinstance(move, (int, np.integer)) or not 0 <= move <= FULL_DECK:
            raise self._error(move)
        move = int(move)
        i = int(np.searchsorted(self._sorted, move))
        if i < len(self._sorted) and int(self._sorted[i]) == move:
            return int(self._sorted_ids[i])
        length = move.bit_count()
        block = self._block_by_length.get(length)
        if block is None:
            raise self._error(move)
        typ = combos.classify(move, self.rules)[0]
        rank_set = 0
        for c in range(52):
            if move >> c & 1:
                rank_set |= 1 << (c >> 2)
        w = block.index.get(rank_set)
        if typ != combos.STRAIGHT or w is None or rank_set.bit_count() != length:
            raise self._error(move)
        digits = 0
        for k, r in enumerate(block.ranks[w]):
            suit = (move >> (4 * r)) & 0xF
            digits += (suit.bit_length() - 1) << (2 * k)
        return block.offset + w * 4 ** length + digits

    def ids_of(self, moves: Sequence[int] | np.ndarray) -> np.ndarray:
        """The ids of many moves at once (int64 array); :class:`GameError` on the first that
        is no combination."""
        arr = np.asarray(moves, dtype=np.int64).reshape(-1)
        pos = np.minimum(np.searchsorted(self._sorted, arr), len(self._sorted) - 1)
        found = self._sorted[pos] == arr
        out = self._sorted_ids[pos].astype(np.int64)
        for i in np.flatnonzero(~found).tolist():
            out[i] = self.id_of(int(arr[i]))
        return out

    def mask_of(self, action_id: int) -> int:
        """The move (card mask) with id ``action_id``; :class:`GameError` out of range."""
        if isinstance(action_id, bool) or not isinstance(action_id, (int, np.integer)) or not (
            0 <= action_id < self.size
        ):
            raise GameError(
                f"{action_id!r} is no Big 2 action id under {self.rules.name} rules (ids 0..{self.size - 1})"
            )
        action_id = int(action_id)
        if action_id < len(self.masks):
            return int(self.masks[action_id])
        block = self._blocks[bisect.bisect_right(self._block_starts, action_id) - 1]
        w, digits = divmod(action_id - block.offset, 4 ** block.length)
        mask = 0
        for r in block.ranks[w]:
            mask |= 1 << (4 * r + (digits & 3))
            digits >>= 2
        return mask


@lru_cache(maxsize=16)
def action_table(rules: Rules) -> ActionTable:
    """The action table of ``rules``, built on first use and cached per rule set."""
    return ActionTable(rules)


__all__ = ["ActionTable", "MAX_STORED_CARDS", "action_table"]
