"""Card notation: parsing, printing, masks and clear errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from climbrl.cards import (
    CardError,
    cards_to_mask,
    format_card,
    format_cards,
    mask_to_cards,
    parse_card,
    parse_cards,
    parse_mask,
)


def test_ids_follow_rank_then_suit() -> None:
    assert parse_card("3D") == 0
    assert parse_card("3C") == 1
    assert parse_card("3S") == 3
    assert parse_card("4D") == 4
    assert parse_card("2S") == 51
    assert parse_card("10H") == 4 * 7 + 2


@pytest.mark.parametrize("text", ["3♦ 10♠ 2♠", "3d 10s 2s", "3D TS 2S", "3D, 10S, 2S", " 3D  10S 2S "])
def test_notations_are_accepted(text: str) -> None:
    assert parse_cards(text) == [0, 31, 51]


def test_print() -> None:
    assert format_cards(parse_mask("2S 3D 10S")) == "3D 10S 2S"
    assert format_cards([51, 0], symbols=True) == "3♦ 2♠"
    assert format_card(47) == "AS"


@pytest.mark.parametrize(
    "text,token",
    [("3D 1S", "1S"), ("3D 11S", "11S"), ("3D 4X", "4X"), ("3D Q", "Q"), ("ZZ", "ZZ")],
)
def test_bad_tokens_are_named(text: str, token: str) -> None:
    with pytest.raises(CardError, match=repr(token)):
        parse_cards(text)


def test_duplicates_and_counts() -> None:
    with pytest.raises(CardError, match="duplicate card '3d'"):
        parse_cards("3D 4D 3d")
    with pytest.raises(CardError, match="expected 13 cards, got 2"):
        parse_cards("3D 4D", count=13)
    with pytest.raises(CardError, match="duplicate"):
        cards_to_mask([5, 5])
    with pytest.raises(CardError, match="invalid card id"):
        format_card(52)


@given(st.sets(st.integers(0, 51)))
def test_round_trips(cards: set[int]) -> None:
    mask = cards_to_mask(cards)
    assert mask_to_cards(mask) == sorted(cards)
    assert parse_mask(format_cards(mask)) == mask
    assert parse_mask(format_cards(mask, symbols=True).lower()) == mask
