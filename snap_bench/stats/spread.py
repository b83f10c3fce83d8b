"""How far apart the true means of a few objects lie, from their observed means and a known error variance.

A non-central chi-square interval, conditional on the objects observed (such as the conditions a study ships).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import optimize as scipy_optimize
from scipy import stats as scipy_stats

from snap_bench.stats._validation import check_confidence
from snap_bench.stats.g_study import IntervalEstimate

__all__ = ["spread_interval"]


def spread_interval(means: npt.ArrayLike, error_variance: float, *, confidence: float = 0.95) -> IntervalEstimate:
    r"""The variance of the true object means behind observed ``means``, given the levels observed.

    Parameters
    ----------
    means : array_like, shape (n,)
        The observed mean of each object (e.g. of each condition of a compass placement), n >= 2.
    error_variance : float
        The variance of one observed mean around its true mean: the relative error variance of a
        :func:`decision_study` at the design's own counts (what is common to every object, such as the
        items' effects, cancels in the spread).
    confidence : float

    Returns
    -------
    IntervalEstimate
        The sample variance (ddof 1) of the true means: ``value`` the moment estimate
        :math:`\max(0, s^2_m - E)`, and the interval from inverting the non-central chi-square.

    Notes
    -----
    The estimand is conditional on the objects observed (the shipped conditions, not a universe of
    them). With the observed means independent and normal around the true ones with variance
    :math:`E`, :math:`SS / E \sim \chi'^2_{n-1}(\lambda)` with :math:`\lambda = (n-1) s^2_\mu / E`
    (Searle, Casella & McCulloch 1992, sec. 4.7); the bounds are the :math:`\lambda` at which the
    observed statistic sits at the upper and lower tail quantile, and 0 where even
    :math:`\lambda = 0` leaves it in the tail. :math:`E` is treated as known (it rests on many more
    degrees of freedom than the n - 1 of the objects). Its coverage is measured by the validity bench.
    """
    level = check_confidence(confidence)
    values = np.asarray(means, dtype=np.float64).reshape(-1)
    if values.size < 2 or np.isnan(values).any():
        raise ValueError(f"spread_interval needs at least 2 means without NaN, got {values.size}")
    if not error_variance > 0:
        raise ValueError(f"error_variance must be positive, got {error_variance!r}")
    df = values.size - 1
    statistic = float(np.sum((values - values.mean()) ** 2)) / error_variance
    scale = error_variance / df

    def noncentrality(tail: float) -> float:
        """The lambda with P(chi'^2 <= statistic) = tail; 0 when lambda = 0 already gives less."""
        if float(scipy_stats.chi2.cdf(statistic, df)) <= tail:
            return 0.0
        high = max(1.0, 2.0 * statistic)
        while float(scipy_stats.ncx2.cdf(statistic, df, high)) > tail:
            high *= 2.0
        return float(scipy_optimize.brentq(lambda lam: scipy_stats.ncx2.cdf(statistic, df, lam) - tail, 0.0, high))

    low = noncentrality(0.5 + level / 2)
    high = noncentrality(0.5 - level / 2)
    point = max(0.0, statistic - df)
    return IntervalEstimate(point * scale, low * scale, high * scale)
