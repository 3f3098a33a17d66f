"""Confidence intervals for rates: every win rate the project prints carries one; intervals and
paired comparisons of configurations trained with several seeds and evaluated on shared deals.

Small samples are the rule in a quick evaluation, so every interval here is built to stay
honest at a handful of deals:

* a win rate's interval lies within [0, 1], contains the rate and is never zero-width on a
  finite sample (:func:`wilson_interval`; :func:`clustered_rate_interval` when the games come
  in correlated groups, such as the games of one deal);
* a mean of unbounded values (points, scores) uses Student's t with ``n - 1`` degrees of
  freedom, and has no interval (``None``, JSON ``null``) when the sample shows no spread
  (:func:`mean_summary`);
* nothing returns NaN or an infinity, so every result is strict JSON.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

Z95 = 1.959963984540054
"""The normal 97.5% quantile: the z of a two-sided 95% interval."""


def t_quantile(level: float, df: float) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom
    (``df`` > 0; 12.706 for one degree of freedom at 95%)."""
    from scipy import stats

    if not df > 0:
        raise ValueError(f"Student's t needs positive degrees of freedom, got {df}")
    return float(stats.t.ppf(0.5 + level / 2, df))


def _z(level: float) -> float:
    if level == 0.95:
        return Z95
    from scipy import stats

    return float(stats.norm.ppf(0.5 + level / 2))


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``successes / n`` (95% by default); (0, 1) when n is 0.

    Always ``0 <= low <= successes / n <= high <= 1`` with ``low < high``: the endpoints at 0
    and 1 are exact (0 successes: low is 0; n successes: high is 1), not left to rounding."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else min(p, max(0.0, centre - half))
    high = 1.0 if successes == n else max(p, min(1.0, centre + half))
    return low, high


def _clustered(successes: Sequence[int], trials: int | Sequence[int]) -> tuple[int, int, int, float]:
    """(successes, games, groups, the rate's cluster-robust variance; 0 for one group) of
    :func:`clustered_rate_interval`, the input checked."""
    s = np.asarray(successes, dtype=float)
    m = np.broadcast_to(np.asarray(trials, dtype=float), s.shape)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("need the successes of at least one group")
    if np.any(m < 1) or np.any(s < 0) or np.any(s > m) or np.any(s != np.round(s)) or np.any(m != np.round(m)):
        raise ValueError("every group needs 0 <= successes <= trials, whole numbers, trials >= 1")
    total, n, k = int(s.sum()), int(m.sum()), s.size
    if k < 2:
        return total, n, k, 0.0
    mbar = n / k
    return total, n, k, float(((s - total / n * m) ** 2).sum()) / (k * (k - 1) * mbar * mbar)


def clustered_rate_interval(successes: Sequence[int], trials: int | Sequence[int],
                            level: float = 0.95) -> tuple[float, float, float]:
    """(rate, low, high): a win rate over games that come in groups (clusters), the games of a
    group correlated (the games of one deal on the same cards; the games of one repeat).

    ``successes[i]`` of ``trials[i]`` games won in group ``i`` (``trials``: one count for every
    group, or one per group); rate = all successes / all games. The interval is clustered on the
    groups: the rate +- t * se, with the cluster-robust (ratio-estimator) variance
    ``sum_i (s_i - rate m_i)^2 / (k (k - 1) mbar^2)`` over the ``k`` groups and Student's t with
    ``k - 1`` degrees of freedom (with equal groups: the t interval of the groups' rates), clipped
    to [0, 1]. At a handful of groups t's quantile is large (12.7 for two groups, 3.18 for four),
    which is what an honest interval needs when the spread itself is estimated from so few.

    The floor: when every group scored the same rate (three deals won 2 of 2; every deal split
    1-1) the clustered variance is zero and the interval would be a point, although a few more
    deals could score otherwise; then the interval is Wilson's on every game pooled (the games
    taken as independent), which stays within [0, 1] and is never zero-width. One group alone
    shows no spread between groups at all: [0, 1].

    The floor is not applied when the groups do vary: the clustered variance may then be below
    the binomial one (a duel's two games of a deal tend to split, one won as landlord and one
    lost as peasants, or the reverse) and the clustered interval narrower than Wilson's, rightly.

    Always ``0 <= low <= rate <= high <= 1`` and ``low < high``. Its test:
    :func:`clustered_rate_p_value`.
    """
    total, n, k, var = _clustered(successes, trials)
    rate = total / n
    if k < 2:
        return rate, 0.0, 1.0
    half = t_quantile(level, k - 1) * math.sqrt(var)
    low, high = max(0.0, min(rate, rate - half)), min(1.0, max(rate, rate + half))
    if not low < high:  # no spread between the groups (or below the floats' resolution)
        low, high = wilson_interval(total, n, _z(level))
    return rate, low, high


