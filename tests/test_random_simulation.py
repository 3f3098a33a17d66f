"""Random-simulation checks in the spirit of OpenSpiel's RandomSimTest, for every preset."""

from __future__ import annotations

import random

import pytest

from climbrl.games.base import Game, GameState
from climbrl.games.big2 import Big2Game


@pytest.mark.parametrize("rules", ["paper", "standard", "charlesworth"])
@pytest.mark.parametrize("locks", [False, True])
def test_random_sim(rules: str, locks: bool) -> None:
    game = Big2Game(rules, pass_locks_out=locks)
    assert isinstance(game, Game)
    rng = random.Random(f"{rules}{locks}")
    lengths = []
    for g in range(60):
        s = game.new_game(seed=g)
        assert isinstance(s, GameState)
        steps = 0
        while not s.is_terminal():
            assert s.returns() == [0.0] * 4
            c = s.clone()
            assert c == s
            moves = s.legal_moves()
            assert moves == c.legal_moves()
            if rng.random() < 0.1:
                assert game.from_json(s.to_json()) == s
            move = moves[rng.randrange(len(moves))]
            c.apply(move)
            if move:  # the clone moved on; the original did not
                assert c != s
            s.apply(move)
            assert c == s
            steps += 1
        assert steps <= game.max_game_length
        assert s.legal_moves() == [] and s.current_player == -1
        r = s.returns()
        assert sum(r) == pytest.approx(game.returns_sum)
        assert max(r) == r[s.winner]
        assert sorted(s.finishing_order()) == [0, 1, 2, 3]
        assert game.from_json(s.to_json()) == s
        lengths.append(steps)
    assert min(lengths) > 10
