"""Cards, card ids, 52-bit card masks, parsing and printing.

A card id is ``rank * 4 + suit`` with ``rank`` 0..12 for 3 4 5 6 7 8 9 10 J Q K A 2 and
``suit`` 0..3 for diamonds, clubs, hearts, spades (D C H S). A set of cards is a 52-bit
integer mask with bit ``id`` set for each card. The id order is the order of the common
Big 2 ranking (3D lowest, 2S highest); rule sets with another suit order rank cards through
their own strength table, never by changing ids.

Text notation: rank then suit, ``3D 10S 2S``; ``T`` is accepted for ten, the suit symbols
``♦ ♣ ♥ ♠`` and lower case are accepted on input.
"""

from __future__ import annotations

from collections.abc import Iterable

RANKS = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2")
SUITS = ("D", "C", "H", "S")
SUIT_SYMBOLS = ("♦", "♣", "♥", "♠")
NUM_CARDS = 52
FULL_DECK = (1 << NUM_CARDS) - 1

_RANK_INDEX = {r: i for i, r in enumerate(RANKS)}
_RANK_INDEX["T"] = _RANK_INDEX["10"]
_SUIT_INDEX = {s: i for i, s in enumerate(SUITS)}
_SUIT_INDEX.update({s: i for i, s in enumerate(SUIT_SYMBOLS)})


class CardError(ValueError):
    """An invalid card, a duplicate card or a wrong number of cards."""


def card_id(rank: int, suit: int) -> int:
    return rank * 4 + suit


def rank_of(card: int) -> int:
    return card >> 2


def suit_of(card: int) -> int:
    return card & 3


def parse_card(token: str) -> int:
    """Parse one card such as ``10S``, ``3d``, ``A♠`` or ``tH`` into its id."""
    text = token.strip()
    if len(text) < 2:
        raise CardError(f"invalid card {token!r}: expected a rank and a suit, e.g. '3D' or '10S'")
    rank_text, suit_text = text[:-1].upper(), text[-1].upper()
    if rank_text not in _RANK_INDEX:
        raise CardError(
            f"invalid card {token!r}: unknown rank {text[:-1]!r} (ranks: {' '.join(RANKS)})"
        )
    if suit_text not in _SUIT_INDEX:
        raise CardError(f"invalid card {token!r}: unknown suit {text[-1]!r} (suits: D C H S or ♦ ♣ ♥ ♠)")
    return card_id(_RANK_INDEX[rank_text], _SUIT_INDEX[suit_text])


def parse_cards(text: str | Iterable[str], count: int | None = None) -> list[int]:
    """Parse cards separated by spaces or commas (or an iterable of tokens).

    Raises :class:`CardError` naming the bad token, a duplicate, or a wrong count.
    """
    tokens = text.replace(",", " ").split() if isinstance(text, str) else [str(t) for t in text]
    cards: list[int] = []
    seen: set[int] = set()
    for tok in tokens:
        c = parse_card(tok)
        if c in seen:
            raise CardError(f"duplicate card {tok!r} ({format_card(c)}) in {' '.join(tokens)!r}")
        seen.add(c)
        cards.append(c)
    if count is not None and len(cards) != count:
        raise CardError(f"expected {count} cards, got {len(cards)}: {' '.join(tokens)!r}")
    return cards


def format_card(card: int, symbols: bool = False) -> str:
    if not 0 <= card < NUM_CARDS:
        raise CardError(f"invalid card id {card}: ids are 0..51")
    return RANKS[card >> 2] + (SUIT_SYMBOLS if symbols else SUITS)[card & 3]


def cards_to_mask(cards: Iterable[int]) -> int:
    mask = 0
    for c in cards:
        if not 0 <= c < NUM_CARDS:
            raise CardError(f"invalid card id {c}: ids are 0..51")
        bit = 1 << c
        if mask & bit:
            raise CardError(f"duplicate card {format_card(c)}")
        mask |= bit
    return mask


def mask_to_cards(mask: int) -> list[int]:
    """Card ids of a mask, ascending."""
    if mask < 0 or mask > FULL_DECK:
        raise CardError(f"invalid card mask {mask}: masks are 52-bit")
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def format_cards(cards: int | Iterable[int], symbols: bool = False) -> str:
    """Print a mask or a list of ids as ``3D 10S 2S`` (ascending by id)."""
    ids = mask_to_cards(cards) if isinstance(cards, int) else sorted(cards)
    return " ".join(format_card(c, symbols) for c in ids)


def parse_mask(text: str, count: int | None = None) -> int:
    return cards_to_mask(parse_cards(text, count))
