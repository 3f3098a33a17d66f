"""Game flow scenarios: starting rules, tricks, lock-outs, illegal moves, scoring, JSON."""

from __future__ import annotations

import json

import pytest

from climbrl.cards import FULL_DECK, CardError, format_cards, parse_mask
from climbrl.games.base import GameError, GameOverError, IllegalMoveError
from climbrl.games.big2 import Big2Game, deal, load_game
from climbrl.games.big2.combos import SINGLE

# A fixed deal: seat 0 holds 3C (paper's starting card), seat 1 holds 3D.
HANDS = [
    "3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC 2C",
    "3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD 2D",
    "3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2H",
    "3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S",
]


def new(rules: str = "paper", **overrides) -> object:
    return Big2Game(rules, **overrides).new_game(hands=HANDS)


def test_deal_is_deterministic_and_complete() -> None:
    a, b, c = deal(5), deal(5), deal(6)
    assert a == b and a != c
    assert all(h.bit_count() == 13 for h in a)
    assert a[0] | a[1] | a[2] | a[3] == FULL_DECK
    with pytest.raises(GameError, match="seed"):
        deal(-1)


def test_explicit_deal_is_checked() -> None:
    game = Big2Game()
    with pytest.raises(CardError, match="expected 13 cards"):
        game.new_game(hands=["3D"] + HANDS[1:])
    with pytest.raises(CardError, match="dealt twice"):
        game.new_game(hands=[HANDS[0], HANDS[0], HANDS[2], HANDS[3]])


def test_paper_start_holder_of_3c_leads_freely() -> None:
    s = new("paper")
    assert s.current_player == 0
    legal = s.legal_moves()
    assert 0 not in legal  # the leader may not pass
    s.apply(parse_mask("2C"))  # need not contain 3C
    assert s.current_player == 1 and s.last_mask == parse_mask("2C")


def test_standard_first_play_must_include_3d() -> None:
    s = new("standard")
    assert s.current_player == 1
    assert all(m & parse_mask("3D") for m in s.legal_moves())
    before = s.clone()
    with pytest.raises(IllegalMoveError, match="must include 3D"):
        s.apply(parse_mask("4D"))
    assert s == before
    s.apply(parse_mask("3D 4D 5D 6D 7D"))  # a straight flush containing 3D is fine
    assert s.current_player == 2


def test_charlesworth_auto_plays_3d() -> None:
    s = new("charlesworth")
    assert s.history == [(1, parse_mask("3D"))]
    assert s.moves == []
    assert s.current_player == 2 and s.last_type == SINGLE and s.last_player == 1
    assert s.legal_moves()[0] == 0  # seat 2 may pass
    assert s.hands[1].bit_count() == 12


def test_trick_returns_to_last_player_after_three_passes() -> None:
    s = new("paper")
    s.apply(parse_mask("5C"))
    for seat in (1, 2, 3):
        s.apply(0, seat=seat)
    assert s.current_player == 0 and s.last_mask == 0
    assert 0 not in s.legal_moves()
    obs = s.observation(0)
    assert obs.leading and obs.trick == () and obs.to_beat == 0


def test_pass_does_not_lock_out_by_default() -> None:
    s = new("paper")
    s.apply(parse_mask("5C"))
    s.apply(0)  # seat 1 passes
    s.apply(parse_mask("6H"))  # seat 2
    s.apply(0)  # seat 3
    s.apply(0)  # seat 0
    assert s.current_player == 1  # seat 1 may come back in
    s.apply(parse_mask("7D"))
    assert s.last_player == 1


def test_pass_locks_out_when_the_rule_says_so() -> None:
    s = new("paper", pass_locks_out=True)
    s.apply(parse_mask("5C"))
    s.apply(0)  # seat 1 passes: locked out until the trick ends
    s.apply(parse_mask("6H"))  # seat 2
    s.apply(parse_mask("7S"))  # seat 3
    s.apply(parse_mask("8C"))  # seat 0
    assert s.current_player == 2  # seat 1 skipped
    assert s.observation(2).locked_out == 0b10
    s.apply(0)  # seat 2 locked out too
    s.apply(0)  # seat 3
    assert s.current_player == 0 and s.last_mask == 0  # only seat 0 left: it leads
    assert s.locked == 0


