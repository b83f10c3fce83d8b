"""The perturbation figures of a set of units; the bootstrap passes the units of resampled samples.

Accuracy rule (the study's MSE-based custom accuracy, on the task's label weights; label_set.py): accuracy
= 1 - MSE / worst penalty. On the sentiment weights -3, -2, 0, +2, +3, with label gold the error is the
ordinary squared difference and the worst penalty 36. With binary (polarity) gold a positive text
accepts both positive labels, so the error is the squared distance to the nearer of +2 and +3 (a
negative text: -2 and -3), and the worst penalty is 25 (-3 for a positive text). Unscored answers
(refusals, invalid, API errors) have no error: they are left out of the accuracy, counted in
``n_left_out`` and judged on their own through ``unscored_rate``; in the consistency they count
as disagreeing with the modal label. A nominal label set (no weights) costs 1 per wrong label, so its
custom accuracy is the share of right answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from snap_bench.instruments.task.answers import Answers
from snap_bench.instruments.task.few_shot import ACCURACY_WEIGHT
from snap_bench.stats import FloatArray, UndefinedStatistic
from snap_bench.stats.categorical import (
    category_counts,
    fleiss_kappa,
    modal_share,
    mse_accuracy,
)

NO_POLARITY = "not applicable: the labels have no weights on both sides of zero"

#: A figure of the units given (indices into the table's rows), raising UndefinedStatistic where it has none.
UnitStatistic = Callable[[Answers, npt.NDArray[np.intp]], float]


def squared_errors(answers: Answers, units: npt.NDArray[np.intp]) -> FloatArray:
    """Squared errors, units x variants, NaN where unscored."""
    values = answers.values[units]
    errors = np.full(values.shape, np.nan)
    scored = ~np.isnan(values)
    if scored.any():
        low = np.broadcast_to(answers.gold_low[units][:, None], values.shape)[scored]
        high = np.broadcast_to(answers.gold_high[units][:, None], values.shape)[scored]
        errors[scored] = answers.label_set.errors(values[scored], low, high)
    return errors


def accuracy_of_errors(answers: Answers, errors: FloatArray) -> float:
    """Custom accuracy of the given squared errors, NaN (unscored) left out."""
    present = errors[~np.isnan(errors)]
    if not present.size:
        raise UndefinedStatistic("custom accuracy", "no scored answer")
    return mse_accuracy(present, answers.label_set.max_error(answers.gold_kind))


def custom_accuracy(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    return accuracy_of_errors(answers, squared_errors(answers, units))


def variant_accuracies(answers: Answers, units: npt.NDArray[np.intp]) -> list[float | None]:
    errors = squared_errors(answers, units)
    result: list[float | None] = []
    for column in range(errors.shape[1]):
        try:
            result.append(accuracy_of_errors(answers, errors[:, column]))
        except UndefinedStatistic:
            result.append(None)
    return result


def polarity_accuracy(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    """Share of scored answers on the gold's side of neutral (neutral is right only for neutral gold)."""
    if not answers.label_set.has_polarity:
        raise UndefinedStatistic("polarity accuracy", NO_POLARITY)
    values = answers.values[units]
    gold_sign = np.sign(answers.gold_low[units] + answers.gold_high[units])[:, None]
    scored = ~np.isnan(values)
    if not scored.any():
        raise UndefinedStatistic("polarity accuracy", "no scored answer")
    return float((np.sign(values) == gold_sign)[scored].mean())


