"""Rules as data: presets, validation naming the bad field, immutability, round trips."""

from __future__ import annotations

import dataclasses

import pytest

from climbrl.games.big2 import PRESETS, Rules, RulesError, get_rules


def test_presets() -> None:
    assert set(PRESETS) == {"paper", "standard", "charlesworth"}
    paper = get_rules()
    assert paper.name == "paper" and paper.starting_card == "3C" and paper.start_mode == "lead"
    assert paper.straight_lengths == tuple(range(3, 13)) and not paper.twos_in_straights
    assert paper.rank_rewards == (1.0, -1 / 3, -1 / 3, -1 / 3) and paper.returns_sum == pytest.approx(0)
    std = get_rules("standard")
    assert std.straight_lengths == (5,) and std.start_mode == "must_include"
    assert std.card_multipliers == ((10, 2), (13, 3))
    cw = get_rules("charlesworth")
    assert cw.start_mode == "auto_play" and cw.four_card_hands and not cw.four_of_a_kind_kicker
    assert cw.flush_compare == "top_card" and cw.card_multipliers == ()


@pytest.mark.parametrize(
    "overrides,field",
    [
        ({"suit_order": "DCHX"}, "suit_order"),
        ({"starting_card": "1D"}, "starting_card"),
        ({"start_mode": "whoever"}, "start_mode"),
        ({"straight_lengths": (2, 5)}, "straight_lengths"),
        ({"straight_lengths": (3, 4)}, "straight_lengths"),
        ({"straight_lengths": (13,)}, "straight_lengths"),
        ({"wrap_straights": True}, "wrap_straights"),
        ({"flush_compare": "biggest"}, "flush_compare"),
        ({"reward": "money"}, "reward"),
        ({"rank_rewards": (1, 0, 0)}, "rank_rewards"),
        ({"card_multipliers": ((10, 0),)}, "card_multipliers"),
        ({"pass_locks_out": "yes"}, "pass_locks_out"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_values_name_the_field(overrides: dict, field: str) -> None:
    with pytest.raises(RulesError, match=f"rules.{field}"):
        get_rules("paper", **overrides)


def test_unknown_preset() -> None:
    with pytest.raises(RulesError, match="unknown rules preset 'hk'"):
        get_rules("hk")


def test_frozen_and_hashable() -> None:
    r = get_rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.suit_order = "SHCD"  # type: ignore[misc]
    assert hash(r) == hash(get_rules())


@pytest.mark.parametrize("name", list(PRESETS))
def test_dict_round_trip(name: str) -> None:
    r = get_rules(name, pass_locks_out=True)
    assert Rules.from_dict(r.to_dict()) == r
    assert r.replace(pass_locks_out=False) == get_rules(name)
