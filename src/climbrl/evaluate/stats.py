"""Confidence intervals for rates: every win rate the project prints carries one; intervals and
paired comparisons of configurations trained with several seeds and evaluated on shared deals."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of ``successes / n`` (95% by default); (0, 1) when n is 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def deal_record(per_deal: Sequence[int], players: int) -> dict[str, Any]:
    """A duplicate-deal match's record from the agent's wins per deal (out of ``players`` games,
    one per seat): games, wins, win rate with its Wilson interval, and the wins deal by deal as a
    string of digits (what paired comparisons on the same deals need)."""
    if players > 9:
        raise ValueError(f"one digit per deal holds at most 9 wins, got {players} seats")
    games, wins = players * len(per_deal), sum(per_deal)
    lo, hi = wilson_interval(wins, games)
    return {"games": games, "wins": wins, "win_rate": wins / games, "win_rate_low": lo, "win_rate_high": hi,
            "deal_wins": "".join(map(str, per_deal))}


def mean_interval(values: Sequence[float], z: float = 1.959963984540054) -> tuple[float, float, float]:
    """(mean, low, high): the mean of ``values`` with its normal 95% interval (sample standard
    deviation); the interval is NaN for fewer than two values."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("the mean of no values")
    mean = float(x.mean())
    if x.size < 2:
        return mean, float("nan"), float("nan")
    half = z * float(x.std(ddof=1)) / math.sqrt(x.size)
    return mean, mean - half, mean + half


def _mean_squares(table: np.ndarray) -> tuple[float, float]:
    """(between-seed, residual) mean squares of a seeds x deals table (two-way crossed layout, one
    value per cell); the residual is the seed x deal interaction plus the games' own noise."""
    s, d = table.shape
    rows = table.mean(axis=1, keepdims=True)
    cols = table.mean(axis=0, keepdims=True)
    grand = table.mean()
    ms_seed = d * float(((rows - grand) ** 2).sum()) / (s - 1)
    ms_res = float(((table - rows - cols + grand) ** 2).sum()) / ((s - 1) * (d - 1))
    return ms_seed, ms_res


def contrast_interval(tables: Sequence[np.ndarray], weights: Sequence[float], level: float = 0.95) -> dict[str, Any]:
    """Estimate, 95% interval and two-sided p-value of ``sum_v weights[v] * mean(tables[v])``,
    with training-seed noise and deal noise both in the interval.

    ``tables[v]`` holds one configuration's results, seeds x deals (e.g. the win rate of the
    policy trained with seed ``s`` on deal ``d``); every table has the same deals in the same
    order, so a difference of two configurations (weights ``[1, -1]``) is paired on the deals and
    a deal that is hard for both cancels out. Model: seed effects (independent between
    configurations), deal effects (shared, correlated between configurations) and a residual.
    The variance of the estimate is the method-of-moments (two-way ANOVA) estimate

        sum_v w_v^2 max(0, MS_seed_v - MS_res_v) / (S_v D)  +  var_d(sum_v w_v colmean_v[d]) / D

    (first term: seed noise, the between-seed variance component; second: deal noise, with the
    games' own noise), and the interval is Student's t with Satterthwaite's degrees of freedom:
    with 3 seeds per configuration and seed noise dominant the degrees of freedom are near 2 and
    the interval is wide, as it should be. One seed per configuration: the seed term cannot be
    estimated and is left out (``seed_noise_estimated`` is False).
    """
    from scipy import stats

    if len(tables) != len(weights) or not tables:
        raise ValueError("need one weight per table and at least one table")
    arrays = [np.asarray(t, dtype=float) for t in tables]
    if any(a.ndim != 2 for a in arrays) or len({a.shape[1] for a in arrays}) != 1:
        raise ValueError(f"tables must be seeds x deals with the same deals, got shapes {[a.shape for a in arrays]}")
    deals = arrays[0].shape[1]
    if deals < 2:
        raise ValueError("need at least two deals to estimate deal noise")
    estimate = float(sum(w * a.mean() for w, a in zip(weights, arrays, strict=True)))
    per_deal = sum(w * a.mean(axis=0) for w, a in zip(weights, arrays, strict=True))
    deal_var = float(np.var(per_deal, ddof=1)) / deals
    terms = [(deal_var, deals - 1)]  # (variance term, its degrees of freedom) for Satterthwaite
    seed_var, seeded = 0.0, True
    for w, a in zip(weights, arrays, strict=True):
        s = a.shape[0]
        if s < 2:
            seeded = False
            continue
        ms_seed, ms_res = _mean_squares(a)
        c = w * w / (s * deals)
        if ms_seed > ms_res:
            seed_var += c * (ms_seed - ms_res)
            terms += [(c * ms_seed, s - 1), (c * ms_res, (s - 1) * (deals - 1))]
    variance = deal_var + seed_var
    se = math.sqrt(variance)
    df = variance ** 2 / sum(t * t / f for t, f in terms if t > 0) if variance > 0 else float(deals - 1)
    if se > 0:
        half = float(stats.t.ppf(0.5 + level / 2, df)) * se
        p = float(2 * stats.t.sf(abs(estimate) / se, df))
    else:
        half, p = 0.0, (1.0 if estimate == 0 else 0.0)
    return {"estimate": estimate, "low": estimate - half, "high": estimate + half, "se": se, "df": df,
            "p_value": p, "seed_sd": math.sqrt(seed_var), "deal_sd": math.sqrt(deal_var),
            "seed_noise_estimated": seeded}


def holm(p_values: Sequence[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down procedure: which of the hypotheses are rejected with the family-wise
    error rate held at ``alpha``."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    reject = [False] * len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - rank):
            break
        reject[i] = True
    return reject