@pytest.mark.parametrize(
    "move,message",
    [
        ("5D", "does not hold 5D"),
        ("4C 6C", "not a combination"),
        ("pass", "may not pass"),
    ],
)
def test_illegal_moves_are_rejected_and_leave_the_state_untouched(move: str, message: str) -> None:
    s = new("paper")
    before = s.clone()
    with pytest.raises(IllegalMoveError, match=message):
        s.apply_cards(move)
    assert s == before


def test_weaker_or_mismatched_plays_and_out_of_turn() -> None:
    s = new("paper")
    s.apply_cards("9C")
    before = s.clone()
    with pytest.raises(IllegalMoveError, match="does not beat 9C"):
        s.apply_cards("8D")
    with pytest.raises(IllegalMoveError, match="cannot meet 9C"):
        s.apply_cards("10D JD QD")
    with pytest.raises(IllegalMoveError, match="out of turn"):
        s.apply(parse_mask("10H"), seat=2)
    with pytest.raises(IllegalMoveError, match="card mask"):
        s.apply("10D")  # type: ignore[arg-type]
    assert s == before


def _finish(s) -> None:
    while not s.is_terminal():
        s.apply(s.legal_moves()[-1])


def test_game_end_and_game_over_errors() -> None:
    s = Big2Game("paper").new_game(seed=3)
    _finish(s)
    assert s.current_player == -1 and s.legal_moves() == []
    with pytest.raises(GameOverError):
        s.apply(0)
    assert s.hands[s.winner] == 0 and s.finishing_order()[0] == s.winner


def _ended(rules: str, left: list[int], winner: int):
    """A state whose hands hold ``left`` cards (white-box: scoring only reads the hands)."""
    s = Big2Game(rules).new_game(seed=1)
    pool = [c for c in range(52)]
    for seat in range(4):
        s.hands[seat] = sum(1 << pool.pop() for _ in range(left[seat]))
    s.winner = winner
    return s


def test_rank_rewards_and_finishing_order() -> None:
    s = _ended("paper", [4, 0, 2, 2], winner=1)
    assert s.finishing_order() == [1, 2, 3, 0]  # ties broken by turn order after the winner
    assert s.returns() == [-1 / 3, 1.0, -1 / 3, -1 / 3]
    custom = Big2Game("paper", rank_rewards=(3, 1, -1, -3)).new_game(seed=1)
    custom.hands, custom.winner = s.hands, 1
    assert custom.returns() == [-3.0, 3.0, 1.0, -1.0]


def test_card_count_scoring_with_multipliers() -> None:
    s = _ended("standard", [0, 9, 10, 13], winner=0)
    assert s.returns() == [9 + 20 + 39, -9.0, -20.0, -39.0]
    cw = _ended("charlesworth", [0, 9, 10, 13], winner=0)
    assert cw.returns() == [32.0, -9.0, -10.0, -13.0]


def test_json_round_trip_and_tampering() -> None:
    game = Big2Game("standard", pass_locks_out=True)
    s = game.new_game(seed=42)
    for _ in range(25):
        s.apply(s.legal_moves()[len(s.legal_moves()) // 2])
    text = s.to_json()
    assert game.from_json(text) == s
    assert load_game(text) == s
    data = json.loads(text)
    data["moves"][3] = ["2S", "2H", "2D", "2C", "AS"]
    with pytest.raises(GameError, match="move 3 of the record is illegal"):
        game.from_json(json.dumps(data))
    with pytest.raises(GameError, match="rules differ"):
        Big2Game("paper").from_json(text)


def test_observation_holds_own_hand_and_public_record_only() -> None:
    s = new("paper")
    s.apply_cards("5C")
    s.apply_cards("pass")
    obs = s.observation(2)
    assert obs.hand == parse_mask(HANDS[2])
    assert obs.cards_left == (12, 13, 13, 13)
    assert obs.to_beat == parse_mask("5C") and obs.to_beat_player == 0 and obs.passes == 1
    assert obs.history == ((0, parse_mask("5C")), (1, 0))
    assert format_cards(obs.played[0]) == "5C"
