"""The interval of a mean paired difference over a fixed design, its noise read off the repeated runs.

The drift of a construct is the mean, over the construct's items and conditions, of new - baseline. The
items and the design's cells are fixed (the questionnaire is the questionnaire); what varies when a model
is asked again is each answer, run to run. So the variance of the mean comes from the spread of the paired
differences within each group of exchangeable repetitions (a cell's runs), as in stratified sampling,
never from the spread between items: with three items per construct that spread has two degrees of
freedom, and a t interval on it is too wide for any model to show it did not move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

from snap_bench.stats._validation import check_confidence

__all__ = ["StratifiedInterval", "stratified_mean_difference_ci"]


@dataclass(frozen=True)
class StratifiedInterval:
    """The mean difference, its interval, standard error and Satterthwaite degrees of freedom."""

    estimate: float
    low: float
    high: float
    standard_error: float
    df: float


def stratified_mean_difference_ci(
    groups: Sequence[npt.ArrayLike], *, confidence: float = 0.95, bound: float | None = None
) -> StratifiedInterval:
    """t interval of the mean of paired differences grouped into strata of repetitions.

    Group :math:`g` holds :math:`n_g` paired differences :math:`d_{gi}` that differ only by noise (one
    cell's runs). With :math:`N = \\sum_g n_g`,

    .. math:: \\bar d = \\frac{1}{N}\\sum_{g,i} d_{gi}, \\qquad
              \\widehat{V} = \\frac{1}{N^2} \\sum_g n_g s_g^2, \\qquad
              \\nu = \\frac{\\widehat{V}^2}{\\sum_g (n_g s_g^2 / N^2)^2 / (n_g - 1)},

    the stratified-sampling variance (Cochran 1977, eq. 5.6, with each stratum wholly observed) and
    Satterthwaite's (1946) degrees of freedom; the interval is :math:`\\bar d \\pm t_{\\nu}\\sqrt{\\widehat V}`.
    A group of one difference has no spread of its own: it takes the pooled within-group variance
    :math:`\\sum_g (n_g-1) s_g^2 / \\sum_g (n_g - 1)` of the others. With no spread anywhere (every
    repetition answered alike) the interval is the point :math:`[\\bar d, \\bar d]`.

    Parameters
    ----------
    groups : sequence of array_like
        The paired differences, one array per group of repetitions.
    confidence : float
        Two-sided confidence level, in (0, 1).
    bound : float, optional
        The largest possible absolute difference (the answer scale's high - low): the interval is
        clipped to [-bound, +bound], since no mean difference can lie outside it.

    Returns
    -------
    StratifiedInterval

    Raises
    ------
    ValueError
        If there is no difference, one is not finite, ``bound`` is not positive, or every group holds a
        single difference (no repetition to read the noise from) while they are not all equal.

    References
    ----------
    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., Wiley, section 5.3.
    Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance components.
    *Biometrics Bulletin* 2(6), 110-114.
    """
    level = check_confidence(confidence)
    if bound is not None and not bound > 0:
        raise ValueError(f"bound must be positive; got {bound}")
    arrays = [np.asarray(group, dtype=np.float64).ravel() for group in groups]
    arrays = [values for values in arrays if values.size]
    if not arrays:
        raise ValueError("no differences to average")
    everything = np.concatenate(arrays)
    if not np.isfinite(everything).all():
        raise ValueError("differences must be finite")
    total = everything.size
    estimate = float(everything.mean())
    replicated = [values for values in arrays if values.size > 1]
    pooled_df = sum(values.size - 1 for values in replicated)
    if pooled_df == 0 or everything.min() == everything.max():
        if everything.min() != everything.max():
            raise ValueError("no group holds two differences: the noise cannot be read off repetitions")
        return _clipped(estimate, estimate, estimate, 0.0, float("inf"), bound)
    pooled = sum(float(values.var(ddof=1)) * (values.size - 1) for values in replicated) / pooled_df
    # Each group's share of the variance of the mean, and the degrees of freedom its variance rests on.
    shares, dfs = [], []
    for values in arrays:
        if values.size > 1:
            shares.append(values.size * float(values.var(ddof=1)) / total**2)
            dfs.append(values.size - 1.0)
        else:
            shares.append(pooled / total**2)
            dfs.append(float(pooled_df))
    variance = sum(shares)
    if variance == 0.0:
        return _clipped(estimate, estimate, estimate, 0.0, float("inf"), bound)
    df = variance**2 / sum(share**2 / d for share, d in zip(shares, dfs, strict=True))
    half = float(scipy_stats.t.ppf(0.5 + level / 2, df)) * variance**0.5
    return _clipped(estimate, estimate - half, estimate + half, variance**0.5, df, bound)


def _clipped(
    estimate: float, low: float, high: float, standard_error: float, df: float, bound: float | None
) -> StratifiedInterval:
    if bound is not None:
        low, high = max(low, -bound), min(high, bound)
    return StratifiedInterval(estimate, low, high, standard_error, df)
