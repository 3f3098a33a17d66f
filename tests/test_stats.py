"""The Wilson interval used for every reported rate; intervals and paired comparisons of
configurations with seed and deal noise (the ablations)."""

from __future__ import annotations

import numpy as np
import pytest

from climbrl.evaluate.stats import contrast_interval, holm, wilson_interval


def test_known_values() -> None:
    lo, hi = wilson_interval(81, 100)
    assert lo == pytest.approx(0.7222, abs=1e-3) and hi == pytest.approx(0.8748, abs=1e-3)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_bad_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def _tables(rng: np.random.Generator, means: list[float], seeds: int = 3, deals: int = 300, seed_sd: float = 0.02,
            deal_sd: float = 0.0, shared_deals: np.ndarray | None = None) -> list[np.ndarray]:
    """Simulated win rates per (seed, deal) of each configuration: a seed effect, a deal effect
    (the same deals for every configuration), and four games per deal."""
    deal_effect = shared_deals if shared_deals is not None else rng.normal(0, deal_sd, deals)
    out = []
    for m in means:
        p = np.clip(m + rng.normal(0, seed_sd, (seeds, 1)) + deal_effect[None, :], 0, 1)
        out.append(rng.binomial(4, p) / 4)
    return out


def test_the_interval_widens_when_deal_noise_is_present() -> None:
    rng = np.random.default_rng(0)
    quiet = _tables(rng, [0.4], seed_sd=0.02, deals=300)[0]
    noisy = quiet + rng.normal(0, 0.5, 300)[None, :]  # the same runs, on deals of unequal difficulty
    q, n = contrast_interval([quiet], [1]), contrast_interval([noisy], [1])
    assert n["seed_sd"] == pytest.approx(q["seed_sd"])  # a deal effect is no seed effect
    assert n["deal_sd"] > 2 * q["deal_sd"] and n["se"] > 1.5 * q["se"] and n["high"] - n["low"] > q["high"] - q["low"]
    # a deal effect shared by two configurations cancels in their paired difference
    other = _tables(rng, [0.3], seed_sd=0.02, deals=300)[0]
    shift = rng.normal(0, 0.5, 300)[None, :]
    plain = contrast_interval([quiet, other], [1, -1])
    shared = contrast_interval([quiet + shift, other + shift], [1, -1])
    assert shared["se"] == pytest.approx(plain["se"]) and shared["estimate"] == pytest.approx(plain["estimate"])
    alone = contrast_interval([quiet + shift], [1])["se"] ** 2 + contrast_interval([other + shift], [1])["se"] ** 2
    assert shared["se"] ** 2 < 0.5 * alone


def test_the_interval_covers_the_true_value_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(3)
    runs = [_tables(rng, [0.4], seed_sd=0.01, deal_sd=0.2, deals=100)[0] for _ in range(400)]
    # the true mean: the average over the seed and deal distributions (many draws)
    truth = np.mean(_tables(np.random.default_rng(4), [0.4] * 200, seed_sd=0.01, deal_sd=0.2, deals=2000))
    found = [contrast_interval([t], [1]) for t in runs]
    assert all(f["seed_noise_estimated"] for f in found)
    assert 0.92 <= np.mean([f["low"] <= truth <= f["high"] for f in found]) <= 0.99
    # the seeds' spread alone (t interval over the three runs' win rates) leaves the deals out
    t2 = 4.302652729911275  # Student t, 2 degrees of freedom, 97.5%
    seed_only = [abs(t.mean() - truth) <= t2 * t.mean(axis=1).std(ddof=1) / np.sqrt(3) for t in runs]
    assert np.mean(seed_only) < 0.9