def clustered_rate_p_value(successes: Sequence[int], trials: int | Sequence[int], null: float = 0.5) -> float:
    """Two-sided p-value of "the rate is ``null``" for games in groups: the test that
    :func:`clustered_rate_interval` inverts (the same cluster-robust variance, Student's t with
    ``groups - 1`` degrees of freedom), so ``p < 1 - level`` exactly when that interval, where the
    groups vary, excludes ``null``.

    Without spread between the groups (every group at the same rate, or one group alone) the t
    statistic is undefined; then the p-value is the sign test's over the groups, as in
    :func:`contrast_interval`: 1 when the rate is ``null`` or there is one group, else
    ``2^(1 - groups)`` (every group on the same side of ``null``), never 0.
    """
    from scipy import stats

    if not 0 < null < 1:
        raise ValueError(f"the null rate must lie in (0, 1), got {null}")
    total, n, k, var = _clustered(successes, trials)
    diff = total / n - null
    if k < 2 or diff == 0:
        return 1.0
    if not var > 0:
        return min(1.0, 2.0 ** (1 - k))
    return float(2 * stats.t.sf(abs(diff) / math.sqrt(var), k - 1))


def newcombe_interval(s1: int, n1: int, s2: int, n2: int, z: float = Z95) -> tuple[float, float, float]:
    """(difference, low, high) of ``s1 / n1 - s2 / n2`` by Newcombe's hybrid score method (his
    method 10: the two Wilson intervals combined, square and add), for independent samples:
    within [-1, 1], containing the difference, never zero-width for n1, n2 >= 1."""
    if n1 < 1 or n2 < 1:
        raise ValueError(f"need games on both sides, got {n1} and {n2}")
    p1, p2 = s1 / n1, s2 / n2
    l1, u1 = wilson_interval(s1, n1, z)
    l2, u2 = wilson_interval(s2, n2, z)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return d, max(-1.0, min(low, d)), min(1.0, max(high, d))


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


