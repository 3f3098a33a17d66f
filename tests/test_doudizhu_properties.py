"""Dou Dizhu property tests over whole random games, plus scripted auction and scoring cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from climbrl.games.base import GameOverError, IllegalMoveError
from climbrl.games.doudizhu.moves import action_table, parse_counts
from climbrl.games.doudizhu.rules import RulesError, get_rules
from climbrl.games.doudizhu.state import DdzGame, load_game
from tests.random_play import play

GAMES = [
    DdzGame("standard"), DdzGame("openspiel"), DdzGame("rlcard"), DdzGame("online"), DdzGame("douzero"),
    DdzGame("standard", all_pass="forced", joker_pair_wings=True, pair_wings_distinct=False),
    DdzGame("openspiel", bombs_beat_rocket=True, chain_skips_quad_head=True, wing_same_rank=True),
]
FULL = np.array([4] * 13 + [1, 1])
game_st = st.sampled_from(GAMES)
seed_st = st.integers(0, 2**32)



@settings(max_examples=40, deadline=None)
@given(game=game_st, seed=seed_st, choice=seed_st)
def test_games_terminate_conserve_cards_and_sum_as_declared(game, seed, choice) -> None:
    def check(s, rng):
        total = s.hands.sum(axis=0) + s.played.sum(axis=0) + (s.kitty if s.landlord < 0 else 0)
        assert np.array_equal(total, FULL)
        assert s.left == s.hands.sum(axis=1).tolist()

    s = play(game, seed, choice, check)
    r = s.returns()
    if s.winner >= 0:
        assert s.left[s.winner] == 0
    else:
        assert r == [0.0, 0.0, 0.0]
    if game.zero_sum:
        assert sum(r) == 0
    elif s.winner >= 0:
        assert sorted(r) in ([0.0, 0.0, 1.0], [0.0, 1.0, 1.0])


@settings(max_examples=25, deadline=None)
@given(game=game_st, seed=seed_st, choice=seed_st)
def test_illegal_moves_raise_and_change_nothing(game, seed, choice) -> None:
    table = action_table()

    def check(s, rng):
        before = s.clone()
        legal = set(s.legal_moves())
        for bad in [rng.randrange(game.num_actions) for _ in range(5)] + [-1, table.n_ids, "33", 6.0, True]:
            if bad in legal and not isinstance(bad, (bool, float, str)):
                continue
            with pytest.raises(IllegalMoveError):
                s.apply(bad)
            assert s == before
        with pytest.raises(IllegalMoveError):
            s.apply(s.legal_moves()[0], seat=(s.current_player + 1) % 3)
        assert s == before

    s = play(game, seed, choice, check)
    with pytest.raises(GameOverError):
        s.apply(0)


@settings(max_examples=25, deadline=None)
@given(game=game_st, seed=seed_st, choice=seed_st)
def test_same_seed_same_game_and_json_round_trip(game, seed, choice) -> None:
    a = play(game, seed, choice)
    b = play(game, seed, choice)
    assert a == b and a.to_json() == b.to_json()
    c = load_game(a.to_json())
    assert c == a and c.returns() == a.returns() and c.score() == a.score()


@settings(max_examples=25, deadline=None)
@given(game=game_st, seed=seed_st, choice=seed_st)
def test_observations_hold_no_hidden_card(game, seed, choice) -> None:
    """Swapping cards between the two other seats' hands (and the kitty, while hidden) changes
    nothing in a seat's observation."""

    def check(s, rng):
        for seat in range(3):
            obs = s.observation(seat)
            assert obs.hand == tuple(s.hands[seat].tolist())
            o1, o2 = [x for x in range(3) if x != seat]
            t = s.clone()
            pool = [o1, o2] + ([] if s.landlord >= 0 else ["k"])
            a, b = rng.sample(pool, 2)
            ha = t.kitty if a == "k" else t.hands[a]
            hb = t.kitty if b == "k" else t.hands[b]
            ra = [r for r in range(15) if ha[r] > 0]
            rb = [r for r in range(15) if hb[r] > 0 and hb[r] < 4]
            if not ra or not rb:
                continue
            x, y = rng.choice(ra), rng.choice(rb)
            if x == y or hb[y] == 0:
                continue
            ha[x] -= 1
            hb[x] += 1
            hb[y] -= 1
            ha[y] += 1
            assert t.observation(seat) == obs

    play(game, seed, choice, check)


def test_clone_is_independent() -> None:
    s = DdzGame("standard").new_game(seed=3)
    c = s.clone()
    c.apply(c.legal_moves()[-1])
    assert c != s and s.actions == []