@pytest.mark.parametrize("means,weights", [([0.4], [1]), ([0.4, 0.3], [1, -1])])
def test_the_interval_covers_the_true_value_when_seed_noise_is_comparable_to_deal_noise(means, weights) -> None:
    """Three seeds of sd 0.03 (seed variance of the mean 0.03^2 / 3 = 3e-4) against 100 deals of sd
    0.1 with four games each (about (0.1^2 + 0.24 / 12) / 100 = 3e-4): one configuration, and the
    paired difference of two (the deal effect shared; each configuration's seeds its own). The true
    value is the mean the runs are drawn around (clipping to [0, 1] at 0.4 +- 0.1 moves it by less
    than 1e-4). The deals' spread alone would cover it far less often."""
    from scipy import stats

    rng = np.random.default_rng(3)
    truth = float(np.dot(weights, means))
    found = [contrast_interval(_tables(rng, means, seed_sd=0.03, deal_sd=0.1, deals=100), weights)
             for _ in range(400)]
    seed_var, deal_var = np.mean([f["seed_sd"] ** 2 for f in found]), np.mean([f["deal_sd"] ** 2 for f in found])
    assert 0.5 <= seed_var / deal_var <= 2.5, (seed_var, deal_var)  # the two noises are comparable
    assert all(f["seed_noise_estimated"] for f in found)
    assert 0.92 <= np.mean([f["low"] <= truth <= f["high"] for f in found]) <= 0.99
    t99 = float(stats.t.ppf(0.975, 99))
    deals_only = np.mean([abs(f["estimate"] - truth) <= t99 * f["deal_sd"] for f in found])
    assert deals_only < 0.9, deals_only


def test_a_real_difference_is_significant_and_a_null_one_is_not() -> None:
    rng = np.random.default_rng(5)
    real = contrast_interval(_tables(rng, [0.40, 0.30], seed_sd=0.01, deal_sd=0.1, deals=1000), [1, -1])
    assert real["low"] > 0 and real["p_value"] < 0.01 and real["estimate"] == pytest.approx(0.1, abs=0.03)
    false_alarms = [contrast_interval(_tables(rng, [0.35, 0.35], seed_sd=0.02, deal_sd=0.1, deals=400), [1, -1])
                    for _ in range(300)]
    rate = np.mean([f["p_value"] < 0.05 for f in false_alarms])
    assert rate <= 0.08
    assert np.mean([f["low"] <= 0 <= f["high"] for f in false_alarms]) >= 0.92


def test_holm_controls_the_family() -> None:
    assert holm([0.01, 0.04, 0.03]) == [True, False, False]  # 0.01 < 0.05/3; 0.03 > 0.05/2: stop
    assert holm([0.001, 0.02, 0.04]) == [True, True, True]  # 0.02 < 0.025, 0.04 < 0.05
    assert holm([0.2, 0.3]) == [False, False] and holm([]) == []


def test_contrast_needs_aligned_deals() -> None:
    with pytest.raises(ValueError, match="same deals"):
        contrast_interval([np.zeros((3, 10)), np.zeros((3, 11))], [1, -1])
    with pytest.raises(ValueError, match="two deals"):
        contrast_interval([np.zeros((3, 1))], [1])


# --- small samples (issue 31, section 7) ---------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from climbrl.evaluate.stats import (  # noqa: E402
    clustered_rate_interval,
    mean_interval,
    mean_summary,
    moments_interval,
    newcombe_interval,
    t_quantile,
)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**6).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_holds_the_rate_within_0_and_1(counts: tuple[int, int]) -> None:
    s, n = counts
    lo, hi = wilson_interval(s, n)
    assert 0.0 <= lo <= s / n <= hi <= 1.0 and lo < hi


def test_wilson_endpoints_are_exact() -> None:
    # rounding left 10 of 10 with a high end just below 1 (below the rate itself)
    assert all(wilson_interval(n, n)[1] == 1.0 and wilson_interval(0, n)[0] == 0.0 for n in range(1, 200))


_groups = st.integers(1, 6).flatmap(
    lambda m: st.tuples(st.lists(st.integers(0, m), min_size=1, max_size=40), st.just(m)))


@settings(max_examples=300, deadline=None)
@given(_groups)
def test_a_clustered_rate_interval_stays_within_0_and_1_and_is_never_a_point(groups) -> None:
    wins, m = groups
    rate, lo, hi = clustered_rate_interval(wins, m)
    assert rate == sum(wins) / (m * len(wins))
    assert 0.0 <= lo <= rate <= hi <= 1.0 and lo < hi
    if len(wins) > 1 and len(set(wins)) == 1:  # no spread between the deals: Wilson's on the pooled games
        assert (lo, hi) == wilson_interval(sum(wins), m * len(wins))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(0, 8)), min_size=1, max_size=30))
def test_a_clustered_rate_interval_takes_unequal_groups(groups) -> None:
    trials = [m for m, _ in groups]
    wins = [min(w, m) for m, w in groups]
    rate, lo, hi = clustered_rate_interval(wins, trials)
    assert rate == pytest.approx(sum(wins) / sum(trials))
    assert 0.0 <= lo <= rate <= hi <= 1.0 and lo < hi


