"""Criteria that rule out answerers who ignore the questions: constant, uniformly random, always-agree.

A stability figure alone cannot tell a model that holds its views from one that gives the same answer
to everything; these checks ask whether the *raw* (unkeyed) answers depend on the question at all,
and whether a statement and its reverse get opposite answers.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

from snap_bench.stats._validation import check_confidence
from snap_bench.stats.errors import UndefinedStatistic
from snap_bench.stats.g_study import RESIDUAL_EFFECT, GStudy, g_study
from snap_bench.stats.g_study_design import GStudyDesign

__all__ = [
    "ContradictionRate",
    "DegeneracyCheck",
    "ItemSignal",
    "contradiction_rate",
    "contradicts",
    "follows_questions",
    "raw_item_signal",
]


@dataclass(frozen=True, slots=True)
class ItemSignal:
    """How much the raw answers depend on the item, against run-to-run noise.

    Attributes
    ----------
    item_variance : float
        The object-of-measurement (item) component of the raw answers.
    noise_variance : float
        The residual (run-to-run) component.
    share : float
        ``item_variance`` over the sum of all components (0 when the answers are constant).
    signal_to_noise : float
        ``item_variance / noise_variance`` (``inf`` when the runs never differ but items do; 0 when
        both are 0).
    likelihood_ratio : float
        Restricted likelihood-ratio statistic of ``item_variance = 0``.
    p_value : float
        Its p value from the 50:50 mixture of chi^2_0 and chi^2_1 (Self & Liang 1987); 1 for
        constant answers.
    n_observations : int
    """

    item_variance: float
    noise_variance: float
    share: float
    signal_to_noise: float
    likelihood_ratio: float
    p_value: float
    n_observations: int


def raw_item_signal(
    raw_scores: npt.ArrayLike,
    labels: Mapping[str, Sequence[Hashable]],
    design: GStudyDesign,
    *,
    fitted: GStudy | None = None,
) -> ItemSignal:
    r"""Test whether the raw, unkeyed answers vary with the item beyond every other facet and run noise.

    Parameters
    ----------
    raw_scores : array_like, shape (n,)
        The answers as given (never reverse-keyed), NaN where unscored.
    labels, design
        As for :func:`~snap_bench.stats.g_study.g_study`; the object of measurement is the item.
    fitted : GStudy, optional
        The G study of these scores under ``design`` when the caller has it already (saves one fit).

    Returns
    -------
    ItemSignal

    Notes
    -----
    Rules out: a **constant** answerer (every component is 0: share 0, p = 1); a **uniformly random**
    answerer (its item component is 0 in expectation, so the share is near 0 and the test is not
    significant); an **always-agree** answerer that agrees to the same degree whatever it is asked.
    Reverse keying is what lets these pass a keyed stability figure: answering "5" everywhere turns
    into a spread of keyed scores across forward and reverse items. On raw answers that spread does
    not exist, so raw answers are the ones tested.

    The statistic is :math:`LR = 2(\ell_R - \ell_{R,0})`, the restricted log-likelihoods of the G
    study with and without the item component (the fixed part is the same, so REML likelihoods
    compare; Morrell 1998). Under :math:`\sigma^2_{item} = 0`, on the boundary of the parameter
    space, LR follows :math:`\tfrac12\chi^2_0 + \tfrac12\chi^2_1` (Self & Liang 1987; Stram & Lee 1994).

    The design must not hold a term that equals the item for some items (the profile's item x
    context, where personality items have one context): under the null that term would absorb the
    item component. Leave such terms out of the design passed here.

    References
    ----------
    Morrell, C. H. (1998). Likelihood ratio testing of variance components in the linear mixed-effects
    model using restricted maximum likelihood. *Biometrics*, 54, 1560-1568.
    Self, S. G., & Liang, K.-Y. (1987). Asymptotic properties of maximum likelihood estimators and
    likelihood ratio tests under nonstandard conditions. *JASA*, 82, 605-610.
    Stram, D. O., & Lee, J. W. (1994). Variance components testing in the longitudinal mixed effects
    model. *Biometrics*, 50, 1171-1177.
    """
    try:
        # Point estimates and likelihoods only: no component's interval is read here.
        full = fitted if fitted is not None else g_study(raw_scores, labels, design, intervals=False)
    except UndefinedStatistic:
        present = int(np.sum(~np.isnan(np.asarray(raw_scores, dtype=np.float64))))
        return ItemSignal(0.0, 0.0, 0.0, 0.0, 0.0, 1.0, present)
    item = full.component(design.object_of_measurement).variance
    noise = full.component(RESIDUAL_EFFECT).variance
    if item > 0:
        # Started from the full fit's shares (the item's held at 0): the same maximum in fewer steps.
        null = g_study(
            raw_scores,
            labels,
            design,
            without=(design.object_of_measurement,),
            intervals=False,
            start=[component.share for component in full.components],
        )
        statistic = max(0.0, 2.0 * (full.log_likelihood - null.log_likelihood))
    else:
        statistic = 0.0
    p_value = 0.5 * float(scipy_stats.chi2.sf(statistic, 1)) if statistic > 0 else 1.0
    ratio = item / noise if noise > 0 else (math.inf if item > 0 else 0.0)
    return ItemSignal(
        item_variance=item,
        noise_variance=noise,
        share=full.component(design.object_of_measurement).share,
        signal_to_noise=ratio,
        likelihood_ratio=statistic,
        p_value=p_value,
        n_observations=full.n_observations,
    )


@dataclass(frozen=True, slots=True)
class ContradictionRate:
    """Share of (statement, reverse) answer pairs on the same side of the midpoint, with its Wilson interval."""

    rate: float
    ci_low: float
    ci_high: float
    n_pairs: int
    n_left_out: int


def contradicts(forward: npt.ArrayLike, reverse: npt.ArrayLike, *, points: int = 5) -> npt.NDArray[np.bool_]:
    """Per pair: both answers above the scale's midpoint ``(points + 1) / 2`` (agreeing with a statement
    and with its reverse) or both below it. NaN compares false (the caller counts missing pairs)."""
    midpoint = (points + 1) / 2
    a = np.asarray(forward, dtype=np.float64) - midpoint
    b = np.asarray(reverse, dtype=np.float64) - midpoint
    result: npt.NDArray[np.bool_] = ((a > 0) & (b > 0)) | ((a < 0) & (b < 0))
    return result


def contradiction_rate(
    forward: npt.ArrayLike, reverse: npt.ArrayLike, *, points: int = 5, confidence: float = 0.95
) -> ContradictionRate:
    r"""How often a statement and its reverse-keyed counterpart get the same side of the scale.

    Parameters
    ----------
    forward, reverse : array_like, shape (n,)
        Raw answers to a statement and to its reverse, paired by condition (same prompt, temperature,
        run, ...); NaN where unscored (the pair is left out and counted).
    points : int
        Scale points; the midpoint is ``(points + 1) / 2``.
    confidence : float
        Level of the Wilson (1927) score interval.

    Returns
    -------
    ContradictionRate

    Raises
    ------
    ValueError
        Different lengths, non-numeric input, points below 2.
    UndefinedStatistic
        No complete pair.

    Notes
    -----
    A pair contradicts when both answers lie above the midpoint (agreeing with a statement and with
    its negation) or both below. Rules out the **always-agree** (acquiescent) answerer, whose rate
    is 1 even when the strength of its agreement follows the item; a uniformly random answerer on
    five points contradicts with probability 2 (2/5)^2 = 0.32; a consistent model near 0.
    """
    level = check_confidence(confidence)
    if points < 2:
        raise ValueError(f"points must be at least 2, got {points}")
    first = np.asarray(forward, dtype=np.float64).reshape(-1)
    second = np.asarray(reverse, dtype=np.float64).reshape(-1)
    if first.shape != second.shape:
        raise ValueError(f"forward and reverse need one answer per pair: {first.size} vs {second.size}")
    complete = ~(np.isnan(first) | np.isnan(second))
    n = int(complete.sum())
    if n == 0:
        raise UndefinedStatistic("contradiction rate", "no complete pair of answers")
    contradictions = int(np.sum(contradicts(first[complete], second[complete], points=points)))
    share = contradictions / n
    z = float(scipy_stats.norm.ppf(0.5 + level / 2))
    denominator = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / denominator
    half = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n)) / denominator
    return ContradictionRate(share, max(0.0, centre - half), min(1.0, centre + half), n, int((~complete).sum()))


@dataclass(frozen=True, slots=True)
class DegeneracyCheck:
    """Whether the answers follow the questions, and if not, why (one reason per failed criterion)."""

    passed: bool
    reasons: tuple[str, ...]


def follows_questions(
    signal: ItemSignal,
    contradictions: ContradictionRate | None = None,
    *,
    alpha: float = 0.001,
    min_signal_to_noise: float = 0.25,
    max_contradiction_rate: float = 0.2,
) -> DegeneracyCheck:
    """The stated criterion: raw answers carry item signal, and statements are not agreed with both ways.

    Parameters
    ----------
    signal : ItemSignal
        From :func:`raw_item_signal`.
    contradictions : ContradictionRate, optional
        From :func:`contradiction_rate`, when the bank has (statement, reverse) pairs.
    alpha : float
        The item component must be significant at this level (restricted likelihood-ratio test).
    min_signal_to_noise : float
        ... and at least this fraction of the run-to-run variance: 0.25 means the items' SD is at
        least half the SD of a single answer's run-to-run noise, so significance on a huge design
        cannot rest on a negligible effect.
    max_contradiction_rate : float
        The upper Wilson bound of the contradiction rate must stay below it (a random answerer's
        expected rate is 0.32, an acquiescent one's 1).

    Returns
    -------
    DegeneracyCheck
        ``passed`` only when every criterion holds.
    """
    reasons = []
    if signal.p_value >= alpha:
        reasons.append(f"raw answers show no item signal (p = {signal.p_value:.3g} >= {alpha:g})")
    if signal.signal_to_noise < min_signal_to_noise:
        reasons.append(
            f"item variance is {signal.signal_to_noise:.3g} of run-to-run variance (< {min_signal_to_noise:g})"
        )
    if contradictions is not None and contradictions.ci_high >= max_contradiction_rate:
        reasons.append(
            f"agrees or disagrees with a statement and its reverse in {contradictions.rate:.0%} of pairs "
            f"(upper bound {contradictions.ci_high:.2f} >= {max_contradiction_rate:g})"
        )
    return DegeneracyCheck(not reasons, tuple(reasons))
