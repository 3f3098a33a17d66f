"""Deep evaluation (the practice guide's habit): the same match repeated on independent deal sets.

One match of ``games`` games has a binomial interval; repeating it with ``repeats`` different
deal seeds shows the spread a reader would see between evaluation runs, and pools all games into
one tighter interval. Repeat ``r`` uses deal seed ``seed + r`` (deals from :func:`deal_seeds`),
so every repeat is reproducible on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from climbrl.evaluate.match import run_match
from climbrl.evaluate.stats import wilson_interval


def deep_evaluate(agent: str, opponents: Sequence[str], rules: str = "", games: int = 1000,
                  repeats: int = 20, seed: int = 0, workers: int = 1, game: str = "big2") -> dict[str, Any]:
    """``repeats`` matches of ``games`` games; mean and standard deviation of the win rate over
    repeats, and the pooled win rate with its 95% Wilson interval."""
    if repeats < 2:
        raise ValueError(f"repeats must be >= 2 to give a spread, got {repeats}")
    runs = [run_match(agent, opponents, rules=rules, games=games, seed=seed + r, workers=workers, game=game)
            for r in range(repeats)]
    rates = np.array([r["win_rate"] for r in runs])
    wins, total = sum(r["wins"] for r in runs), sum(r["games"] for r in runs)
    lo, hi = wilson_interval(wins, total)
    return {
        "agent": agent, "opponents": runs[0]["opponents"], "game": runs[0]["game"], "rules": runs[0]["rules"],
        "seed": seed,
        "repeats": repeats, "games_per_repeat": games,
        "win_rate_mean": float(rates.mean()), "win_rate_std": float(rates.std(ddof=1)),
        "win_rate_min": float(rates.min()), "win_rate_max": float(rates.max()),
        "pooled_games": total, "pooled_wins": wins, "pooled_win_rate": wins / total,
        "pooled_low": lo, "pooled_high": hi,
        "mean_reward": float(np.mean([r["mean_reward"] for r in runs])),
        "mean_reward_std": float(np.std([r["mean_reward"] for r in runs], ddof=1)),
        "win_rates": rates.tolist(),
    }


def format_deep(r: dict[str, Any]) -> str:
    k = len(r["opponents"])
    opp = f"{r['opponents'][0]} x{k}" if len(set(r["opponents"])) == 1 else ",".join(r["opponents"])
    return (f"{r['agent']} vs {opp}: win rate {r['win_rate_mean']:.3f} +- {r['win_rate_std']:.3f} (mean +- sd over "
            f"{r['repeats']} repeats of {r['games_per_repeat']} games; range {r['win_rate_min']:.3f}-"
            f"{r['win_rate_max']:.3f}); pooled {r['pooled_win_rate']:.3f} [{r['pooled_low']:.3f}, "
            f"{r['pooled_high']:.3f}] over {r['pooled_games']} games")
