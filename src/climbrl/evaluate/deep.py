"""Deep evaluation (the practice guide's habit): the same match repeated on independent deal sets.

One match of ``games`` games has a binomial interval; repeating it with ``repeats`` different
deal seeds shows the spread a reader would see between evaluation runs, and pools all games into
one tighter interval. Repeat ``r`` uses deal seed ``seed + r`` (deals from :func:`deal_seeds`,
purpose ``"deep"``: never the deals of another purpose, the versioned sets included, whatever the
seeds), so every repeat is reproducible on its own.

Over the repeats, a mean carries its 95% interval with Student's t on ``repeats - 1`` degrees
of freedom (``*_mean_low``, ``*_mean_high``): the repeats are the independent units, and with a
handful of them t's quantile is far above the normal 1.96 (2.78 for 5 repeats). A win rate's is
:func:`~climbrl.evaluate.stats.clustered_rate_interval` with the repeats as the groups (within
[0, 1], never zero-width); a mean of points or rewards has none (``null``) when every repeat gave
the same value.

:func:`deep_duel` does the same for Dou Dizhu's landlord-versus-peasants protocol
(:mod:`climbrl.evaluate.duel`): repeat ``r`` is ``team_match(seed=seed + r, purpose="deep")``, and WP and ADP are
given per side and role as mean +- standard deviation over the repeats, and pooled over every
deal with their intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from climbrl.agents.runner import deal_seeds
from climbrl.evaluate.duel import (
    ROLES,
    SIDES,
    DuelGame,
    check_specs,
    duel_game_name,
    duel_tasks,
    play_duel_chunk,
    summarize_duel,
)
from climbrl.evaluate.match import map_tasks, run_match
from climbrl.evaluate.stats import clustered_rate_interval, format_interval, mean_interval, wilson_interval


def deep_evaluate(agent: str, opponents: Sequence[str], rules: str = "", games: int = 1000,
                  repeats: int = 20, seed: int = 0, workers: int = 1, game: str = "big2") -> dict[str, Any]:
    """``repeats`` matches of ``games`` games; mean and standard deviation of the win rate over
    repeats with the mean's 95% interval over the repeats (t, ``repeats - 1`` degrees of freedom),
    and the pooled win rate with its 95% Wilson interval."""
    if repeats < 2:
        raise ValueError(f"repeats must be >= 2 to give a spread, got {repeats}")
    runs = [run_match(agent, opponents, rules=rules, games=games, seed=seed + r, workers=workers, game=game,
                      purpose="deep")
            for r in range(repeats)]
    rates = np.array([r["win_rate"] for r in runs])
    wins, total = sum(r["wins"] for r in runs), sum(r["games"] for r in runs)
    lo, hi = wilson_interval(wins, total)
    _, mean_lo, mean_hi = clustered_rate_interval([r["wins"] for r in runs], [r["games"] for r in runs])
    rewards = [r["mean_reward"] for r in runs]
    reward, reward_lo, reward_hi = mean_interval(rewards)
    return {
        "agent": agent, "opponents": runs[0]["opponents"], "game": runs[0]["game"], "rules": runs[0]["rules"],
        "seed": seed,
        "repeats": repeats, "games_per_repeat": games,
        "win_rate_mean": float(rates.mean()), "win_rate_std": float(rates.std(ddof=1)),
        "win_rate_mean_low": mean_lo, "win_rate_mean_high": mean_hi,
        "win_rate_min": float(rates.min()), "win_rate_max": float(rates.max()),
        "pooled_games": total, "pooled_wins": wins, "pooled_win_rate": wins / total,
        "pooled_low": lo, "pooled_high": hi,
        "mean_reward": reward, "mean_reward_std": float(np.std(rewards, ddof=1)),
        "mean_reward_low": reward_lo, "mean_reward_high": reward_hi,
        "win_rates": rates.tolist(),
    }


def format_deep(r: dict[str, Any]) -> str:
    k = len(r["opponents"])
    opp = f"{r['opponents'][0]} x{k}" if len(set(r["opponents"])) == 1 else ",".join(r["opponents"])
    return (f"{r['agent']} vs {opp}: win rate {r['win_rate_mean']:.3f} +- {r['win_rate_std']:.3f} (mean +- sd over "
            f"{r['repeats']} repeats of {r['games_per_repeat']} games, its 95% CI "
            f"{format_interval(r['win_rate_mean_low'], r['win_rate_mean_high'])} with t on {r['repeats'] - 1} df; "
            f"range {r['win_rate_min']:.3f}-{r['win_rate_max']:.3f}); pooled {r['pooled_win_rate']:.3f} "
            f"[{r['pooled_low']:.3f}, {r['pooled_high']:.3f}] over {r['pooled_games']} games")


def deep_duel(a_spec: str, b_spec: str, game: str = "doudizhu", rules: str = "douzero", deals: int = 1000,
              repeats: int = 20, seed: int = 0, workers: int = 1) -> dict[str, Any]:
    """``repeats`` duels of ``deals`` deals on independent deal sets (repeat ``r``: seed
    ``seed + r``, the same games as ``team_match(seed=seed + r, purpose="deep")``), all chunks on one pool.

    ``spread[side][role]``: mean and standard deviation over the repeats of WP and ADP, the
    means' 95% intervals over the repeats (t, ``repeats - 1`` degrees of freedom: see the module
    docstring), and their per-repeat values; ``pooled``: the duel summary of every deal of every repeat."""
    if repeats < 2:
        raise ValueError(f"repeats must be >= 2 to give a spread, got {repeats}")
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    name = duel_game_name(game, rules)
    check_specs([a_spec, b_spec], name)
    tasks = [(r, t) for r in range(repeats)
             for t in duel_tasks(a_spec, b_spec, name, seed + r, deal_seeds(seed + r, deals, "deep"))]
    parts = map_tasks(play_duel_chunk, [t for _, t in tasks], workers)
    runs: list[list[DuelGame]] = [[] for _ in range(repeats)]
    for (r, _), part in zip(tasks, parts, strict=True):
        runs[r] += part
    per_repeat = [summarize_duel(games) for games in runs]
    spread: dict[str, dict[str, Any]] = {}
    for side in SIDES:
        spread[side] = {}
        for role in ROLES:
            wp = np.array([x[side][role]["win_rate"] for x in per_repeat])
            adp = np.array([x[side][role]["adp"] for x in per_repeat])
            _, wp_lo, wp_hi = clustered_rate_interval([x[side][role]["wins"] for x in per_repeat],
                                                      [x[side][role]["games"] for x in per_repeat])
            _, adp_lo, adp_hi = mean_interval(adp)
            spread[side][role] = {"win_rate_mean": float(wp.mean()), "win_rate_std": float(wp.std(ddof=1)),
                                  "win_rate_mean_low": wp_lo, "win_rate_mean_high": wp_hi,
                                  "adp_mean": float(adp.mean()), "adp_std": float(adp.std(ddof=1)),
                                  "adp_mean_low": adp_lo, "adp_mean_high": adp_hi,
                                  "win_rates": wp.tolist(), "adps": adp.tolist()}
    pooled = summarize_duel([g._replace(deal=r * deals + g.deal) for r, games in enumerate(runs) for g in games])
    g, _, preset = name.partition(":")
    return {"a": a_spec, "b": b_spec, "game": g, "rules": preset, "seed": seed, "repeats": repeats,
            "deals_per_repeat": deals, "repeat_seeds": [seed + r for r in range(repeats)], "spread": spread,
            "pooled": pooled}


def format_deep_duel(r: dict[str, Any]) -> str:
    df = r["repeats"] - 1
    lines = [f"A = {r['a']} vs B = {r['b']}: {r['game']} rules {r['rules']}, {r['repeats']} repeats of "
             f"{r['deals_per_repeat']} deals (seeds {r['seed']}..{r['seed'] + r['repeats'] - 1}); over the repeats: "
             f"mean +- sd [95% CI, t on {df} df]; pooled: every deal [95% CI]",
             f"{'side':<5} {'role':<9} {'WP over repeats':>31} {'pooled WP':>23} {'ADP over repeats':>34} "
             f"{'pooled ADP':>26}"]
    for side in SIDES:
        for role in ROLES:
            s, p = r["spread"][side][role], r["pooled"][side][role]
            lines.append(f"{side:<5} {role:<9} {s['win_rate_mean']:7.3f} +- {s['win_rate_std']:.3f} "
                         f"{format_interval(s['win_rate_mean_low'], s['win_rate_mean_high']):>15} "
                         f"{p['win_rate']:7.3f} [{p['win_rate_low']:.3f}, {p['win_rate_high']:.3f}] "
                         f"{s['adp_mean']:+7.3f} +- {s['adp_std']:.3f} "
                         f"{format_interval(s['adp_mean_low'], s['adp_mean_high'], '+.3f'):>17} "
                         f"{p['adp']:+7.3f} {format_interval(p['adp_low'], p['adp_high'], '+.3f'):>17}")
    return "\n".join(lines)
