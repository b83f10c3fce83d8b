"""Decision (D) studies: coefficients and error variances of a G study's components averaged over chosen counts.

A D study turns the components into coefficients and standard errors for a chosen number of conditions
per facet (Brennan 2001; Shavelson & Webb 1991). Pure numpy/scipy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats as scipy_stats

from snap_bench.stats._validation import FloatArray
from snap_bench.stats.g_study import GStudy, IntervalEstimate

__all__ = ["DecisionStudy", "decision_study", "smallest_count"]

Coefficient = Literal["g", "phi"]
Estimand = Literal["sampled", "shipped"]


@dataclass(frozen=True, slots=True)
class DecisionStudy:
    """Coefficients and error variances of a measurement averaged over ``counts`` conditions per facet.

    Attributes
    ----------
    counts : dict of str to float
        Conditions per facet (and replications per cell) the measurement averages over.
    universe_variance : float
        sigma^2(tau): the object-of-measurement component.
    relative_error_variance, absolute_error_variance : float
        sigma^2(delta) and sigma^2(Delta).
    g : IntervalEstimate
        Generalizability coefficient E rho^2 = tau / (tau + delta), with its interval.
    phi : IntervalEstimate
        Dependability coefficient Phi = tau / (tau + Delta), with its interval.
    sem_relative, sem_absolute : float
        sqrt(delta) and sqrt(Delta), in scale points.
    """

    counts: dict[str, float]
    universe_variance: float
    relative_error_variance: float
    absolute_error_variance: float
    g: IntervalEstimate
    phi: IntervalEstimate
    sem_relative: float
    sem_absolute: float


def _sizes(study: GStudy, counts: Mapping[str, float] | None) -> dict[str, float]:
    """The G study's sample sizes with ``counts`` put in (checked: known facets, at least 1 each)."""
    sizes = dict(study.sample_sizes)
    for name, value in (counts or {}).items():
        if name not in sizes:
            raise ValueError(f"unknown facet {name!r} in counts; the study's facets are {sorted(sizes)}")
        if not value >= 1:
            raise ValueError(f"counts must be at least 1, got {name}={value!r}")
        sizes[name] = float(value)
    return sizes


def _weights(study: GStudy, counts: Mapping[str, float]) -> tuple[FloatArray, FloatArray, int]:
    """Per component: its weight in the relative error, in the absolute error; the object's index."""
    design = study.design
    relative = np.zeros(len(study.components))
    absolute = np.zeros(len(study.components))
    universe = -1
    for index, component in enumerate(study.components):
        facets = [name for name in component.members if name != design.object_of_measurement]
        if not facets:
            universe = index
            continue
        divisor = 1.0
        for name in facets:
            divisor *= counts[name]
        absolute[index] = 1.0 / divisor
        if design.object_of_measurement in component.members:
            relative[index] = 1.0 / divisor
    return relative, absolute, universe


def _coefficient(universe: float, error: float) -> float:
    """tau / (tau + E): 1 without error (0 when there is no universe variance either)."""
    if error <= 0:
        return 1.0 if universe > 0 else 0.0
    return universe / (universe + error)


def _coefficient_interval(
    universe: float, error: float, var_universe: float, var_error: float, confidence: float
) -> IntervalEstimate:
    """tau / (tau + E) with an F interval on tau / E using Satterthwaite degrees of freedom."""
    value = _coefficient(universe, error)
    if error <= 0:
        return IntervalEstimate(value, value, value)
    df_error = 2.0 * error**2 / var_error if var_error > 0 else math.inf
    if universe > 0 and not var_universe > 0:
        # The information gave no sampling variance for a positive universe variance (singular at a
        # boundary fit): no interval (NaN), rather than one of zero width that would claim an exact value.
        return IntervalEstimate(value, math.nan, math.nan)
    if universe <= 0:
        z_value = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
        upper = z_value * math.sqrt(max(var_universe, 0.0))
        return IntervalEstimate(value, 0.0, upper / (upper + error))
    df_universe = 2.0 * universe**2 / var_universe
    ratio = universe / error
    low = ratio / float(scipy_stats.f.ppf(0.5 + confidence / 2, df_universe, df_error))
    high = ratio / float(scipy_stats.f.ppf(0.5 - confidence / 2, df_universe, df_error))
    return IntervalEstimate(value, low / (1 + low), high / (1 + high))


