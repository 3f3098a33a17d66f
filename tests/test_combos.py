"""Combinations and comparisons: scenarios for every type under each preset, plus the engine's
classifier and move generator checked against the independent oracle (``tests/oracle.py``)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from climbrl.cards import mask_to_cards, parse_mask
from climbrl.games.big2 import get_rules
from climbrl.games.big2.combos import (
    FLUSH,
    FOUR_KICKER,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    INVALID,
    PAIR,
    SINGLE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    TRIPLE,
    TWO_PAIR,
    beats,
    classify,
    legal_plays,
)
from tests.oracle import oracle, oracle_beats

PAPER = get_rules("paper")
STANDARD = get_rules("standard")
CW = get_rules("charlesworth")
PRESETS = {"paper": PAPER, "standard": STANDARD, "charlesworth": CW}


def typ(text: str, rules=PAPER) -> int:
    return classify(parse_mask(text), rules)[0]


@pytest.mark.parametrize(
    "rules,text,expected",
    [
        ("paper", "2S", SINGLE),
        ("paper", "7D 7S", PAIR),
        ("paper", "7D 8S", INVALID),
        ("paper", "9C 9H 9S", TRIPLE),
        ("paper", "3D 4C 5H", STRAIGHT),  # paper: straights of 3 or more
        ("paper", "3D 4C 5H 6S", STRAIGHT),
        ("paper", "3D 4C 5H 6S 7D 8C 9H 10S JD QC KH AS", STRAIGHT),  # 12 ranks, 3..A
        ("paper", "QD KC AH 2S", INVALID),  # never a 2 in a straight
        ("paper", "JD QC KH AS 2S", INVALID),
        ("paper", "AD 2C 3H", INVALID),  # no wrap-around
        ("paper", "3H 5H 7H 9H JH", FLUSH),
        ("paper", "3H 4H 5H 6H 7H", STRAIGHT_FLUSH),
        ("paper", "JH QH KH AH 2H", FLUSH),  # 2 breaks the straight: a plain flush
        ("paper", "3H 4H 5H 6H", STRAIGHT),  # 4 suited cards are just a straight
        ("paper", "4D 4C 4H 9S 9D", FULL_HOUSE),
        ("paper", "8D 8C 8H 8S 3D", FOUR_KICKER),
        ("paper", "8D 8C 8H 8S", INVALID),  # four alone is not a hand in the paper rules
        ("paper", "8D 8C 9H 9S", INVALID),  # nor two pair
        ("paper", "8D 8C 8H 9S 10S", INVALID),
        ("paper", "3D 3C 4D 4C 5D 5C", INVALID),  # no "pair sequences"
        ("standard", "3D 4C 5H", INVALID),  # 5-card straights only
        ("standard", "JD QC KH AS 2S", STRAIGHT),  # 2 tops the highest straight
        ("standard", "AD 2C 3H 4S 5D", INVALID),  # no wrap-around
        ("standard", "8D 8C 8H 8S 3D", FOUR_KICKER),
        ("charlesworth", "8D 8C 9H 9S", TWO_PAIR),
        ("charlesworth", "8D 8C 8H 8S", FOUR_OF_A_KIND),
        ("charlesworth", "8D 8C 8H 8S 3D", INVALID),  # no four + kicker
        ("charlesworth", "JD QC KH AS 2S", STRAIGHT),
        ("charlesworth", "2D 3C 4H 5S 6D", INVALID),
        ("charlesworth", "3D 4C 5H 6S", INVALID),
    ],
)
def test_combination_types(rules: str, text: str, expected: int) -> None:
    assert typ(text, PRESETS[rules]) == expected


@pytest.mark.parametrize(
    "rules,a,b,a_beats_b",
    [
        # singles: rank first, then suit D < C < H < S
        ("paper", "2D", "AS", True),
        ("paper", "3C", "3D", True),
        ("paper", "3D", "3C", False),
        ("paper", "10S", "JD", False),
        # pairs by their higher card
        ("paper", "5D 5S", "5C 5H", True),
        ("paper", "KD KC", "AD AC", False),
        ("paper", "AD AC", "KH KS", True),
        # triples by rank
        ("paper", "4D 4C 4H", "3C 3H 3S", True),
        # a single cannot meet a pair, a pair cannot meet a triple
        ("paper", "2S", "3D 3C", False),
        ("paper", "2D 2S", "3D 3C 3H", False),
        # paper straights: same length, higher top card
        ("paper", "4D 5C 6H", "3D 4C 5H", True),
        ("paper", "3D 4C 5S", "3C 4D 5H", True),  # same ranks: top card's suit
        ("paper", "3D 4C 5H 6S", "3D 4C 5H", False),  # a longer straight cannot meet a shorter
        ("paper", "9D 10C JH", "3C 4D 5H 6S", False),
        ("paper", "4D 5C 6H 7S 8D 9C", "3D 4C 5H 6S 7D 8C", True),
        ("paper", "3D 4C 5H 6S 7D", "4D 5C 6H", False),  # a 5-straight is a 5-card hand
        ("paper", "4D 5C 6H", "3D 4C 5H 6S 7D", False),
        # 5-card order: straight < flush < full house < four + 1 < straight flush
        ("paper", "3H 5H 7H 9H JH", "10D JC QH KS AD", True),
        ("paper", "3D 3C 3H 4S 4D", "2H 5H 7H 9H JH", True),
        ("paper", "3D 3C 3H 3S 4D", "AD AC AH KS KD", True),
        ("paper", "3H 4H 5H 6H 7H", "AD AC AH AS KD", True),
        ("paper", "10D JC QH KS AD", "3H 5H 7H 9H JH", False),
        # within a type
        ("paper", "4D 4C 4H 3S 3D", "3C 3H 3S 2D 2S", True),  # full house by the triple
        ("paper", "9D 9C 9H 9S 3D", "8D 8C 8H 8S 2S", True),
        ("paper", "4S 5S 6S 7S 8S", "4H 5H 6H 7H 8H", True),  # straight flush: top card suit
        ("paper", "5D 6D 7D 8D 9D", "4S 5S 6S 7S 8S", True),
        ("paper", "4D 5C 6H 7S 8S", "4C 5D 6D 7D 8C", True),  # straights: top card
        ("paper", "4D 5C 6H 7S 8D", "4C 5D 6D 7D 8C", False),
        # flushes, rank then suit (paper, standard)
        ("paper", "3D 5D 7D 9D JD", "3S 5S 7S 9S 10S", True),
        ("paper", "3D 5D 7D 10D JD", "4S 5S 7S 9S JS", True),  # second card decides
        ("paper", "3S 5S 7S 9S JS", "3H 5H 7H 9H JH", True),  # same ranks: suit decides
        ("standard", "JD QC KH AS 2S", "10D JC QH KS AD", True),
        ("standard", "3D 5D 7D 10D JD", "4S 5S 7S 9S JS", True),
        # charlesworth: flushes by the top card only; 4-card hands
        ("charlesworth", "3S 4S 5S 7S JS", "8H 9H 10H 4H JH", True),
        ("standard", "3S 4S 5S 7S JS", "8H 9H 10H 4H JH", False),
        ("charlesworth", "3S 5S 7S 9S QS", "8H 9H 10H 4H QH", True),
        ("charlesworth", "3S 5S 7S 9S JS", "8H 9H 10H JH QH", False),  # that is a straight flush
        ("charlesworth", "3D 3C 3H 3S", "2D 2C AH AS", True),  # four of a kind beats two pair
        ("charlesworth", "3D 3C 4H 4S", "3H 3S 2D 2C", False),  # two pair by highest card
        ("charlesworth", "5D 5C 4H 4S", "3H 3S 4D 4C", True),
        ("charlesworth", "9D 9C 9H 9S", "8D 8C 8H 8S", True),
        ("charlesworth", "8D 8C 9H 9S", "8D 8C 8H 8S 3D", False),
    ],
)
def test_comparisons(rules: str, a: str, b: str, a_beats_b: bool) -> None:
    r = PRESETS[rules]
    ma, mb = parse_mask(a), parse_mask(b)
    assert beats(ma, mb, r) == a_beats_b
    assert oracle_beats(mask_to_cards(ma), mask_to_cards(mb), r) == a_beats_b


def test_suit_order_knob() -> None:
    r = get_rules("paper", suit_order="SHCD")
    assert beats(parse_mask("3D"), parse_mask("3S"), r)
    assert not beats(parse_mask("3S"), parse_mask("3D"), r)


def test_flush_compare_knobs() -> None:
    low_spades = parse_mask("3S 5S 7S 9S 10S")
    high_diamonds = parse_mask("3D 5D 7D 9D JD")
    assert beats(high_diamonds, low_spades, get_rules("paper", flush_compare="rank_then_suit"))
    assert beats(low_spades, high_diamonds, get_rules("paper", flush_compare="suit_then_rank"))
    assert beats(high_diamonds, low_spades, get_rules("paper", flush_compare="top_card"))
    # top card only: the lower cards never matter
    a, b = parse_mask("3H 4H 5H 7H AH"), parse_mask("QD KD 9D JD AD")
    assert beats(a, b, get_rules("paper", flush_compare="top_card"))
    assert not beats(a, b, get_rules("paper", flush_compare="rank_then_suit"))


def test_wrap_straights_rank_by_their_last_card() -> None:
    r = get_rules("standard", wrap_straights=True)
    assert typ("AD 2C 3H 4S 5D", r) == STRAIGHT
    assert typ("KD AC 2H 3S 4D", r) == STRAIGHT
    assert beats(parse_mask("3D 4C 5H 6S 7D"), parse_mask("AD 2C 3H 4S 5S"), r)
    assert beats(parse_mask("2D 3C 4H 5S 6D"), parse_mask("AD 2C 3H 4S 5S"), r)
    assert beats(parse_mask("JD QC KH AS 2D"), parse_mask("10D JC QH KS AD"), r)


def test_twos_knob_in_paper_straights() -> None:
    r = get_rules("paper", twos_in_straights=True)
    assert typ("KD AC 2H", r) == STRAIGHT
    assert typ("AD 2C 3H", r) == INVALID


def test_kicker_and_four_card_knobs() -> None:
    r = get_rules("paper", four_card_hands=True, four_of_a_kind_kicker=False)
    assert typ("8D 8C 8H 8S", r) == FOUR_OF_A_KIND
    assert typ("8D 8C 8H 8S 3D", r) == INVALID
    assert typ("8D 8C 9H 9S", r) == TWO_PAIR


def test_legal_plays_follow_and_lead_scenarios() -> None:
    hand = parse_mask("3D 3C 4H 5S 6D 6C 6H 2S")
    single = legal_plays(hand, PAPER, to_beat=parse_mask("5D"))
    assert [mask_to_cards(m) for m, _, _ in single][0] == []  # pass first
    assert {m for m, _, _ in single[1:]} == {parse_mask(c) for c in ["5S", "6D", "6C", "6H", "2S"]}
    straights = legal_plays(hand, PAPER, to_beat=parse_mask("3S 4S 5D"))
    got = {m for m, t, _ in straights if t == STRAIGHT}
    assert parse_mask("4H 5S 6H") in got and parse_mask("4H 5S 6D") in got
    assert parse_mask("3C 4H 5S") in got  # same ranks, top 5S beats top 5D
    assert not any(m & parse_mask("2S") for m in got)
    lead = legal_plays(hand, PAPER)
    assert all(t != 0 for _, t, _ in lead)  # no pass when leading
    assert {t for _, t, _ in lead} >= {SINGLE, PAIR, TRIPLE, STRAIGHT}


def test_canonical_order() -> None:
    hand = parse_mask("3D 3C 3H 4S 5D 6C 7H 7S 9H 10H JH QH")
    moves = legal_plays(hand, PAPER)
    keys = [(m.bit_count(), t, p, m) for m, t, p in moves]
    assert keys == sorted(keys)
    assert len(set(m for m, _, _ in moves)) == len(moves)


# --- property checks against the oracle ------------------------------------------------------

rules_st = st.sampled_from(
    [
        PAPER,
        STANDARD,
        CW,
        get_rules("paper", suit_order="SHCD", flush_compare="suit_then_rank", twos_in_straights=True),
        get_rules("standard", wrap_straights=True, flush_compare="top_card", four_card_hands=True),
        get_rules("paper", straight_lengths=(4, 5, 13), twos_in_straights=True),
    ]
)


@st.composite
def clustered_cards(draw, max_size: int = 9) -> list[int]:
    """Cards from a few ranks and suits, so pairs, flushes and straights are common."""
    lo = draw(st.integers(0, 12))
    width = draw(st.integers(1, 7))
    ranks = [(lo + k) % 13 for k in range(width)]
    suits = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True))
    pool = sorted(r * 4 + s for r in ranks for s in suits)
    return draw(st.lists(st.sampled_from(pool), min_size=1, max_size=min(max_size, len(pool)), unique=True))


@settings(max_examples=400, deadline=None)
@given(cards=clustered_cards(max_size=6), rules=rules_st)
def test_classifier_matches_oracle(cards: list[int], rules) -> None:
    mask = sum(1 << c for c in cards)
    t, _, _ = classify(mask, rules)
    assert (t == INVALID) == (oracle(cards, rules) is None)


@settings(max_examples=300, deadline=None)
@given(a=clustered_cards(max_size=5), b=clustered_cards(max_size=5), rules=rules_st)
def test_comparison_matches_oracle(a: list[int], b: list[int], rules) -> None:
    if set(a) & set(b):
        return
    assert beats(sum(1 << c for c in a), sum(1 << c for c in b), rules) == oracle_beats(a, b, rules)


@settings(max_examples=150, deadline=None)
@given(hand=clustered_cards(max_size=10), data=st.data(), rules=rules_st)
def test_generator_equals_brute_force_over_all_subsets(hand: list[int], data, rules) -> None:
    """Every subset of the hand that the oracle accepts (and that beats the play) is generated,
    and nothing else is."""
    hand_mask = sum(1 << c for c in hand)
    rest = [c for c in range(52) if c not in hand]
    to_beat = 0
    if data.draw(st.booleans()):
        pool = data.draw(st.lists(st.sampled_from(rest), min_size=1, max_size=8, unique=True))
        options = legal_plays(sum(1 << c for c in pool), rules)
        to_beat = data.draw(st.sampled_from(options))[0]
    expected = set()
    for k in range(1, len(hand) + 1):
        for sub in itertools.combinations(hand, k):
            sub = list(sub)
            if oracle(sub, rules) is None:
                continue
            if to_beat and not oracle_beats(sub, mask_to_cards(to_beat), rules):
                continue
            expected.add(sum(1 << c for c in sub))
    got = legal_plays(hand_mask, rules, to_beat=to_beat)
    masks = [m for m, _, _ in got]
    if to_beat:
        assert masks[0] == 0
        masks = masks[1:]
    assert len(masks) == len(set(masks))
    assert set(masks) == expected
    for m, t, p in got:
        if m:
            assert classify(m, rules)[0] == t and classify(m, rules)[2] == p