def test_scoring_spring_matches_openspiel_examples() -> None:
    """README: the landlord plays a 20-card pair chain at once: bid 3 -> [12,-6,-6]; bid 1 -> [4,-2,-2]."""
    for bid, expected in ((3, [12.0, -6.0, -6.0]), (1, [4.0, -2.0, -2.0])):
        game = DdzGame("openspiel")
        s = game.new_game(hands=["33445566778899TTJ", "3456789TJQKKAA22B", "3456789TJQKKAA22R"],
                          kitty="JQQ", first_bidder=0)
        s.apply(bid)
        while s.phase == 0:
            s.apply(0)
        assert s.landlord == 0 and s.stake == bid
        s.apply(game.parse_move("33445566778899TTJJQQ"))
        assert s.returns() == expected
        assert s.score()["spring"] and s.score()["multiplier"] == 2


def test_scoring_anti_spring_matches_openspiel_examples() -> None:
    """README: the landlord plays once and a peasant goes out (anti-spring): bid 3 with one bomb
    -> [-24,12,12]; bid 2 with none -> [-8,4,4]."""
    peasant = "444456789TJQKA222"  # seat 1: 4444, the chain 5..A, 222
    rest = FULL - parse_counts(peasant)
    cards = "".join("3456789TJQKA2BR"[r] * int(c) for r, c in enumerate(rest))
    hands = [cards[:17], peasant, cards[17:34]]
    cases = ((3, ["3", "4444", "56789TJQKA", "222"], 1, [-24.0, 12.0, 12.0]),
             (2, ["3", "4", "56789TJQKA", "44422", "2"], 0, [-8.0, 4.0, 4.0]))
    for bid, plays, bombs, expected in cases:
        game = DdzGame("openspiel")
        s = game.new_game(hands=hands, kitty=cards[34:], first_bidder=0)
        s.apply(bid)
        while s.phase == 0:
            s.apply(0)
        assert s.landlord == 0 and s.stake == bid
        for i, move in enumerate(plays):
            s.apply(game.parse_move(move), seat=0 if i == 0 else 1)
            while not s.is_terminal() and s.current_player != 1:
                s.apply(0)  # everyone else passes: the landlord never plays again
        assert s.is_terminal() and s.winner == 1 and s.plays[0] == 1
        assert s.score()["spring"] and s.score()["bombs"] == bombs
        assert s.score()["multiplier"] == 2 ** (bombs + 1)
        assert s.returns() == expected


def test_call_score_auctions() -> None:
    game = DdzGame("openspiel")
    s = game.new_game(seed=1)
    first = s.current_player
    s.apply(0)
    s.apply(0)
    s.apply(0)
    assert s.is_terminal() and s.returns() == [0.0, 0.0, 0.0] and s.landlord == -1
    s = game.new_game(seed=1)
    s.apply(0)
    s.apply(1)
    s.apply(0)
    assert s.phase == 0 and s.legal_moves() == [0, 2, 3]  # the first seat may bid after passing
    s.apply(0)
    assert s.landlord == (first + 1) % 3 and s.stake == 1 and s.current_player == s.landlord
    std = DdzGame("standard").new_game(seed=1)
    std.apply(1)
    std.apply(0)
    std.apply(2)
    assert std.landlord == (first + 2) % 3 and std.stake == 2
    std = DdzGame("standard").new_game(seed=1)
    for _ in range(3):
        std.apply(0)
    assert not std.is_terminal() and len(std.deals) == 2 and std.phase == 0


def test_rob_auction_doubles_per_rob() -> None:
    game = DdzGame("online")
    s = game.new_game(seed=2)
    f = s.current_player
    s.apply(4)  # call
    s.apply(5)  # rob
    s.apply(5)  # rob
    s.apply(5)  # the caller robs back
    assert s.landlord == f and s.stake == 8
    s = game.new_game(seed=2)
    s.apply(0)
    s.apply(4)
    assert s.legal_moves() == [0, 5] and s.current_player == (f + 2) % 3
    s.apply(0)  # nobody robs: the caller is landlord, the declined first seat may not rob
    assert s.landlord == (f + 1) % 3 and s.stake == 1


def test_rules_validation_names_the_field() -> None:
    with pytest.raises(RulesError, match="rules.landlord"):
        get_rules("standard", landlord=3)
    with pytest.raises(RulesError, match="rules.all_pass"):
        get_rules("standard", all_pass="maybe")
    with pytest.raises(RulesError, match="rules.bogus"):
        get_rules("standard", bogus=1)
    with pytest.raises(RulesError, match="unknown rules preset"):
        get_rules("nope")
