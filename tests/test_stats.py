"""The Wilson interval used for every reported rate."""

from __future__ import annotations

import pytest

from climbrl.evaluate.stats import wilson_interval


def test_known_values() -> None:
    lo, hi = wilson_interval(81, 100)
    assert lo == pytest.approx(0.7222, abs=1e-3) and hi == pytest.approx(0.8748, abs=1e-3)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_bad_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(5, 3)
