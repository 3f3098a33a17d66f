"""The Dou Dizhu engine against the naive oracle (tests/ddz_oracle.py), by hypothesis."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from climbrl.games.doudizhu.combos import classify, legal_ids
from climbrl.games.doudizhu.moves import action_table, allowed_mask, format_counts, parse_counts
from climbrl.games.doudizhu.rules import OPENSPIEL_EXACT, get_rules
from tests.ddz_oracle import interpretations, naive_legal

TABLE = action_table()
RULES = [
    get_rules("standard"), get_rules("openspiel"), get_rules("rlcard"),
    get_rules("openspiel", **OPENSPIEL_EXACT),
    get_rules("standard", joker_pair_wings=True, pair_wings_distinct=False, solo_wings_may_pair=False,
              wing_same_rank=True),
]
DECK = "3333444455556666777788889999TTTTJJJJQQQQKKKKAAAA2222BR"


def _named(i: int) -> tuple[str, str, int]:
    m = TABLE.moves[i]
    return (m.cards, m.type_name, m.main) if i else ("", "pass", 0)


@st.composite
def hands(draw, max_cards=11):
    """A random hand, skewed towards repeated ranks so that chains, planes and bombs occur."""
    n = draw(st.integers(1, max_cards))
    ranks = draw(st.lists(st.sampled_from("3456789TJQKA2BR"), min_size=n, max_size=3 * n))
    counts = [0] * 15
    for r in ranks:
        i = "3456789TJQKA2BR".index(r)
        if counts[i] < (4 if i < 13 else 1) and sum(counts) < n:
            counts[i] += 1
    return format_counts(counts)


@settings(max_examples=150, deadline=None)
@given(rules=st.sampled_from(RULES), hand=hands(), lead=st.booleans(), data=st.data())
def test_legal_moves_match_the_oracle(rules, hand, lead, data) -> None:
    prev = 0
    if not lead:
        allowed = np.flatnonzero(allowed_mask(rules))
        prev = int(data.draw(st.sampled_from(allowed[1:].tolist())))
    ours = {_named(i) for i in legal_ids(parse_counts(hand), prev, rules)}
    assert ours == naive_legal(hand, _named(prev) if prev else None, rules)


@settings(max_examples=200, deadline=None)
@given(rules=st.sampled_from(RULES), cards=hands(max_cards=20))
def test_classification_matches_the_oracle(rules, cards) -> None:
    ours = {_named(i) for i in classify(cards, rules)}
    assert ours == interpretations(cards, rules)


def test_oracle_agrees_on_every_table_move() -> None:
    """Each allowed move of each preset is one of the oracle's readings of its cards."""
    for rules in RULES[:3]:
        ok = allowed_mask(rules)
        for i in np.flatnonzero(ok)[1::97]:
            assert _named(int(i)) in interpretations(TABLE.moves[int(i)].cards, rules)
