"""The Dou Dizhu action table's structure: the documented id order, counts = main cards + wings,
card and label look-ups equal to a brute-force scan, and a read-only table."""

from __future__ import annotations

import numpy as np
import pytest

from climbrl.games.doudizhu.moves import (
    FIRST_PLAY,
    MAIN_COPIES,
    TYPE_TRIO_SOLO_CHAIN,
    action_table,
    allowed_mask,
    parse_counts,
)
from climbrl.games.doudizhu.rules import get_rules
from climbrl.games.doudizhu.state import DdzGame

T = action_table()


def _row_key(i: int) -> tuple:
    m = T.moves[i]
    same_rank = m.type == TYPE_TRIO_SOLO_CHAIN and any(m.main <= r < m.main + m.length
                                                       for r in np.flatnonzero(T.wing_counts[i]))
    wings = tuple(r for r in range(15) for _ in range(int(T.wing_counts[i, r])))
    return (same_rank, m.type, m.length, m.main, wings)


def test_rows_follow_the_documented_order_and_are_unique() -> None:
    keys = [_row_key(i) for i in range(FIRST_PLAY, T.n_ids)]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert not any(k[0] for k in keys[: T.n_common - FIRST_PLAY])
    assert all(k[0] for k in keys[T.n_common - FIRST_PLAY:])


def test_counts_are_main_cards_plus_wings() -> None:
    for i in range(FIRST_PLAY, T.n_ids, 13):
        m = T.moves[i]
        main = np.zeros(15, dtype=np.int8)
        main[m.main:m.main + m.length] = MAIN_COPIES[m.type]
        assert np.array_equal(T.counts[i], main + T.wing_counts[i])
        assert m.cards == "".join(r * k for r, k in zip("3456789TJQKA2BR", T.counts[i], strict=True))
        assert T.ncards[i] == len(m.cards)
    assert not T.counts[:FIRST_PLAY].any()


def test_ids_of_and_labels_match_a_scan() -> None:
    rng = np.random.default_rng(0)
    for i in rng.integers(FIRST_PLAY, T.n_ids, 300).tolist():
        scan = (np.flatnonzero((T.counts[FIRST_PLAY:] == T.counts[i]).all(axis=1)) + FIRST_PLAY).tolist()
        assert T.ids_of(T.counts[i]) == scan and i in scan
        label = T.moves[i].label
        if "-" in label:
            assert T.id_of_label(label) == i
    assert T.ids_of(parse_counts("345")) == [] and T.ids_of(np.full(15, 9)) == []
    assert T.id_of_label("333444-XY") is None and T.id_of_label("333444-5") is None


def test_winged_plane_labels_parse_back() -> None:
    game = DdzGame("openspiel")
    ok = allowed_mask(game.rules)
    winged = [i for i in range(FIRST_PLAY, T.n_ids, 97) if ok[i] and "-" in T.moves[i].label]
    assert len(winged) > 100
    assert all(game.parse_move(T.moves[i].label) == i for i in winged)


def test_table_is_read_only() -> None:
    with pytest.raises(ValueError):
        T.counts[10, 0] = 3
    with pytest.raises(ValueError):
        allowed_mask(get_rules("standard"))[10] = 0
    with pytest.raises(IndexError):
        T.moves[T.n_ids]


@pytest.mark.parametrize("preset,overrides", [
    ("standard", {}), ("openspiel", {}),
    ("rlcard", {"joker_pair_wings": True, "pair_wings_distinct": False, "wing_same_rank": True}),
])
def test_generator_equals_a_scan_of_the_table(preset, overrides) -> None:
    """The compiled generator (groups, inlined main-card tests) lists exactly the allowed ids the
    hand holds (leading), or pass and those that beat the play (following)."""
    from climbrl.games.doudizhu.combos import legal_ids

    rules = get_rules(preset, **overrides)
    ok = allowed_mask(rules).astype(bool)
    ok[:FIRST_PLAY] = False
    rng = np.random.default_rng(7)
    deck = np.array([r for r in range(13) for _ in range(4)] + [13, 14])
    typ, main, length = T.type, T.main, T.length
    for _ in range(300):
        hand = np.bincount(rng.choice(deck, rng.choice([1, 2, 5, 10, 17, 20]), replace=False),
                           minlength=15).astype(np.int8)
        holds = (T.counts <= hand).all(axis=1) & ok
        assert legal_ids(hand, 0, rules) == np.flatnonzero(holds).tolist()
        prev = int(rng.choice(np.flatnonzero(ok)))
        pt = typ[prev]
        beats = (((typ == pt) & (length == length[prev]) & (main > main[prev]))
                 | ((typ == 13) & ((pt != 13) | (main > main[prev]))) | (typ == 14)) & (pt != 14)
        assert legal_ids(hand, prev, rules) == [0] + np.flatnonzero(holds & beats).tolist()
