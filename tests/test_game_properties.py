"""Property tests (hypothesis) over whole random games, under every preset and knob mix."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from climbrl.cards import FULL_DECK
from climbrl.games.base import IllegalMoveError
from climbrl.games.big2 import Big2Game
from climbrl.games.big2.combos import INVALID, classify
from tests.random_play import play

GAMES = [
    Big2Game("paper"),
    Big2Game("standard"),
    Big2Game("charlesworth"),
    Big2Game("paper", pass_locks_out=True, four_card_hands=True),
    Big2Game("standard", wrap_straights=True, suit_order="SHCD", flush_compare="suit_then_rank"),
]

game_st = st.sampled_from(GAMES)
seed_st = st.integers(0, 2**32)



@settings(max_examples=60, deadline=None)
@given(game=game_st, seed=seed_st, choice=seed_st)
def test_games_terminate_and_conserve_cards(game, seed, choice) -> None:
    def check(s, rng):
        held = 0
        for h in s.hands:
            assert h & held == 0
            held |= h
        played = 0
        for _, m in s.history:
            assert m & played == 0 and m & held == 0
            played |= m
        assert held | played == FULL_DECK

    s = play(game, seed, choice, check)
    assert s.hands[s.winner] == 0
    assert sum(s.returns()) == pytest.approx(game.returns_sum)


@settings(max_examples=60, deadline=None)
@given(game=game_st, seed=seed_st, choice=seed_st)
def test_every_legal_move_is_a_combination_that_beats_or_leads(game, seed, choice) -> None:
    def check(s, rng):
        hand = s.hands[s.current_player]
        moves = s.legal_move_details()
        leading = s.last_mask == 0
        assert (moves[0][0] == 0) == (not leading)  # pass exactly when following
        for m, t, p in moves:
            if m == 0:
                continue
            assert m & ~hand == 0
            typ, cls, power = classify(m, game.rules)
            assert typ != INVALID and (typ, power) == (t, p)
            if s.must:
                assert m & s.must
            if not leading:
                assert cls == s.last_cls and power > s.last_power

    play(game, seed, choice, check)


@settings(max_examples=40, deadline=None)
@given(game=game_st, seed=seed_st, choice=seed_st)
def test_every_move_that_is_not_legal_is_rejected(game, seed, choice) -> None:
    def check(s, rng):
        hand = s.hands[s.current_player]
        legal = set(s.legal_moves())
        cards = [c for c in range(52) if hand >> c & 1]
        candidates = [sum(1 << c for c in rng.sample(cards, rng.randint(1, min(5, len(cards)))))
                      for _ in range(6)]
        candidates += [rng.getrandbits(52), 0]
        for m in candidates:
            if m in legal:
                continue
            before = s.clone()
            try:
                s.apply(m)
            except IllegalMoveError:
                pass
            else:
                raise AssertionError(f"accepted an illegal move {m}")
            assert s == before

    play(game, seed, choice, check)


@settings(max_examples=30, deadline=None)
@given(game=game_st, seed=seed_st, choice=seed_st)
def test_same_seed_same_game(game, seed, choice) -> None:
    a = play(game, seed, choice)
    b = play(game, seed, choice)
    assert a == b and a.to_json() == b.to_json()


@settings(max_examples=40, deadline=None)
@given(game=game_st, seed=seed_st, choice=seed_st)
def test_observations_never_reveal_another_seat_cards(game, seed, choice) -> None:
    def check(s, rng):
        for seat in range(4):
            obs = s.observation(seat)
            hidden = 0
            for other in range(4):
                if other != seat:
                    hidden |= s.hands[other]
            assert obs.hand == s.hands[seat]
            for name, value in obs._asdict().items():
                masks = []
                if name in ("to_beat", "must_include"):
                    masks = [value]
                elif name == "played":
                    masks = list(value)
                elif name in ("trick", "history"):
                    masks = [m for _, m in value]
                for m in masks:
                    assert m & hidden == 0, f"{name} leaks a hidden card"
            # the only mask fields are the ones checked above
            mask_like = {"hand", "to_beat", "must_include", "played", "trick", "history"}
            assert set(obs._fields) - mask_like == {
                "seat", "cards_left", "current_player", "leading", "to_beat_type",
                "to_beat_player", "passes", "locked_out", "types_played", "to_beat_power",
            }

    play(game, seed, choice, check)