def mean_summary(values: Sequence[float], level: float = 0.95) -> dict[str, Any]:
    """The mean of ``values`` (independent draws: one per deal, one per repeat) with its Student t
    interval: ``n``, ``mean``, ``sd`` (sample, ``n - 1``), ``se``, ``df`` (``n - 1``), ``low``,
    ``high``.

    For values with no known bound (points, scores), an honest interval needs the sample's own
    spread. With fewer than two values, or every value equal, the sample shows none: a
    zero-width interval would claim certainty that four equal deals do not give (the next deal
    may score anything), and any finite width would be made up. Then ``low``, ``high``, ``sd``,
    ``se`` and ``df`` are ``None`` (JSON ``null``, "n/a" in tables): no interval rather than a
    false one. (When the values are equal by construction, as an agent's net points against
    itself, the mean itself is exact and says so.) Rates, which are bounded, take
    :func:`wilson_interval` or :func:`clustered_rate_interval` instead, which always give one.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("the mean of no values")
    if not np.all(np.isfinite(x)):
        raise ValueError("the mean of values that are not all finite")
    mean = float(x.mean())
    out: dict[str, Any] = {"n": int(x.size), "mean": mean, "sd": None, "se": None, "df": None, "low": None,
                           "high": None}
    if x.size < 2 or float(x.min()) == float(x.max()):
        return out
    sd = float(x.std(ddof=1))
    se = sd / math.sqrt(x.size)
    half = t_quantile(level, x.size - 1) * se
    low, high = min(mean, mean - half), max(mean, mean + half)
    if not low < high:  # a spread below the floats' resolution at the mean
        return out
    out.update({"sd": sd, "se": se, "df": int(x.size - 1), "low": low, "high": high})
    return out


def mean_difference_test(differences: Sequence[float], level: float = 0.95) -> dict[str, Any]:
    """Paired differences (one per deal or deck): :func:`mean_summary` of them plus ``p``, the
    two-sided Student t p-value of a zero mean over ``n - 1`` degrees of freedom. With no spread
    (see :func:`mean_summary`) ``p`` is 1 for a zero mean, else ``2 ** (1 - n)`` (the chance that
    ``n`` sign-symmetric differences all share one sign)."""
    from scipy import stats

    m = mean_summary(differences, level)
    p = (1.0 if m["mean"] == 0 else 2.0 ** (1 - m["n"])) if m["se"] is None else \
        float(2 * stats.t.sf(abs(m["mean"]) / m["se"], m["df"]))
    return {**m, "p": p}


def mean_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float | None, float | None]:
    """(mean, low, high): the mean of ``values`` with its Student t interval (``n - 1`` degrees of
    freedom); low and high are ``None`` when the sample shows no spread (fewer than two values, or
    all equal): see :func:`mean_summary`."""
    m = mean_summary(values, level)
    return m["mean"], m["low"], m["high"]


def moments_interval(n: int, total: float, total_sq: float,
                     level: float = 0.95) -> tuple[float, float | None, float | None]:
    """:func:`mean_interval` from the count, sum and sum of squares of the values (what a match
    accumulates chunk by chunk). The variance from the moments carries rounding, so a relative
    variance below 1e-12 counts as none (all values equal)."""
    if n < 1:
        raise ValueError("the mean of no values")
    mean = total / n
    var = max(total_sq / n - mean * mean, 0.0) * n / max(n - 1, 1)
    if n < 2 or var <= 1e-12 * max(1.0, mean * mean, total_sq / n):
        return mean, None, None
    half = t_quantile(level, n - 1) * math.sqrt(var / n)
    if not mean - half < mean + half:
        return mean, None, None
    return mean, mean - half, mean + half


def format_interval(low: float | None, high: float | None, spec: str = ".3f") -> str:
    """``[low, high]`` in ``spec``, or ``[n/a]`` when there is no interval (see :func:`mean_summary`)."""
    if low is None or high is None:
        return "[n/a]"
    return f"[{low:{spec}}, {high:{spec}}]"


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


def contrast_interval(tables: Sequence[np.ndarray], weights: Sequence[float], level: float = 0.95,
                      bounds: tuple[float, float] | None = None) -> dict[str, Any]:
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

    ``bounds``: the range the estimate can take (win rates: (0, 1); a difference of two: (-1, 1));
    the interval is clipped to it. Without spread (every deal's contrast the same, no seed noise)
    the interval is the estimate alone and the p-value is the sign test's over the deals (each
    deal's contrast has the estimate's sign: ``2^(1 - deals)``, or 1 for an estimate of 0), not 0:
    callers that know the games behind the tables widen it (``pipeline/ablation.py``).
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
        half, p = 0.0, (1.0 if estimate == 0 else min(1.0, 2.0 ** (1 - deals)))
    low, high = estimate - half, estimate + half
    if bounds is not None:
        low, high = max(bounds[0], min(low, estimate)), min(bounds[1], max(high, estimate))
    return {"estimate": estimate, "low": low, "high": high, "se": se, "df": df,
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