def test_the_clustered_interval_of_the_issue() -> None:
    """Issue 31: A's wins (of 2) on 4 deals gave [-0.033, 0.533]; 3 deals won 2 of 2, [1, 1]."""
    rate, lo, hi = clustered_rate_interval([1, 0, 0, 0], 2)
    assert rate == 0.125 and lo == 0.0 and hi > 0.125 + t_quantile(0.95, 3) * 0.125 - 1e-12
    rate, lo, hi = clustered_rate_interval([2, 2, 2], 2)
    assert rate == 1.0 and hi == 1.0 and lo == pytest.approx(wilson_interval(6, 6)[0]) and lo < 0.7
    assert clustered_rate_interval([1], 2)[1:] == (0.0, 1.0)  # one deal: no spread between deals to see
    assert clustered_rate_interval([1, 1, 1, 1], 2)[1:] == wilson_interval(4, 8)  # every deal split
    with pytest.raises(ValueError):
        clustered_rate_interval([3], 2)
    with pytest.raises(ValueError):
        clustered_rate_interval([], 2)


def test_with_many_groups_the_clustered_interval_is_the_t_one() -> None:
    rng = np.random.default_rng(0)
    wins = rng.binomial(2, rng.uniform(0.2, 0.8, 2000))  # deals of unequal difficulty: clustered is the wider
    rate, lo, hi = clustered_rate_interval(wins, 2)
    se = np.std(wins / 2, ddof=1) / np.sqrt(len(wins))
    assert (lo, hi) == pytest.approx((rate - t_quantile(0.95, 1999) * se, rate + t_quantile(0.95, 1999) * se))
    # games of a deal that tend to split (one won as landlord, one lost as peasants): the clustered
    # interval is rightly narrower than Wilson's, which takes the games as independent
    split = np.where(rng.uniform(size=2000) < 0.9, 1, rng.choice([0, 2], 2000))
    rate, lo, hi = clustered_rate_interval(split, 2)
    w_lo, w_hi = wilson_interval(int(split.sum()), 4000)
    assert hi - lo < 0.6 * (w_hi - w_lo)


def test_a_mean_interval_uses_student_t_on_n_minus_1_degrees_of_freedom() -> None:
    values = [2.0, -2.0, 2.0, 4.0, -4.0]
    mean, lo, hi = mean_interval(values)
    half = 2.7764451051977987 * np.std(values, ddof=1) / np.sqrt(5)  # t, 4 df, 97.5%
    assert (lo, hi) == pytest.approx((mean - half, mean + half))
    m = mean_summary(values)
    assert m["df"] == 4 and m["n"] == 5 and m["se"] == pytest.approx(half / 2.7764451051977987)
    assert t_quantile(0.95, 1) == pytest.approx(12.706204736174696)


def test_a_mean_without_spread_has_no_interval() -> None:
    """Four deals each worth +2 points: no zero-width interval, and no NaN either."""
    assert mean_interval([2.0, 2.0, 2.0, 2.0]) == (2.0, None, None)
    assert mean_interval([0.1] * 3)[1:] == (None, None)  # equal values, whatever the rounding of the mean
    assert mean_interval([5.0]) == (5.0, None, None)
    assert moments_interval(4, 8.0, 16.0) == (2.0, None, None)
    assert moments_interval(3, 0.3, 0.03)[1:] == (None, None)
    with pytest.raises(ValueError):
        mean_interval([])
    with pytest.raises(ValueError):
        mean_interval([1.0, float("nan")])


_values = st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=1, max_size=50)


