"""Big 2's dense action ids (``climbrl.games.big2.actions``): dense, round-trip, cover every
legal move of random games, reject non-combinations, and count what an independent
combinatorial count says, under every preset and a few knob mixes."""

from __future__ import annotations

import random
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from climbrl.cards import FULL_DECK, mask_to_cards, parse_mask
from climbrl.games.base import Game, GameError
from climbrl.games.big2 import Big2Game
from climbrl.games.big2.combos import INVALID, PASS, STRAIGHT, classify
from tests.oracle import oracle
from tests.random_play import play

PRESET_GAMES = {p: Big2Game(p) for p in ("paper", "standard", "charlesworth")}
GAMES = [
    *PRESET_GAMES.values(),
    Big2Game("paper", pass_locks_out=True, four_card_hands=True),
    Big2Game("standard", wrap_straights=True, suit_order="SHCD", flush_compare="suit_then_rank"),
    # long straights through the 2 and wrapping round to the 3: windows sharing their top bit
    Big2Game("paper", twos_in_straights=True, wrap_straights=True, four_of_a_kind_kicker=False),
]
IDS = [f"{g.rules.name}-{i}" for i, g in enumerate(GAMES)]


def windows(length: int, rules) -> int:
    """How many rank sets make a straight of ``length`` (independently of the engine)."""
    if rules.wrap_straights:
        return 1 if length == 13 else 13
    highest = 12 if rules.twos_in_straights else 11  # top rank a straight may reach
    return max(0, highest - length + 2)


def combinatorial_count(rules) -> int:
    """Pass + every combination the rules allow, counted by combinatorics."""
    n = 1 + 52 + 13 * comb(4, 2) + 13 * comb(4, 3)  # pass, singles, pairs, triples
    if rules.four_card_hands:
        n += comb(13, 2) * comb(4, 2) ** 2 + 13  # two pair, four of a kind alone
    n += sum(windows(length, rules) * 4**length for length in rules.straight_lengths)  # incl. straight flushes
    n += 4 * (comb(13, 5) - windows(5, rules))  # flushes that are no straight
    n += 13 * comb(4, 3) * 12 * comb(4, 2)  # full houses
    if rules.four_of_a_kind_kicker:
        n += 13 * 48
    return n


@pytest.mark.parametrize("preset, expected", [("paper", 29_835_587), ("standard", 18_879),
                                              ("charlesworth", 21_076)])
def test_preset_counts_match_combinatorics_and_the_docs(preset, expected) -> None:
    game = PRESET_GAMES[preset]
    assert combinatorial_count(game.rules) == expected
    assert game.num_distinct_actions == expected


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_count_matches_combinatorics(game) -> None:
    assert game.num_distinct_actions == combinatorial_count(game.rules)
    assert sum(game.actions.counts().values()) == game.num_distinct_actions


def test_paper_counts_by_kind() -> None:
    counts = PRESET_GAMES["paper"].actions.counts()
    by_cards: dict[int, int] = {}
    for (ncards, _), k in counts.items():
        by_cards[ncards] = by_cards.get(ncards, 0) + k
    assert by_cards == {0: 1, 1: 52, 2: 78, 3: 52 + 10 * 64, 4: 9 * 256, 5: 17_676,
                        **{L: (13 - L) * 4**L for L in range(6, 13)}}


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_game_protocol(game) -> None:
    assert isinstance(game, Game)
    assert game.action_id(0) == 0 and game.move_of(0) == 0


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_stored_table_is_in_documented_order_and_every_entry_a_combination(game) -> None:
    table = game.actions
    masks = table.masks.tolist()
    assert len(set(masks)) == len(masks)
    keys = [(m.bit_count(), t, m) for m, t in zip(masks, table.types.tolist(), strict=True)]
    assert keys == sorted(keys) and keys[0] == (0, PASS, 0)
    assert max(k[0] for k in keys) <= 5
    np.testing.assert_array_equal(table.ids_of(masks), np.arange(len(masks)))
    for m, t in zip(masks[1:], table.types.tolist()[1:], strict=True):
        assert classify(m, game.rules)[0] == t != INVALID
    for m in random.Random(0).sample(masks[1:], 500):  # the independent classifier agrees
        assert oracle(mask_to_cards(m), game.rules) is not None


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_ids_are_dense_and_round_trip(game) -> None:
    n = game.num_distinct_actions
    rng = random.Random(1)
    sample = {0, 1, n - 1, *(rng.randrange(n) for _ in range(3000))}
    counts = game.actions.counts()
    start = 0
    for k in counts.values():  # both ends of every (cards, type) block
        sample |= {start, start + k - 1}
        start += k
    for i in sorted(sample):
        m = game.move_of(i)
        assert 0 <= m <= FULL_DECK
        assert m == 0 or classify(m, game.rules)[0] != INVALID
        assert game.action_id(m) == i
    # ids run by number of cards
    cards = [game.move_of(i).bit_count() for i in sorted(sample)]
    assert cards == sorted(cards)


