"""The rollout search's ``value=score|team`` (a candidate chosen by the rules' card-count return of
its seat, or of its team): the rollouts' points against the engine's returns, fair play, and
the knob's wiring and errors."""

from __future__ import annotations

import random

import numpy as np
import pytest

from climbrl.agents import Decision, make_agent
from climbrl.agents.hand_structure import forced_move
from climbrl.agents.rollouts import DUMMY_WEIGHTS, HEURISTIC, model_search_scores, search_scores
from climbrl.agents.search import SearchAgent, best_candidate, trick_state
from climbrl.games.big2 import Big2Game
from tests.test_search_agent import _play_to, assert_choice_ignores_hidden_cards

CARD_GAMES = [Big2Game("standard"), Big2Game("charlesworth"), Big2Game("standard", pass_locks_out=True)]


def test_card_penalty_is_what_a_loser_pays() -> None:
    standard, cw = Big2Game("standard").rules, Big2Game("charlesworth").rules
    assert [standard.card_penalty(n) for n in (0, 1, 9, 10, 12, 13)] == [0, 1, 9, 20, 24, 39]
    assert [cw.card_penalty(n) for n in (1, 10, 13)] == [1, 10, 13]


def _engine_returns(state, move: int) -> list[float]:
    """The returns of the game after ``move``, the heuristic then playing every seat."""
    heuristic, rng = make_agent("heuristic"), random.Random(0)
    s = state.clone()
    s.apply(move)
    while not s.is_terminal():
        d = Decision.from_state(s)
        s.apply(d.moves[heuristic.act(d, rng)])
    return s.returns()


def _obs_arrays(state):
    obs = state.observation(state.current_player)
    trick = [0, 0, 0] if obs.leading else [obs.to_beat, obs.to_beat_type, obs.passes]
    return (np.array(obs.played, dtype=np.int64), np.array(obs.types_played, dtype=np.int64),
            np.array(trick, dtype=np.int64))


def test_the_rollouts_points_are_the_engines_returns() -> None:
    """On the true deal, with the heuristic in every seat, each candidate's points are the
    engine's return of the agent's seat (value=score) and of its seat plus the one across the
    table (value=team), on both compiled paths; also when the candidate ends the game."""
    finishing = checked = 0
    for gi, game in enumerate(CARD_GAMES):
        rules = game.rules
        pen = np.array([rules.card_penalty(n) for n in range(14)], dtype=np.int64)
        for seed in range(30):
            state = _play_to(game, 300 * gi + seed, steps=(11 * seed) % 60, policy="random")
            d = Decision.from_state(state)
            seat = d.seat
            cand = list(range(min(len(d.moves), 6)))
            finishing += any(d.moves[i] == d.hand for i in cand)
            deals = np.array([state.hands], dtype=np.int64)
            masks = np.array([d.moves[i] for i in cand], dtype=np.int64)
            types = np.array([d.types[i] for i in cand], dtype=np.int64)
            powers = np.array([d.powers[i] for i in cand], dtype=np.int64)
            cls, power, last_player, locked = trick_state(d.observation)
            want = [_engine_returns(state, d.moves[i]) for i in cand]
            for partner in (-1, (seat + 2) % 4):
                expect = [r[seat] + (r[partner] if partner >= 0 else 0) for r in want]
                plain = search_scores(seat, deals, masks, types, powers, cls, power, last_player, locked,
                                      game.tables, game.locks, HEURISTIC, pen, partner)
                tracked = model_search_scores(seat, deals, masks, types, powers, cls, power, last_player, locked,
                                              *_obs_arrays(state), game.tables, game.locks, HEURISTIC,
                                              DUMMY_WEIGHTS, HEURISTIC, DUMMY_WEIGHTS,
                                              np.zeros(1, dtype=np.int64), pen, partner)
                assert plain[2].tolist() == expect
                assert tracked[2].tolist() == expect
                assert plain[0].tolist() == [int(r[seat] > 0) for r in want]  # the winner, and only it, gains
                checked += 1
    assert finishing > 0 and checked == 2 * 30 * len(CARD_GAMES)


