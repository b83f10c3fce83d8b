"""The interval of a mean paired difference over a fixed design, its noise read off the repeated runs.

The drift of a construct is the mean, over the construct's items and conditions, of new - baseline. The
items and the design's cells are fixed (the questionnaire is the questionnaire); what varies when a model
is asked again is each answer, run to run. So the variance of the mean comes from the spread of the paired
differences within each group of exchangeable repetitions (a cell's runs), as in stratified sampling,
never from the spread between items: with three items per construct that spread has two degrees of
freedom, and a t interval on it is too wide for any model to show it did not move.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

from snap_bench.stats._validation import check_confidence

__all__ = ["NoiseUnreadable", "StratifiedInterval", "stratified_mean_difference_ci"]

# A stratum whose differences are all equal shows it has no noise only on at least this many: two equal
# differences of a 1-5 scale are common under noise (about one pair in five at the shipped models' t1 noise).
_FEWEST_ALIKE = 3


class NoiseUnreadable(ValueError):
    """The differences cannot show how noisy they are: no interval can be read off them."""


@dataclass(frozen=True)
class StratifiedInterval:
    """The mean difference, its interval, standard error and Satterthwaite degrees of freedom."""

    estimate: float
    low: float
    high: float
    standard_error: float
    df: float


def stratified_mean_difference_ci(
    groups: Sequence[npt.ArrayLike],
    *,
    strata: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
    bound: float | None = None,
) -> StratifiedInterval:
    """t interval of the mean of paired differences grouped into strata of repetitions.

    Group :math:`g` holds :math:`n_g` paired differences :math:`d_{gi}` that differ only by noise (one
    cell's runs); ``strata`` names the noise level each group shares (the drift's temperature: a
    temperature-0 cell's runs hardly move, a temperature-1 cell's do). With :math:`N = \\sum_g n_g`,
    :math:`R` the groups of two or more and :math:`m_h` the groups of one in stratum :math:`h`,

    .. math:: \\bar d = \\frac{1}{N}\\sum_{g,i} d_{gi}, \\qquad
              \\widehat{V} = \\frac{1}{N^2} \\Big(\\sum_{g \\in R} n_g s_g^2 + \\sum_h m_h s_h^2\\Big),
              \\qquad s_h^2 = \\frac{\\sum_{g \\in R_h} (n_g - 1) s_g^2}{\\nu_h}, \\quad
              \\nu_h = \\sum_{g \\in R_h} (n_g - 1),

    .. math:: \\nu = \\frac{\\widehat{V}^2}{\\sum_{g \\in R} (n_g s_g^2 / N^2)^2 / (n_g - 1)
              + \\sum_h (m_h s_h^2 / N^2)^2 / \\nu_h},

    the stratified-sampling variance (Cochran 1977, eq. 5.6, with each stratum wholly observed) and
    Satterthwaite's (1946) degrees of freedom; the interval is :math:`\\bar d \\pm t_{\\nu}\\sqrt{\\widehat V}`.
    A group of one difference has no spread of its own: it takes the pooled within-group variance
    :math:`s_h^2` of its own stratum's groups of two or more (never another stratum's: a temperature-0
    cell's zero spread would shrink a temperature-1 answer's noise), and the :math:`m_h` such groups of a
    stratum share that one estimate, so it is one term of Satterthwaite's sum with the :math:`\\nu_h`
    degrees of freedom it rests on, not :math:`m_h` independent ones. (It reuses the variances of the
    groups it pools, which the formula treats as independent of their own terms; the coverage this gives
    is measured in bench.drift_items.) A stratum whose every group holds one difference has no noise of
    its own to pool; it takes the spread of its own differences, :math:`s_h^2` their variance with
    :math:`\\nu_h = m_h - 1` (what differs between its cells counts as noise: wider, never narrower), and
    a stratum of a single difference takes the largest :math:`s_h^2` of the other strata, with its degrees
    of freedom. Without ``strata`` every group is in one stratum. With no spread anywhere (every
    repetition answered alike) the interval is the point :math:`[\\bar d, \\bar d]`.

    Parameters
    ----------
    groups : sequence of array_like
        The paired differences, one array per group of repetitions.
    strata : sequence of hashable, optional
        One label per group: the groups whose noise is alike (the drift's temperatures). Default: one
        stratum.
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
        If there is no difference, one is not finite, ``bound`` is not positive, ``strata`` does not hold
        one label per group, or every group holds a single difference (no repetition to read the noise
        from) while they are not all equal.

    References
    ----------
    Cochran, W. G. (1977). *Sampling Techniques*, 3rd ed., Wiley, section 5.3.
    Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance components.
    *Biometrics Bulletin* 2(6), 110-114.
    """
    level = check_confidence(confidence)
    if bound is not None and not bound > 0:
        raise ValueError(f"bound must be positive; got {bound}")
    labels: list[Hashable] = [None] * len(groups) if strata is None else list(strata)
    if len(labels) != len(groups):
        raise ValueError(f"strata must hold one label per group: {len(labels)} labels for {len(groups)} groups")
    kept = [
        (values, label)
        for values, label in zip((np.asarray(g, dtype=np.float64).ravel() for g in groups), labels, strict=True)
        if values.size
    ]
    if not kept:
        raise ValueError("no differences to average")
    everything = np.concatenate([values for values, _ in kept])
    if not np.isfinite(everything).all():
        raise ValueError("differences must be finite")
    total = everything.size
    estimate = float(everything.mean())
    by_stratum: dict[Hashable, list[npt.NDArray[np.float64]]] = defaultdict(list)
    for values, label in kept:
        by_stratum[label].append(values)
    for label, arrays in by_stratum.items():
        differences = np.concatenate(arrays)
        if differences.size < _FEWEST_ALIKE and differences.min() == differences.max():
            raise NoiseUnreadable(
                f"stratum {label!r} holds {differences.size} equal difference(s): too few to show it has no noise"
            )
    if everything.min() == everything.max():
        return _clipped(estimate, estimate, estimate, 0.0, float("inf"), bound)
    if all(values.size == 1 for values, _ in kept):
        raise NoiseUnreadable("no group holds two differences: the noise cannot be read off repetitions")
    # The independent variance estimates, their degrees of freedom and how many differences each stands for:
    # Satterthwaite's sum runs over these, so noise that single differences borrow is never counted apart.
    sources = _sources(by_stratum)
    shares = [weight * variance / total**2 for variance, _, weight in sources]
    variance = sum(shares)
    if variance == 0.0:
        return _clipped(estimate, estimate, estimate, 0.0, float("inf"), bound)
    df = variance**2 / sum(share**2 / d for share, (_, d, _) in zip(shares, sources, strict=True) if share)
    half = float(scipy_stats.t.ppf(0.5 + level / 2, df)) * variance**0.5
    return _clipped(estimate, estimate - half, estimate + half, variance**0.5, df, bound)


def _sources(strata: Mapping[Hashable, Sequence[npt.NDArray[np.float64]]]) -> list[tuple[float, float, float]]:
    """Each independent variance estimate: (estimate, degrees of freedom, how many differences it stands for).

    A repeated group's variance stands for its own differences and, in proportion to its degrees of freedom,
    for its stratum's single differences, unless those differ more among themselves than its repeated groups
    do: then (as in a stratum without a repeated group) their own spread stands for them. A difference alone
    in its stratum borrows the noisiest other stratum's estimates.
    """
    estimates: dict[Hashable, list[list[float]]] = {}  # per stratum, [estimate, df, weight]: weights grow
    alone = 0  # strata of one difference, nothing to pool
    for label, arrays in strata.items():
        repeated = [values for values in arrays if values.size > 1]
        singles = [float(values[0]) for values in arrays if values.size == 1]
        sources = [[float(values.var(ddof=1)), values.size - 1.0, float(values.size)] for values in repeated]
        estimates[label] = sources
        spread = float(np.var(singles, ddof=1)) if len(singles) > 1 else None
        if spread is not None and (not sources or spread > _noise(sources)):
            # Two equal differences of a discrete scale are common: a few repeated cells that answered alike
            # must not hide how much the single ones differ. An effect of cell counts as noise: wider, not narrower.
            sources.append([spread, len(singles) - 1.0, float(len(singles))])
        elif singles and sources:
            _lend(sources, len(singles))
        elif singles:
            alone += 1
    if alone:  # some other stratum has an estimate: some group holds two differences
        lender = max((other for other in estimates if estimates[other]), key=lambda other: _noise(estimates[other]))
        _lend(estimates[lender], alone)
    return [(estimate, df, weight) for sources in estimates.values() for estimate, df, weight in sources]


def _noise(sources: Sequence[Sequence[float]]) -> float:
    """The pooled variance of a stratum's estimates, each weighted by its degrees of freedom."""
    return sum(estimate * df for estimate, df, _ in sources) / sum(df for _, df, _ in sources)


def _lend(sources: Sequence[list[float]], singles: int) -> None:
    """Single differences take the pooled variance: each estimate stands for its df's share of them."""
    pooled_df = sum(df for _, df, _ in sources)
    for source in sources:
        source[2] += singles * source[1] / pooled_df


def _clipped(
    estimate: float, low: float, high: float, standard_error: float, df: float, bound: float | None
) -> StratifiedInterval:
    if bound is not None:
        low, high = max(low, -bound), min(high, bound)
    return StratifiedInterval(estimate, low, high, standard_error, df)
