"""Intervals for the difference of two models measured on the same units: the upgrade gate's arithmetic.

Four methods, one per kind of figure:

- :func:`cluster_bootstrap_ci`: any statistic of a matrix whose rows group into independent clusters
  (cells within items, units within input samples). Whole clusters are drawn with replacement and every
  row of a drawn cluster enters with its cluster's multiplicity, so the dependence of rows that share an
  item is kept: resampling cells as if independent would make intervals too narrow.
- :func:`newcombe_paired_ci`: the difference of two proportions measured on the same pairs (each
  condition asked of both models), Newcombe's (1998) method 10: Wilson score limits of each proportion
  combined with the correlation of the pairs.
- :func:`jackknife_ci`: a figure refitted on the data (a G study's coefficient), too costly to
  bootstrap: both models' figure recomputed with one cluster (item) left out at a time, the
  difference's spread across those refits giving its standard error (Quenouille-Tukey jackknife).
- :func:`mover_ci`: two independent estimates, each with its own (possibly asymmetric) interval: the
  interval of their difference recovered from both (Zou & Donner's MOVER), for a figure whose
  estimand is conditional on the shipped design, so that two models' estimates are independent.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import FloatArray, check_confidence
from snap_bench.stats.bootstrap import BootstrapCI
from snap_bench.stats.errors import UndefinedStatistic

__all__ = ["JackknifeCI", "cluster_bootstrap_ci", "jackknife_ci", "mover_ci", "newcombe_paired_ci", "wilson_interval"]

_NAME = "cluster bootstrap interval"


def cluster_bootstrap_ci(
    statistic: Callable[[FloatArray, FloatArray], FloatArray],
    matrix: FloatArray,
    clusters: npt.NDArray[np.intp],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | None = None,
    max_undefined_share: float = 0.05,
) -> BootstrapCI:
    """Percentile interval of a vectorised statistic, resampling whole clusters of rows.

    ``statistic(matrix, counts)`` takes row multiplicities ``counts`` of shape (b, rows), as the
    ``*_batch`` statistics do; ``clusters[i]`` is the cluster (0 .. g-1) of row i. Raises ValueError
    with fewer than two clusters and :class:`UndefinedStatistic` when the statistic is undefined on the
    data or on more than ``max_undefined_share`` of the resamples.
    """
    level = check_confidence(confidence)
    data = np.asarray(matrix, dtype=np.float64)
    codes = np.asarray(clusters, dtype=np.intp)
    if data.ndim != 2 or codes.shape != (data.shape[0],):
        raise ValueError(f"matrix must be 2-D with one cluster per row; got {data.shape} and {codes.shape}")
    n_clusters = int(codes.max()) + 1 if codes.size else 0
    if n_clusters < 2:
        raise ValueError(f"the cluster bootstrap needs at least 2 clusters, got {n_clusters}")
    estimate = float(statistic(data, np.ones((1, data.shape[0])))[0])
    if math.isnan(estimate):
        raise UndefinedStatistic(_NAME, "the statistic is undefined on the full data")
    draws = np.random.default_rng(seed).integers(0, n_clusters, size=(int(n_resamples), n_clusters))
    values = np.empty(int(n_resamples))
    # Batches bound the memory of the (resamples x rows) multiplicities.
    batch = max(1, (1 << 22) // max(1, data.shape[0]))
    for start in range(0, int(n_resamples), batch):
        chunk = draws[start : start + batch]
        sets = chunk.shape[0]
        flat = (chunk + n_clusters * np.arange(sets)[:, None]).ravel()
        per_cluster = np.bincount(flat, minlength=sets * n_clusters).reshape(sets, n_clusters)
        values[start : start + sets] = statistic(data, per_cluster[:, codes].astype(np.float64))
    defined = values[~np.isnan(values)]
    n_undefined = int(values.size - defined.size)
    if defined.size == 0 or n_undefined > max_undefined_share * values.size:
        raise UndefinedStatistic(
            _NAME, f"the statistic is undefined on {n_undefined} of {values.size} resamples of the clusters"
        )
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return BootstrapCI(estimate, float(low), float(high), level, "percentile", int(n_resamples), n_undefined)


@dataclass(frozen=True, slots=True)
class JackknifeCI:
    """A delete-one-cluster jackknife interval: ``estimate`` +- t(g - 1) x ``standard_error``."""

    estimate: float
    low: float
    high: float
    standard_error: float
    n_clusters: int


def jackknife_ci(estimate: float, leave_one_out: npt.ArrayLike, confidence: float = 0.95) -> JackknifeCI:
    r"""Interval of a statistic from its values with each of g clusters left out in turn.

    :math:`\mathrm{SE}^2 = \frac{g-1}{g} \sum_j (\hat\theta_{(j)} - \bar\theta_{(\cdot)})^2`
    (Efron & Tibshirani 1993, eq. 11.5), and the interval is the estimate (not bias-corrected: the
    correction doubles the variance of a ratio on few clusters) plus or minus Student's t with g - 1
    degrees of freedom. For the mean the SE equals the textbook s / sqrt(g), which the tests check.
    Raises ValueError with fewer than two clusters, and :class:`UndefinedStatistic` when a refit
    is undefined (NaN).
    """
    from scipy.stats import t as student

    level = check_confidence(confidence)
    values = np.asarray(leave_one_out, dtype=np.float64).reshape(-1)
    g = values.size
    if g < 2:
        raise ValueError(f"the jackknife needs at least 2 clusters, got {g}")
    if math.isnan(estimate) or np.isnan(values).any():
        raise UndefinedStatistic(
            "jackknife interval", f"undefined with {int(np.isnan(values).sum())} cluster(s) left out"
        )
    error = math.sqrt((g - 1) / g * float(np.sum((values - values.mean()) ** 2)))
    half = float(student.ppf(0.5 + level / 2, g - 1)) * error
    return JackknifeCI(float(estimate), float(estimate) - half, float(estimate) + half, error, g)


def mover_ci(first: tuple[float, float, float], second: tuple[float, float, float]) -> tuple[float, float, float]:
    r"""(d, low, high) for :math:`d = \theta_1 - \theta_2` from two independent estimates, each given as
    (estimate, low, high) at the same confidence level (Zou & Donner 2008, eq. 5):

    :math:`L = d - \sqrt{(\hat\theta_1 - l_1)^2 + (u_2 - \hat\theta_2)^2}`,
    :math:`U = d + \sqrt{(u_1 - \hat\theta_1)^2 + (\hat\theta_2 - l_2)^2}`.

    Each side keeps its own interval's asymmetry (a spread near 0 has a long upper tail and none
    below); with symmetric normal intervals it is the familiar :math:`d \pm \sqrt{h_1^2 + h_2^2}`.
    Zou, G. Y., & Donner, A. (2008). Construction of confidence limits about effect measures: a general
    approach. *Statistics in Medicine*, 27, 1693-1702.
    """
    (estimate_1, low_1, high_1), (estimate_2, low_2, high_2) = first, second
    for estimate, low, high in (first, second):
        if not low <= estimate <= high:
            raise ValueError(f"an interval must contain its estimate: {low} <= {estimate} <= {high}")
    difference = estimate_1 - estimate_2
    below = math.sqrt((estimate_1 - low_1) ** 2 + (high_2 - estimate_2) ** 2)
    above = math.sqrt((high_1 - estimate_1) ** 2 + (estimate_2 - low_2) ** 2)
    return difference, difference - below, difference + above


def wilson_interval(count: int, total: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of count / total (Wilson 1927)."""
    from scipy.stats import norm

    if total <= 0:
        raise ValueError("a proportion needs at least one observation")
    z = float(norm.ppf(0.5 + check_confidence(confidence) / 2))
    share = count / total
    denominator = 1 + z * z / total
    centre = (share + z * z / (2 * total)) / denominator
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_paired_ci(
    both: int, first_only: int, second_only: int, neither: int, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(p1 - p2, low, high) for two proportions measured on the same pairs (Newcombe 1998, method 10).

    ``both``: pairs where both have the event; ``first_only``/``second_only``: where only one has it;
    ``neither``. The limits combine each proportion's Wilson limits with the pairs' phi coefficient
    (continuity-corrected as in the paper), so that agreeing pairs narrow the interval as they should:
    two identical sides give an interval around 0 no wider than the Wilson margins' difference.
    """
    n = both + first_only + second_only + neither
    if n <= 0:
        raise ValueError("no pair to compare")
    p1, p2 = (both + first_only) / n, (both + second_only) / n
    l1, u1 = wilson_interval(both + first_only, n, confidence)
    l2, u2 = wilson_interval(both + second_only, n, confidence)
    product = float(both + first_only) * (second_only + neither) * (both + second_only) * (first_only + neither)
    phi = 0.0
    if product > 0:
        numerator = float(both * neither - first_only * second_only)
        if numerator > 0:
            numerator = max(numerator - n / 2, 0.0)
        phi = numerator / math.sqrt(product)
    delta = p1 - p2
    below = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    above = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return delta, max(-1.0, delta - below), min(1.0, delta + above)