@pytest.mark.parametrize("game", [g for g in GAMES if not g.rules.wrap_straights],
                         ids=[i for g, i in zip(GAMES, IDS, strict=True) if not g.rules.wrap_straights])
def test_long_straights_ascend_by_mask_without_wrap(game) -> None:
    table = game.actions
    rng = random.Random(2)
    for _ in range(200):
        i = rng.randrange(table.num_stored, max(table.num_stored + 1, table.size - 1))
        if i + 1 >= table.size:
            continue
        a, b = game.move_of(i), game.move_of(i + 1)
        if a.bit_count() == b.bit_count():
            assert a < b


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_every_legal_move_of_random_games_has_an_id(game) -> None:
    seen: set[int] = set()

    def check(s, rng):
        moves = s.legal_moves()
        ids = game.actions.ids_of(moves)
        assert ids.tolist() == [game.action_id(m) for m in moves]
        assert len(set(ids.tolist())) == len(moves)
        for m, i in zip(moves, ids.tolist(), strict=True):
            assert 0 <= i < game.num_distinct_actions
            assert game.move_of(i) == m
        seen.update(moves)

    for seed in range(6):
        play(game, seed, 100 + seed, check)
    assert len(seen) > 100


def test_long_straights_met_in_play_have_ids() -> None:
    game = PRESET_GAMES["paper"]
    hand = parse_mask("3D 4C 5H 6S 7D 8C 9H 10S JD QC KH AS 2D")
    cards = ["3D", "4C", "5H", "6S", "7D", "8C", "9H", "10S", "JD", "QC", "KH", "AS"]
    ids = {}
    for length in range(6, 13):
        m = parse_mask(" ".join(cards[:length]))
        assert m & ~hand == 0 and classify(m, game.rules)[0] == STRAIGHT
        ids[length] = game.action_id(m)
        assert game.move_of(ids[length]) == m
    assert list(ids.values()) == sorted(ids.values())
    assert ids[12] >= game.num_distinct_actions - 4**12


@pytest.mark.parametrize("game", GAMES, ids=IDS)
@pytest.mark.parametrize("text", ["3D 4D", "3D 3C 4D", "3D 4C 5H 6S 8D", "3D 3C 3H 4D 5D 6D",
                                  "3D 4C 5H 6S 7D 7C"])
def test_non_combinations_raise_naming_the_move(game, text) -> None:
    mask = parse_mask(text)
    with pytest.raises(GameError, match=game.format_move(mask)):
        game.action_id(mask)


@pytest.mark.parametrize("game", GAMES, ids=IDS)
def test_bad_values_raise(game) -> None:
    n = game.num_distinct_actions
    for bad in (-1, n, n + 10**9, True, 1.0, "3"):
        with pytest.raises(GameError):
            game.move_of(bad)
    for bad in (-1, FULL_DECK + 1, True, 1.5, "3D"):
        with pytest.raises(GameError):
            game.action_id(bad)
    with pytest.raises(GameError):
        game.actions.ids_of([0, parse_mask("3D 4D")])


def test_rule_knobs_decide_membership() -> None:
    paper, standard, cw = PRESET_GAMES["paper"], PRESET_GAMES["standard"], PRESET_GAMES["charlesworth"]
    six = parse_mask("3D 4C 5H 6S 7D 8C")
    quad_kicker = parse_mask("3D 3C 3H 3S 4D")
    two_pair = parse_mask("3D 3C 4H 4S")
    top_with_two = parse_mask("JD QC KH AS 2D")
    assert paper.action_id(six) > 0
    with pytest.raises(GameError):
        standard.action_id(six)
    assert paper.action_id(quad_kicker) > 0 and standard.action_id(quad_kicker) > 0
    with pytest.raises(GameError):
        cw.action_id(quad_kicker)
    assert cw.action_id(two_pair) > 0
    with pytest.raises(GameError):
        paper.action_id(two_pair)
    assert standard.action_id(top_with_two) > 0
    with pytest.raises(GameError):
        paper.action_id(top_with_two)


def test_table_is_built_once_per_rules() -> None:
    assert Big2Game("paper").actions is PRESET_GAMES["paper"].actions
    assert Big2Game("paper", reward="cards").actions is not PRESET_GAMES["paper"].actions


@settings(max_examples=300, deadline=None)
@given(game=st.sampled_from(GAMES), cards=st.sets(st.integers(0, 51), max_size=13))
def test_a_mask_has_an_id_exactly_when_classify_accepts_it(game, cards) -> None:
    mask = sum(1 << c for c in cards)
    valid = mask == 0 or classify(mask, game.rules)[0] != INVALID
    if valid:
        i = game.action_id(mask)
        assert 0 <= i < game.num_distinct_actions and game.move_of(i) == mask
    else:
        with pytest.raises(GameError):
            game.action_id(mask)


@settings(max_examples=300, deadline=None)
@given(game=st.sampled_from(GAMES), data=st.data())
def test_every_id_round_trips(game, data) -> None:
    i = data.draw(st.integers(0, game.num_distinct_actions - 1))
    assert game.action_id(game.move_of(i)) == i
