"""An independent, deliberately naive classifier written from the rules text.

It shares no code with ``climbrl.games.big2.combos``: powers are tuples, straights are found by
trying every start rank. Tests compare the engine's classifier and move generator with it.
"""

from __future__ import annotations

from collections import Counter

from climbrl.games.big2.rules import Rules


def _key(card: int, rules: Rules) -> tuple[int, int]:
    return card // 4, rules.suit_order.index("DCHS"[card % 4])


def _straight_top(ranks: list[int], rules: Rules) -> int | None:
    """The top rank if these distinct ranks form an allowed straight, else None."""
    n = len(ranks)
    if n not in rules.straight_lengths or len(set(ranks)) != n:
        return None
    for start in range(13):
        seq = [start + k for k in range(n)]
        if seq[-1] > 12:
            if not rules.wrap_straights:
                continue
            seq = [r % 13 for r in seq]
        elif seq[-1] == 12 and not rules.twos_in_straights:
            continue
        if n == 13:
            return 12 if sorted(seq) == sorted(ranks) else None
        if sorted(seq) == sorted(ranks):
            return seq[-1]
    return None


def oracle(cards: list[int], rules: Rules) -> tuple[str, tuple] | None:
    """(comparison class, power tuple), or None when the cards are no combination."""
    n = len(cards)
    if n == 0:
        return None
    ranks = [c // 4 for c in cards]
    suits = {c % 4 for c in cards}
    counts = sorted(Counter(ranks).values())
    top = max(_key(c, rules) for c in cards)
    if n == 1:
        return "single", top
    if counts == [2]:
        return "pair", top
    if counts == [3]:
        return "triple", top
    if n == 4 and rules.four_card_hands:
        if counts == [4]:
            return "four", (1, ranks[0])
        if counts == [2, 2]:
            return "four", (0, top)
    st = _straight_top(ranks, rules)
    if st is not None:
        top_card = next(c for c in cards if c // 4 == st)
        k = _key(top_card, rules)
        if n == 5:
            return "five", (4 if len(suits) == 1 else 0, k)
        return f"straight{n}", k
    if n == 5:
        if len(suits) == 1:
            desc = tuple(sorted(ranks, reverse=True))
            suit = rules.suit_order.index("DCHS"[next(iter(suits))])
            if rules.flush_compare == "top_card":
                return "five", (1, top)
            if rules.flush_compare == "rank_then_suit":
                return "five", (1, (desc, suit))
            return "five", (1, (suit, desc))
        if counts == [2, 3]:
            three = next(r for r, k in Counter(ranks).items() if k == 3)
            return "five", (2, three)
        if counts == [1, 4] and rules.four_of_a_kind_kicker:
            four = next(r for r, k in Counter(ranks).items() if k == 4)
            return "five", (3, four)
    return None


def oracle_beats(a: list[int], b: list[int], rules: Rules) -> bool:
    oa, ob = oracle(a, rules), oracle(b, rules)
    return oa is not None and ob is not None and oa[0] == ob[0] and oa[1] > ob[1]
