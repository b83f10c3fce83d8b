"""The gate's intervals for refitted and independently estimated figures: jackknife and MOVER."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from snap_bench.stats import UndefinedStatistic
from snap_bench.stats.paired import jackknife_ci, mover_ci, wilson_interval


def test_jackknife_of_the_mean_is_the_textbook_standard_error() -> None:
    # Efron & Tibshirani (1993), sec. 11.2: for the mean, the jackknife SE equals s / sqrt(n) exactly.
    data = np.random.default_rng(3).normal(10, 2, size=17)
    leave_one_out = np.array([np.delete(data, i).mean() for i in range(data.size)])
    interval = jackknife_ci(float(data.mean()), leave_one_out)
    expected = data.std(ddof=1) / np.sqrt(data.size)
    assert interval.standard_error == pytest.approx(expected, rel=1e-12)
    # ... and the interval is then the one-sample t interval
    t_low, t_high = scipy_stats.t.interval(0.95, data.size - 1, loc=data.mean(), scale=expected)
    assert (interval.low, interval.high) == pytest.approx((t_low, t_high), rel=1e-12)
    assert interval.n_clusters == 17


def test_jackknife_refuses_an_undefined_refit_and_one_cluster() -> None:
    with pytest.raises(UndefinedStatistic, match="1 cluster"):
        jackknife_ci(0.1, [0.1, float("nan"), 0.2])
    with pytest.raises(ValueError, match="at least 2 clusters"):
        jackknife_ci(0.1, [0.1])


def test_mover_with_wilson_limits_is_newcombes_method_10() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873-890, Table II, example (a): 56/70 - 48/80 = 0.2000,
    # hybrid score interval (method 10) 0.0524 to 0.3339. Zou & Donner (2008) derive it as MOVER.
    first = (56 / 70, *wilson_interval(56, 70))
    second = (48 / 80, *wilson_interval(48, 80))
    difference, low, high = mover_ci(first, second)
    assert difference == pytest.approx(0.2)
    assert (low, high) == pytest.approx((0.0524, 0.3339), abs=5e-5)


def test_mover_keeps_each_sides_asymmetry() -> None:
    # symmetric normal intervals: d +- sqrt(h1^2 + h2^2)
    assert mover_ci((1.0, 0.0, 2.0), (0.5, 0.2, 0.8)) == pytest.approx(
        (0.5, 0.5 - np.hypot(1, 0.3), 0.5 + np.hypot(1, 0.3))
    )
    # a spread at 0 with a long upper tail: the difference can be far above 0, not below the other's drop
    difference, low, high = mover_ci((0.0, 0.0, 1.0), (0.0, 0.0, 1.0))
    assert (difference, low, high) == pytest.approx((0.0, -1.0, 1.0))
    with pytest.raises(ValueError, match="contain its estimate"):
        mover_ci((2.0, 0.0, 1.0), (0.0, 0.0, 1.0))