def decision_study(
    study: GStudy, counts: Mapping[str, float] | None = None, *, object_levels: Estimand = "sampled"
) -> DecisionStudy:
    r"""Generalizability and dependability of the object's mean over ``counts`` conditions per facet.

    Parameters
    ----------
    study : GStudy
        Components from :func:`g_study`.
    counts : mapping of str to float, optional
        Conditions per facet (per nest for a nested facet) and replications per cell; facets not
        given keep the G study's own sample sizes. ``{name: 1 for every facet}`` describes a single
        answer.
    object_levels : {"sampled", "shipped"}
        The estimand of the coefficients' intervals. ``"sampled"``: the objects (items) are a random
        sample of a universe of items, and the interval covers that universe's coefficient.
        ``"shipped"``: conditional on the objects in the data (the items a questionnaire ships), whose
        universe scores are fixed; the universe variance is then the variance of *these* objects'
        universe scores, and its sampling variance loses the part that comes from drawing the objects
        (see Notes). The point values are the same.

    Returns
    -------
    DecisionStudy

    Raises
    ------
    ValueError
        A count for an unknown facet, or a count below 1.

    Notes
    -----
    With :math:`\tau` the object's component, each other component :math:`\sigma^2(\alpha)` is
    divided by the product of the counts of the facets in :math:`\alpha` (Brennan 2001, eqs.
    4.14-4.17); it enters the relative error :math:`\sigma^2(\delta)` when :math:`\alpha` contains
    the object, and the absolute error :math:`\sigma^2(\Delta)` always.
    :math:`E\rho^2 = \tau / (\tau + \sigma^2(\delta))`, :math:`\Phi = \tau / (\tau + \sigma^2(\Delta))`.
    The interval of each coefficient treats :math:`\hat\tau / \hat E` as
    :math:`(\tau / E) F(\nu_\tau, \nu_E)` with Satterthwaite degrees of freedom
    :math:`\nu = 2 \hat v^2 / \widehat{\mathrm{Var}}(\hat v)` from the G study's covariance
    (the covariance between :math:`\hat\tau` and :math:`\hat E` is ignored), as the F interval of
    an intraclass correlation does (Shrout & Fleiss 1979); its coverage is measured by the
    validity bench.

    With ``object_levels="shipped"``, :math:`\mathrm{Var}(\hat\tau)` is reduced by
    :math:`2\hat\tau^2 / (n_p - 1)`, the part of a balanced design's
    :math:`\mathrm{Var}(\hat\tau) = 2(\tau + E/k)^2 / (n_p - 1) + \ldots` that comes from drawing
    the :math:`n_p` objects: given their universe scores, the mean square of the objects is a
    non-central chi-square whose variance is :math:`2(E^2 + 2 E k s^2) / (n_p - 1)` (Searle, Casella
    & McCulloch 1992, ch. 4), i.e. the random-objects variance without :math:`2 k^2 s^4 / (n_p - 1)`.
    """
    sizes = _sizes(study, counts)
    relative, absolute, universe_index = _weights(study, sizes)
    variances = np.array([component.variance for component in study.components])
    universe = float(variances[universe_index])
    var_universe = float(study.covariance[universe_index, universe_index])
    if object_levels == "shipped":
        n_objects = study.components[universe_index].n_levels
        drawing = 2.0 * universe**2 / (n_objects - 1) if n_objects > 1 else 0.0
        # kept above a tenth of the random-objects variance: the balanced-design identity is approximate
        # on unbalanced data, and a zero variance would claim an exact coefficient
        var_universe = max(var_universe - drawing, 0.1 * var_universe)
    elif object_levels != "sampled":
        raise ValueError(f"object_levels must be 'sampled' or 'shipped', got {object_levels!r}")
    relative_error = float(relative @ variances)
    absolute_error = float(absolute @ variances)
    return DecisionStudy(
        counts=sizes,
        universe_variance=universe,
        relative_error_variance=relative_error,
        absolute_error_variance=absolute_error,
        g=_coefficient_interval(
            universe, relative_error, var_universe, float(relative @ study.covariance @ relative), study.confidence
        ),
        phi=_coefficient_interval(
            universe, absolute_error, var_universe, float(absolute @ study.covariance @ absolute), study.confidence
        ),
        sem_relative=math.sqrt(relative_error),
        sem_absolute=math.sqrt(absolute_error),
    )


def smallest_count(
    study: GStudy,
    facet: str,
    target: float,
    *,
    coefficient: Coefficient = "phi",
    counts: Mapping[str, float] | None = None,
    max_count: int = 1000,
) -> int | None:
    """The fewest conditions of ``facet`` whose D study reaches ``target`` on the coefficient's point value.

    Parameters
    ----------
    study : GStudy
    facet : str
        The facet (or replicate) to vary, e.g. ``"run"`` or ``"paraphrase"``.
    target : float
        The coefficient to reach, in (0, 1).
    coefficient : {"phi", "g"}
        Dependability (absolute) or generalizability (relative) coefficient.
    counts : mapping of str to float, optional
        The other facets' counts (default: the G study's own).
    max_count : int
        The largest count tried.

    Returns
    -------
    int or None
        The smallest count in 1..``max_count`` that reaches ``target``; None when none does (the
        components that do not shrink with ``facet`` cap the coefficient below it).

    Raises
    ------
    ValueError
        Unknown facet or coefficient, target outside (0, 1), max_count below 1.
    """
    if coefficient not in ("phi", "g"):
        raise ValueError(f"coefficient must be 'phi' or 'g', got {coefficient!r}")
    if not 0 < target < 1:
        raise ValueError(f"target must lie strictly between 0 and 1, got {target!r}")
    if facet not in study.sample_sizes:
        raise ValueError(f"unknown facet {facet!r}; the study's facets are {sorted(study.sample_sizes)}")
    if max_count < 1:
        raise ValueError(f"max_count must be at least 1, got {max_count}")
    fixed = dict(counts or {})
    variances = np.array([component.variance for component in study.components])
    for count in range(1, max_count + 1):
        fixed[facet] = count
        # decision_study's point value, without its interval (two F quantiles per count, unused here)
        relative, absolute, universe_index = _weights(study, _sizes(study, fixed))
        universe = float(variances[universe_index])
        error = float((absolute if coefficient == "phi" else relative) @ variances)
        if _coefficient(universe, error) >= target:
            return count
    return None
