"""Engine throughput, measured through the public Python API one call per step.

Each step asks the state for its legal moves, picks one uniformly with ``random.Random`` and
applies it, exactly as a learner drives the engine; ``observe`` also builds the acting seat's
observation every step. Compilation is warmed up before timing. Pinned to one core when the
platform allows it.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from climbrl.games.registry import DEFAULT_PRESETS, make_game


def _play(game: Any, games: int, seed: int, observe: bool) -> tuple[int, float, float]:
    """Decisions, wall seconds and CPU seconds (user + sys of this process) of ``games`` games."""
    rng = random.Random(seed)
    decisions = 0
    cpu = time.process_time()
    start = time.perf_counter()
    for g in range(games):
        state = game.new_game(seed=seed + g)
        while not state.is_terminal():
            if observe:
                state.observation(state.current_player)
            moves = state.legal_moves()
            state.apply(moves[rng.randrange(len(moves))])
            decisions += 1
    return decisions, time.perf_counter() - start, time.process_time() - cpu


def bench_engine(
    rules: str | None = None, games: int = 2000, seed: int = 0, one_core: bool = True, game_name: str = "big2"
) -> dict[str, Any]:
    """Random-play throughput of ``game_name`` (``big2``, ``doudizhu``: auction included)."""
    if games <= 0:
        raise ValueError(f"games must be positive, got {games}")
    pinned = None
    if one_core and hasattr(os, "sched_setaffinity"):
        pinned = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {pinned})
    rules = rules or DEFAULT_PRESETS.get(game_name, "")
    game = make_game(f"{game_name}:{rules}")
    _play(game, 20, seed + 10**9, True)  # warm-up: compile and fill caches
    decisions, secs, cpu = _play(game, games, seed, False)
    obs_decisions, obs_secs, _ = _play(game, games, seed, True)
    return {
        "game": game_name,
        "rules": rules,
        "games": games,
        "cpu": pinned,
        "games_per_s": games / secs,
        "decisions_per_s": decisions / secs,
        "decisions_per_game": decisions / games,
        "cpu_us_per_game": 1e6 * cpu / games,  # user + sys: less sensitive to the machine's load
        "with_observations": {
            "games_per_s": games / obs_secs,
            "decisions_per_s": obs_decisions / obs_secs,
        },
    }

