"""Random-play simulation statistics: the engine's demo job until the pipeline exists.

Plays ``games`` uniform-random games from consecutive deal seeds and reports per-seat win
rates (95% Wilson intervals), the starting seat's win rate, game length, mean returns and how
often each combination type is played. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from climbrl.evaluate.stats import wilson_interval
from climbrl.games.big2 import Big2Game
from climbrl.games.big2.combos import TYPE_NAMES


def simulate_random(rules: str = "paper", games: int = 1000, seed: int = 0) -> dict[str, Any]:
    if games <= 0:
        raise ValueError(f"games must be positive, got {games}")
    game = Big2Game(rules)
    rng = random.Random(seed)
    wins = [0, 0, 0, 0]
    starter_wins = 0
    lengths = 0
    returns = [0.0, 0.0, 0.0, 0.0]
    types: Counter[str] = Counter()
    for g in range(games):
        state = game.new_game(seed=seed * 1_000_003 + g)
        starter = state.history[0][0] if state.history else state.current_player
        while not state.is_terminal():
            details = state.legal_move_details()
            mask, typ, _ = details[rng.randrange(len(details))]
            types[TYPE_NAMES[typ]] += 1
            state.apply(mask)
        wins[state.winner] += 1
        starter_wins += state.winner == starter
        lengths += len(state.moves)
        for s, r in enumerate(state.returns()):
            returns[s] += r

    def rate(k: int) -> dict[str, float]:
        lo, hi = wilson_interval(k, games)
        return {"wins": k, "rate": k / games, "low": lo, "high": hi}

    return {
        "rules": rules,
        "games": games,
        "seed": seed,
        "seat_win_rate": [rate(w) for w in wins],
        "starter_win_rate": rate(starter_wins),
        "mean_decisions": lengths / games,
        "mean_return": [r / games for r in returns],
        "move_types": dict(sorted(types.items())),
    }