@settings(max_examples=300, deadline=None)
@given(_values)
def test_a_mean_interval_holds_the_mean_or_is_absent(values) -> None:
    mean, lo, hi = mean_interval(values)
    if len(values) < 2 or min(values) == max(values):
        assert lo is None and hi is None
    elif lo is None:  # a spread too small for floats (its square underflows): none seen
        assert hi is None and np.std(values, ddof=1) < 1e-150
    else:
        assert lo <= mean <= hi and lo < hi
    n = len(values)
    m_mean, m_lo, m_hi = moments_interval(n, sum(values), sum(v * v for v in values))
    assert m_lo is None or m_lo <= m_mean <= m_hi


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 500), st.integers(1, 500), st.data())
def test_newcombe_holds_the_difference_within_minus_1_and_1(n1, n2, data) -> None:
    s1, s2 = data.draw(st.integers(0, n1)), data.draw(st.integers(0, n2))
    d, lo, hi = newcombe_interval(s1, n1, s2, n2)
    assert d == pytest.approx(s1 / n1 - s2 / n2)
    assert -1.0 <= lo <= d <= hi <= 1.0 and lo < hi


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.integers(2, 12), st.data())
def test_a_bounded_contrast_stays_within_its_bounds(seeds, deals, data) -> None:
    cells = st.lists(st.integers(0, 4), min_size=seeds * deals, max_size=seeds * deals)
    a = np.array(data.draw(cells), dtype=float).reshape(seeds, deals) / 4
    b = np.array(data.draw(cells), dtype=float).reshape(seeds, deals) / 4
    one = contrast_interval([a], [1], bounds=(0.0, 1.0))
    assert 0.0 <= one["low"] <= one["estimate"] <= one["high"] <= 1.0
    diff = contrast_interval([a, b], [1, -1], bounds=(-1.0, 1.0))
    assert -1.0 <= diff["low"] <= diff["estimate"] <= diff["high"] <= 1.0
    assert 0.0 <= diff["p_value"] <= 1.0


def test_a_contrast_without_spread_is_not_significant_on_few_deals() -> None:
    """Every deal the same difference: the sign test's p-value (2 deals: 0.5), not 0."""
    ones, zeros = np.ones((2, 2)), np.zeros((2, 2))
    ci = contrast_interval([ones, zeros], [1, -1])
    assert ci["se"] == 0 and ci["p_value"] == 0.5
    assert contrast_interval([ones, zeros], [1, -1])["estimate"] == 1.0
    assert contrast_interval([zeros, zeros], [1, -1])["p_value"] == 1.0
    assert contrast_interval([np.ones((2, 30)), np.zeros((2, 30))], [1, -1])["p_value"] < 1e-8


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(0, 8)), min_size=2, max_size=30))
def test_the_clustered_test_is_the_one_the_clustered_interval_inverts(groups) -> None:
    """Issue 29, section 4: the tournament's pairwise verdicts: p < 0.05 exactly when the 95%
    clustered interval excludes one half (where the groups vary); without spread, the sign test."""
    from climbrl.evaluate.stats import clustered_rate_p_value

    trials = [m for m, _ in groups]
    wins = [min(w, m) for m, w in groups]
    p = clustered_rate_p_value(wins, trials)
    rate, lo, hi = clustered_rate_interval(wins, trials)
    assert 0 < p <= 1
    if len({w / m for w, m in zip(wins, trials, strict=True)}) > 1 and abs(p - 0.05) > 1e-9:
        assert (p < 0.05) == (not lo <= 0.5 <= hi)
    elif rate != 0.5:
        assert p == min(1.0, 2.0 ** (1 - len(wins)))


def test_the_clustered_test_without_spread_is_the_sign_test() -> None:
    from climbrl.evaluate.stats import clustered_rate_p_value

    assert clustered_rate_p_value([3] * 19, 3) == 2.0 ** -18  # every deal won: 19 deals of 19
    assert clustered_rate_p_value([1, 1, 1], 2) == 1.0 and clustered_rate_p_value([2], 2) == 1.0
    assert clustered_rate_p_value([2, 0, 2, 0], 2) == 1.0  # the rate is the null
    with pytest.raises(ValueError, match="null rate"):
        clustered_rate_p_value([1, 2], 2, null=1.0)


def test_the_paired_difference_test_is_students_and_says_so_without_spread() -> None:
    from scipy import stats

    from climbrl.evaluate.stats import mean_difference_test

    rng = np.random.default_rng(3)
    x, y = rng.normal(0.3, 1.0, 40), rng.normal(0.0, 1.0, 40)
    r = mean_difference_test(x - y)
    assert r["p"] == pytest.approx(stats.ttest_rel(x, y).pvalue, rel=1e-9)
    assert r["low"] < r["mean"] < r["high"] and r["n"] == 40
    assert mean_difference_test([0.0, 0.0, 0.0])["p"] == 1.0  # no spread, no difference
    assert mean_difference_test([1.0, 1.0, 1.0])["p"] == 0.25  # every sign the same: 2 ** (1 - n)