def exact_accuracy(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    """Share of scored answers naming the gold label exactly."""
    values = answers.values[units]
    scored = ~np.isnan(values)
    if not scored.any():
        raise UndefinedStatistic("exact accuracy", "no scored answer")
    return float((values == answers.gold_low[units][:, None])[scored].mean())


def consistency(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    """Mean over units of the share of variants giving the unit's modal label."""
    return float(modal_share(answers.values[units]).mean())


def weighted_index(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    """0.7 x custom accuracy (over all variants) + 0.3 x consistency, the study's ranking figure."""
    return ACCURACY_WEIGHT * custom_accuracy(answers, units) + (1 - ACCURACY_WEIGHT) * consistency(answers, units)


def kappa(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    """Fleiss' kappa with units as subjects and variants as raters, on units every variant labelled."""
    values = answers.values[units]
    complete = values[~np.isnan(values).any(axis=1)]
    # On a single subject kappa is at most 0 whatever the raters do (its P-bar never exceeds its P_e),
    # so a figure from one input would read as "no agreement" when it says nothing.
    if complete.shape[0] < 2:
        raise UndefinedStatistic(
            "Fleiss' kappa", f"{complete.shape[0]} input(s) labelled by every variant; it needs at least 2"
        )
    counts, _ = category_counts(complete)
    return fleiss_kappa(counts)


def variant_spread(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    """Best minus worst variant's custom accuracy."""
    accuracies = [a for a in variant_accuracies(answers, units) if a is not None]
    if len(accuracies) < 2:
        raise UndefinedStatistic("variant spread", "fewer than two variants with a scored answer")
    return max(accuracies) - min(accuracies)


def level_pairs(answers: Answers, factor: str) -> tuple[list[str], list[tuple[int, int]]]:
    """The factor's two levels, and the pairs of variant columns that differ only in it."""
    levels = list(dict.fromkeys(levels[factor] for levels in answers.variant_levels))
    index = {tuple(sorted(levels.items())): column for column, levels in enumerate(answers.variant_levels)}
    pairs = []
    for column, own in enumerate(answers.variant_levels):
        if own[factor] == levels[0]:
            twin = tuple(sorted({**own, factor: levels[1]}.items()))
            if twin in index:
                pairs.append((column, index[twin]))
    return levels, pairs


def accuracy_effect(answers: Answers, units: npt.NDArray[np.intp], factor: str) -> float:
    """Custom accuracy at the factor's first level minus at its second, levels in alphabetical order
    (casual - formal, imp - q, task - text, syn1 - syn2)."""
    first, second = level_columns(answers, factor)
    errors = squared_errors(answers, units)
    return accuracy_of_errors(answers, errors[:, first]) - accuracy_of_errors(answers, errors[:, second])


def level_columns(answers: Answers, factor: str) -> tuple[list[int], list[int]]:
    """The variant columns at the factor's first level, and at its second."""
    levels, _ = level_pairs(answers, factor)
    first = [c for c, lv in enumerate(answers.variant_levels) if lv[factor] == levels[0]]
    second = [c for c, lv in enumerate(answers.variant_levels) if lv[factor] == levels[1]]
    return first, second


def flip_rate(answers: Answers, units: npt.NDArray[np.intp], factor: str) -> float:
    """Share of (unit, variant pair differing only in ``factor``) whose labels differ.

    A pair where one side is unscored counts as a change (the rewording lost the answer); a pair
    where both are unscored does not count at all.
    """
    _, pairs = level_pairs(answers, factor)
    values = answers.values[units]
    changed = total = 0
    for first, second in pairs:
        a, b = values[:, first], values[:, second]
        counted = ~(np.isnan(a) & np.isnan(b))
        total += int(counted.sum())
        changed += int((counted & ~((a == b) & ~np.isnan(a))).sum())
    if total == 0:
        raise UndefinedStatistic("flip rate", "no pair of variants with an answer")
    return changed / total


def max_flip_rate(factors: Sequence[str]) -> UnitStatistic:
    """The statistic: the largest flip rate of the ``factors``."""

    def statistic(answers: Answers, units: npt.NDArray[np.intp]) -> float:
        if not factors:
            raise UndefinedStatistic("largest flip rate", "no two-level factor")
        return max(flip_rate(answers, units, factor) for factor in factors)

    return statistic


def accuracy_effect_of(factor: str) -> UnitStatistic:
    """The statistic: :func:`accuracy_effect` of ``factor``."""
    return lambda answers, units: accuracy_effect(answers, units, factor)


def flip_rate_of(factor: str) -> UnitStatistic:
    """The statistic: :func:`flip_rate` of ``factor``."""
    return lambda answers, units: flip_rate(answers, units, factor)


def normalised_errors(answers: Answers) -> FloatArray:
    """Squared errors over the worst penalty, units x variants (NaN: unscored): 1 - mean is the accuracy."""
    every = np.arange(len(answers.sample_of), dtype=np.intp)
    result: FloatArray = squared_errors(answers, every) / answers.label_set.max_error(answers.gold_kind)
    return result


def value_or_none(compute: Callable[[], float]) -> float | None:
    """The statistic ``compute`` returns, or None where it is undefined (a figure shown, never judged)."""
    try:
        return compute()
    except UndefinedStatistic:
        return None
