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