@pytest.mark.parametrize("value", ["score", "team"])
def test_choice_does_not_change_when_hidden_cards_are_exchanged(value: str) -> None:
    """The fair-play test with the return as the value: same observation, same seed, same move."""
    assert_choice_ignores_hidden_cards(make_agent(f"search:S=8,K=5,value={value}"), CARD_GAMES[:2], stride=500)


def test_best_candidate_orders_by_points_then_wins_then_fewer_cards_then_first() -> None:
    assert best_candidate(np.array([3, 5, 5]), np.array([1, 9, 2]), np.array([4, 4, 4])) == 2
    assert best_candidate(np.array([3, 5, 5]), np.array([1, 9, 2]), np.array([4, 4, 5])) == 2
    assert best_candidate(np.array([3, 5, 5]), np.array([1, 9, 2]), np.array([6, 4, 5])) == 0
    assert best_candidate(np.array([5, 5]), np.array([2, 2]), np.array([1, 1])) == 0
    assert best_candidate(np.array([3, 5, 5]), np.array([1, 9, 2])) == 2  # value=win: no points


def _on_deal(state, hands) -> object:
    """``state``'s game with the current hands ``hands`` (a sampled deal: each seat's cards now):
    the same deal but for the unseen cards, and the same moves replayed on it."""
    deal = [(state.deal_hands[p] & ~state.hands[p]) | int(hands[p]) for p in range(4)]
    other = state.game.new_game(hands=deal)
    for m in state.moves:
        other.apply(m)
    assert list(other.hands) == [int(h) for h in hands]
    return other


def test_value_score_plays_the_candidate_of_most_points_and_changes_choices() -> None:
    """value=score plays the candidate of the most points over its own sampled deals, the points
    found here without the compiled rollouts: each candidate played on each sampled deal by the
    engine, the heuristic then in every seat, the seat's returns summed (positions where one
    candidate has strictly the most points; ties are best_candidate's, tested above). On some
    positions that is not value=win's choice."""
    by_score, by_win = make_agent("search:S=8,K=6,value=score"), make_agent("search:S=8,K=6")
    differ = checked = 0
    game = CARD_GAMES[0]
    for seed in range(40):
        state = _play_to(game, 700 + seed, steps=(5 * seed) % 45, policy="random")
        d = Decision.from_state(state)
        cand = by_score.candidates_of(d)
        if len(cand) < 2 or forced_move(d.hand, np.array(d.moves, dtype=np.int64)) >= 0:
            continue  # no search: the same move either way
        sampled = [_on_deal(state, h) for h in by_score.deals(d, random.Random(seed))]  # act's first draws
        points = [sum(_engine_returns(s, d.moves[i])[d.seat] for s in sampled) for i in cand]
        top = max(points)
        if points.count(top) > 1:
            continue
        chosen = by_score.act(d, random.Random(seed))
        assert chosen == int(cand[points.index(top)]), (seed, points)
        differ += chosen != by_win.act(d, random.Random(seed))
        checked += 1
    assert checked >= 10 and differ > 0, (checked, differ)


def test_value_knob_and_its_errors() -> None:
    a = make_agent("search:S=6,K=3,value=team")
    assert a.value == "team" and a.name == "search:S=6,K=3,rollout=heuristic,value=team"
    assert make_agent("search:S=6,K=3").value == "win"
    with pytest.raises(ValueError, match="value 'cards'"):
        make_agent("search:value=cards")
    paper = Decision.from_state(Big2Game("paper").new_game(seed=3))
    with pytest.raises(ValueError, match="reward by place"):
        SearchAgent(samples=4, candidates=20, value="score").act(paper, random.Random(0))
    forced = Decision.from_state(Big2Game("charlesworth", reward="rank").new_game(seed=3))
    assert forced.game.rules.start_mode == "auto_play"
    with pytest.raises(ValueError, match="reward by place"):  # at the first decision, even one without a choice
        SearchAgent(samples=4, candidates=1, value="team").act(forced, random.Random(0))
