"""Observations of the perturbation instrument -> accuracy, consistency and agreement across rewordings.

Units: a *sample* is one labelled text; an *occasion* is one (temperature, run); a *variant* is one
rewording (formality-phrasing-order-synonyms). Every interval resamples samples, the independent
units, keeping all their variants and occasions together.

Accuracy rule (the study's MSE-based custom accuracy, on the polarity-weighted encoding
-3, -2, 0, +2, +3): accuracy = 1 - MSE / worst penalty. With five-class gold the error is the
ordinary squared difference and the worst penalty 36. With binary (polarity) gold a positive text
accepts both positive labels, so the error is the squared distance to the nearer of +2 and +3 (a
negative text: -2 and -3), and the worst penalty is 25 (-3 for a positive text). Unscored answers
(refusals, invalid, API errors) have no error: they are left out of the accuracy, counted in
``n_left_out`` and judged on their own through ``unscored_rate``; in the consistency they count
as disagreeing with the modal label.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from snap_bench.analysis.metric_tables import AnalysisSettings, Metric, ModelAnalysis, proportion
from snap_bench.instruments.perturbation.few_shot import (
    ACCURACY_WEIGHT,
    EXAMPLES_FACTOR,
    answered_accuracy,
    variant_index,
)
from snap_bench.instruments.perturbation.resampling import CountsStatistic, SampleSums
from snap_bench.instruments.perturbation.sentiment_data import (
    ENCODING,
    LABELS,
    gold_interval,
    max_squared_error,
    read_gold,
)
from snap_bench.observations.observation import Observation
from snap_bench.observations.parsing import AnswerCode
from snap_bench.stats import UndefinedStatistic, bootstrap_ci
from snap_bench.stats.categorical import (
    category_counts,
    fleiss_kappa,
    interval_squared_errors,
    modal_share,
    mse_accuracy,
)

FloatArray = npt.NDArray[np.float64]
VARIANT_FACTORS = ("formality", "phrasing", "order", "synonyms")
LABEL_OF = {value: label for label, value in ENCODING.items()}
NOT_FIVE_CLASS = "not applicable: the data have polarity gold only (e.g. fresh/rotten), not five classes"


@dataclass(frozen=True)
class Answers:
    """One model's baseline as arrays: ``values[u, v]`` is the encoding unit u got from variant v (NaN: none).

    A unit is a (sample, occasion); ``sample_of[u]`` indexes ``samples``.
    """

    samples: list[str]
    variants: list[str]
    variant_levels: list[dict[str, str]]
    sample_of: npt.NDArray[np.intp]
    values: FloatArray
    gold_low: FloatArray  # per unit
    gold_high: FloatArray
    gold_kind: str
    gold_labels: list[str]  # per unit

    def units_of(self, sample_indices: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        """The units of the (resampled, possibly repeated) samples, in that order."""
        groups = self._groups()
        return np.concatenate([groups[index] for index in sample_indices])

    def _groups(self) -> list[npt.NDArray[np.intp]]:
        cached: list[npt.NDArray[np.intp]] | None = self.__dict__.get("_cached_groups")
        if cached is None:
            cached = [np.flatnonzero(self.sample_of == index) for index in range(len(self.samples))]
            object.__setattr__(self, "_cached_groups", cached)
        return cached


def analyse_perturbation(
    model: str, instrument: str, observations: Sequence[Observation], settings: AnalysisSettings
) -> ModelAnalysis:
    """The robustness figures of one model: see the module docstring for the rules."""
    baseline = [o for o in observations if EXAMPLES_FACTOR not in o.factors]
    few_shot = [o for o in observations if EXAMPLES_FACTOR in o.factors]
    result = ModelAnalysis(model, instrument, len(observations), sum(o.is_scored for o in observations))
    n_unscored = sum(not o.is_scored for o in baseline)
    # The metrics are judged on the baseline; phase 2 is reported beside them, not folded into the composite.
    result.judged_scored_share = 1 - n_unscored / len(baseline) if baseline else 0.0
    metrics = result.metrics
    for name, code in (
        ("refusal_rate", AnswerCode.REFUSAL),
        ("invalid_rate", AnswerCode.INVALID),
        ("api_error_rate", AnswerCode.API_ERROR),
    ):
        metrics[name] = proportion(sum(o.code == int(code) for o in baseline), len(baseline), settings.confidence)
    metrics["unscored_rate"] = proportion(n_unscored, len(baseline), settings.confidence)

    answers = answers_table(baseline)
    if isinstance(answers, str):
        for name in ("custom_accuracy", "polarity_accuracy", "exact_accuracy", "consistency", "weighted_index"):
            metrics[name] = Metric(None, undefined=answers)
        return result

    sums = _sample_sums(answers)  # each interval's resamples at once (instruments/perturbation/resampling.py)
    metrics["custom_accuracy"] = _bootstrapped(answers, custom_accuracy, settings, sums.custom_accuracy)
    metrics["polarity_accuracy"] = _bootstrapped(answers, polarity_accuracy, settings, sums.polarity_accuracy)
    metrics["exact_accuracy"] = (
        _bootstrapped(answers, exact_accuracy, settings, sums.exact_accuracy)
        if answers.gold_kind == "five_class"
        else Metric(None, undefined=NOT_FIVE_CLASS)
    )
    metrics["consistency"] = _bootstrapped(answers, consistency, settings, sums.consistency, left_out=False)
    index = sums.weighted_index(ACCURACY_WEIGHT)
    metrics["weighted_index"] = _bootstrapped(answers, weighted_index, settings, index)
    metrics["fleiss_kappa"] = _bootstrapped(answers, kappa, settings, sums.fleiss_kappa, complete_only=True)
    metrics.update(_variant_effect(answers, settings, sums))
    factors = [f for f in VARIANT_FACTORS if len({levels.get(f) for levels in answers.variant_levels}) == 2]
    pairs = {factor: _level_pairs(answers, factor)[1] for factor in factors}
    for factor in factors:
        effect = sums.accuracy_effect(*_level_columns(answers, factor))
        metrics[f"accuracy_effect[{factor}]"] = _bootstrapped(answers, _effect(factor), settings, effect)
        flips = sums.flip_rate(pairs[factor])
        metrics[f"flip_rate[{factor}]"] = _bootstrapped(answers, _flips(factor), settings, flips, left_out=False)
    most = sums.max_flip_rate(list(pairs.values()))
    metrics["max_flip_rate"] = _bootstrapped(answers, max_flip_rate(factors), settings, most, left_out=False)

    result.effects = {
        factor: value for factor in factors if (value := metrics[f"accuracy_effect[{factor}]"].value) is not None
    }
    result.details = _details(answers, factors, metrics)
    if few_shot:
        result.details["phase2"] = _phase2(answers, baseline, few_shot, metrics, settings)
    return result


def answers_table(observations: Sequence[Observation]) -> Answers | str:
    """The baseline as arrays, or the reason it cannot be analysed (no gold, mixed gold kinds)."""
    if not observations:
        return "no baseline observations"
    golds = {o.item: read_gold(o.construct) for o in observations}
    if any(gold is None for gold in golds.values()):
        return "no gold label recorded with the answers"
    kinds = {gold[0] for gold in golds.values() if gold is not None}
    if len(kinds) != 1:
        return f"mixed kinds of gold {sorted(kinds)}"
    gold_kind = kinds.pop()
    variants: dict[str, dict[str, str]] = {}
    units: dict[tuple[str, float, int], dict[str, float]] = {}
    for o in observations:
        levels = {f: o.factors[f] for f in VARIANT_FACTORS if f in o.factors}
        variant = "-".join(levels.values())
        variants.setdefault(variant, levels)
        value = math.nan if o.keyed_score is None or not o.is_scored else float(o.keyed_score)
        units.setdefault((o.item, o.temperature, o.run), {})[variant] = value
    samples = sorted({key[0] for key in units})
    # Alphabetical, whatever order the tests ran in (xdist, random order): the table, the tie-break
    # of the best variant (as in phase 2) and which level comes first in an effect follow from it.
    names = sorted(variants)
    keys = sorted(units)
    intervals = [gold_interval(gold_kind, _gold(golds[key[0]])) for key in keys]
    return Answers(
        samples=samples,
        variants=names,
        variant_levels=[variants[name] for name in names],
        sample_of=np.array([samples.index(key[0]) for key in keys], dtype=np.intp),
        values=np.array([[units[key].get(name, math.nan) for name in names] for key in keys]),
        gold_low=np.array([low for low, _ in intervals]),
        gold_high=np.array([high for _, high in intervals]),
        gold_kind=gold_kind,
        gold_labels=[_gold(golds[key[0]]) for key in keys],
    )


def _gold(gold: tuple[str, str] | None) -> str:
    if gold is None:  # answers_table returns early before this can happen
        raise ValueError("no gold")
    return gold[1]


# -- statistics of a set of units (the bootstrap passes the units of resampled samples) -------------


def _errors(answers: Answers, units: npt.NDArray[np.intp]) -> FloatArray:
    """Squared errors, units x variants, NaN where unscored."""
    values = answers.values[units]
    errors = np.full(values.shape, np.nan)
    scored = ~np.isnan(values)
    if scored.any():
        low = np.broadcast_to(answers.gold_low[units][:, None], values.shape)[scored]
        high = np.broadcast_to(answers.gold_high[units][:, None], values.shape)[scored]
        errors[scored] = interval_squared_errors(values[scored], low, high)
    return errors


def _accuracy_of(answers: Answers, errors: FloatArray) -> float:
    present = errors[~np.isnan(errors)]
    if not present.size:
        raise UndefinedStatistic("custom accuracy", "no scored answer")
    return mse_accuracy(present, max_squared_error(answers.gold_kind))


def custom_accuracy(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    return _accuracy_of(answers, _errors(answers, units))


def variant_accuracies(answers: Answers, units: npt.NDArray[np.intp]) -> list[float | None]:
    errors = _errors(answers, units)
    result: list[float | None] = []
    for column in range(errors.shape[1]):
        try:
            result.append(_accuracy_of(answers, errors[:, column]))
        except UndefinedStatistic:
            result.append(None)
    return result


def polarity_accuracy(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    """Share of scored answers on the gold's side of neutral (neutral is right only for neutral gold)."""
    values = answers.values[units]
    gold_sign = np.sign(answers.gold_low[units] + answers.gold_high[units])[:, None]
    scored = ~np.isnan(values)
    if not scored.any():
        raise UndefinedStatistic("polarity accuracy", "no scored answer")
    return float((np.sign(values) == gold_sign)[scored].mean())


def exact_accuracy(answers: Answers, units: npt.NDArray[np.intp]) -> float:
    """Share of scored answers naming the five-class gold label exactly."""
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


def _level_pairs(answers: Answers, factor: str) -> tuple[list[str], list[tuple[int, int]]]:
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
    first, second = _level_columns(answers, factor)
    errors = _errors(answers, units)
    return _accuracy_of(answers, errors[:, first]) - _accuracy_of(answers, errors[:, second])


def _level_columns(answers: Answers, factor: str) -> tuple[list[int], list[int]]:
    """The variant columns at the factor's first level, and at its second."""
    levels, _ = _level_pairs(answers, factor)
    first = [c for c, lv in enumerate(answers.variant_levels) if lv[factor] == levels[0]]
    second = [c for c, lv in enumerate(answers.variant_levels) if lv[factor] == levels[1]]
    return first, second


def flip_rate(answers: Answers, units: npt.NDArray[np.intp], factor: str) -> float:
    """Share of (unit, variant pair differing only in ``factor``) whose labels differ.

    A pair where one side is unscored counts as a change (the rewording lost the answer); a pair
    where both are unscored does not count at all.
    """
    _, pairs = _level_pairs(answers, factor)
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


def max_flip_rate(factors: Sequence[str]) -> Callable[[Answers, npt.NDArray[np.intp]], float]:
    def statistic(answers: Answers, units: npt.NDArray[np.intp]) -> float:
        if not factors:
            raise UndefinedStatistic("largest flip rate", "no two-level factor")
        return max(flip_rate(answers, units, factor) for factor in factors)

    return statistic


def _effect(factor: str) -> Callable[[Answers, npt.NDArray[np.intp]], float]:
    return lambda answers, units: accuracy_effect(answers, units, factor)


def _flips(factor: str) -> Callable[[Answers, npt.NDArray[np.intp]], float]:
    return lambda answers, units: flip_rate(answers, units, factor)


def _bootstrapped(
    answers: Answers,
    statistic: Callable[[Answers, npt.NDArray[np.intp]], float],
    settings: AnalysisSettings,
    batch: CountsStatistic,
    *,
    left_out: bool = True,
    complete_only: bool = False,
) -> Metric:
    """The statistic on every unit, with a percentile interval over resampled samples.

    ``batch`` is the same statistic of resampled sample counts (instruments/perturbation/resampling.py):
    the bootstrap draws the same resamples either way, and this way costs one matrix product.
    """
    every = np.arange(len(answers.sample_of), dtype=np.intp)
    unscored = np.isnan(answers.values)
    if complete_only:
        n, n_left_out = int((~unscored.any(axis=1)).sum()), int(unscored.any(axis=1).sum())
    else:
        n = int((~unscored).sum()) if left_out else unscored.size
        n_left_out = int(unscored.sum()) if left_out else 0
    try:
        value = statistic(answers, every)
    except UndefinedStatistic as error:
        return Metric(None, n=n, n_left_out=n_left_out, undefined=error.reason)
    if len(answers.samples) < 2:
        return Metric(value, n=n, n_left_out=n_left_out, note="no interval: one sample")
    samples = np.arange(len(answers.samples), dtype=np.float64).reshape(-1, 1)
    try:
        interval = bootstrap_ci(
            batch,
            samples,
            n_resamples=settings.n_resamples,
            confidence=settings.confidence,
            seed=settings.seed,
            vectorized=True,
        )
    except UndefinedStatistic as error:
        return Metric(value, n=n, n_left_out=n_left_out, note=f"no interval: {error.reason}")
    return Metric(value, interval.low, interval.high, n=n, n_left_out=n_left_out)


def normalised_errors(answers: Answers) -> FloatArray:
    """Squared errors over the worst penalty, units x variants (NaN: unscored): 1 - mean is the accuracy."""
    every = np.arange(len(answers.sample_of), dtype=np.intp)
    result: FloatArray = _errors(answers, every) / max_squared_error(answers.gold_kind)
    return result


def _variant_effect(answers: Answers, settings: AnalysisSettings, sums: SampleSums) -> dict[str, Metric]:
    """The variant effect net of input noise (variant_effect), and the spread judged on it (variant_spread).

    Both come from the two-way mixed model of :mod:`variant_effect` (inputs random), with a percentile
    interval over resampled samples; the observed max-min of the variant accuracies, which carries
    the input noise, is kept beside them as ``variant_spread_observed``, shown and never judged.
    """
    from snap_bench.instruments.perturbation.variant_effect import (
        corrected_spread_batch,
        variant_f_test,
        variant_sd_batch,
    )
    from snap_bench.stats.paired import cluster_bootstrap_ci

    errors = normalised_errors(answers)
    n_scored = int((~np.isnan(errors)).sum())
    n_left_out = int(np.isnan(errors).sum())
    statistic, df1, df2, p_value = variant_f_test(errors)
    test = f"F({df1:g}, {df2:g}) = {statistic:.2f}, p = {p_value:.3g}" if not math.isnan(statistic) else "no F test"
    result: dict[str, Metric] = {}
    for name, batch in (("variant_effect_sd", variant_sd_batch), ("variant_spread", corrected_spread_batch)):
        value = float(batch(errors, np.ones((1, errors.shape[0])))[0])
        if math.isnan(value):
            result[name] = Metric(None, n=n_scored, n_left_out=n_left_out, undefined="fewer than two inputs scored")
            continue
        note = f"net of input noise (inputs a random effect); variants differ: {test}"
        try:
            interval = cluster_bootstrap_ci(
                batch,
                errors,
                answers.sample_of,
                n_resamples=settings.n_resamples,
                confidence=settings.confidence,
                seed=settings.seed,
            )
        except (UndefinedStatistic, ValueError) as error:
            result[name] = Metric(value, n=n_scored, n_left_out=n_left_out, note=f"{note}; no interval: {error}")
            continue
        result[name] = Metric(value, interval.low, interval.high, n=n_scored, n_left_out=n_left_out, note=note)
    result["variant_spread_observed"] = _bootstrapped(answers, variant_spread, settings, sums.variant_spread)
    return result


def _sample_sums(answers: Answers) -> SampleSums:
    every = np.arange(len(answers.sample_of), dtype=np.intp)
    errors = _errors(answers, every)
    worst = max_squared_error(answers.gold_kind)
    return SampleSums(
        answers.values, errors, answers.gold_low, answers.gold_high, answers.sample_of, len(answers.samples), worst
    )


# -- what the report draws -------------------------------------------------------------------


def _details(answers: Answers, factors: Sequence[str], metrics: dict[str, Metric]) -> dict[str, Any]:
    every = np.arange(len(answers.sample_of), dtype=np.intp)
    model_consistency = consistency(answers, every)
    accuracies = variant_accuracies(answers, every)
    unscored = np.isnan(answers.values)
    variants: list[dict[str, Any]] = []
    for column, (name, own_levels) in enumerate(zip(answers.variants, answers.variant_levels, strict=True)):
        own = answers.values[:, column : column + 1]
        accuracy = accuracies[column]
        n_scored = int((~unscored[:, column]).sum())
        variants.append(
            {
                "id": name,
                "levels": own_levels,
                "custom_accuracy": accuracy,
                "answered_accuracy": answered_accuracy(accuracy, n_scored, len(answers.sample_of)),
                "polarity_accuracy": _maybe(partial(polarity_accuracy, _single(answers, own), every)),
                "weighted_index": variant_index(accuracy, n_scored, len(answers.sample_of), model_consistency),
                "unscored_rate": float(unscored[:, column].mean()),
                "n": n_scored,
            }
        )
    # Ranked as phase 2 chooses its variant: unscored answers count as the worst (few_shot.answered_accuracy).
    ranked = sorted(variants, key=lambda v: -float(v["answered_accuracy"]))  # stable: ties stay alphabetical
    per_factor: dict[str, Any] = {}
    for factor in factors:
        levels, _ = _level_pairs(answers, factor)
        errors = _errors(answers, every)
        per_factor[factor] = {
            "levels": levels,
            "accuracy": {level: _level_accuracy(answers, errors, factor, level) for level in levels},
            "accuracy_effect": metrics[f"accuracy_effect[{factor}]"].value,
            "flip_rate": metrics[f"flip_rate[{factor}]"].value,
        }
    shares = modal_share(answers.values)
    return {
        "gold_kind": answers.gold_kind,
        "labels": list(LABELS),
        "encoding": dict(ENCODING),
        "variants": variants,
        "best_variant": ranked[0]["id"] if ranked else None,
        "worst_variant": ranked[-1]["id"] if ranked else None,
        "factors": per_factor,
        "units": [
            {
                "sample": answers.samples[answers.sample_of[u]],
                "gold": answers.gold_labels[u],
                "consistency": float(shares[u]),
                "labels": [None if math.isnan(v) else LABEL_OF.get(int(v)) for v in answers.values[u]],
            }
            for u in range(len(answers.sample_of))
        ],
    }


def _level_accuracy(answers: Answers, errors: FloatArray, factor: str, level: str) -> float | None:
    columns = [c for c, levels in enumerate(answers.variant_levels) if levels[factor] == level]
    try:
        return _accuracy_of(answers, errors[:, columns])
    except UndefinedStatistic:
        return None


def _single(answers: Answers, column: FloatArray) -> Answers:
    return Answers(
        answers.samples,
        answers.variants[:1],
        answers.variant_levels[:1],
        answers.sample_of,
        column,
        answers.gold_low,
        answers.gold_high,
        answers.gold_kind,
        answers.gold_labels,
    )


def _maybe(compute: Callable[[], float]) -> float | None:
    try:
        return compute()
    except UndefinedStatistic:
        return None


def _phase2(
    answers: Answers,
    baseline: Sequence[Observation],
    few_shot: Sequence[Observation],
    metrics: dict[str, Metric],
    settings: AnalysisSettings,
) -> dict[str, Any]:
    """Few-shot prefix and suffix against the same variant's baseline, on the held-out half of the inputs.

    Phase 2 asks the variant chosen on the whole baseline (the recordings hold that one); choosing and
    measuring on the same inputs inflates the gain (winner's curse), so the gain is measured on the
    held-out half only (few_shot.split_samples), and the variant the selection half alone would choose is
    reported beside it: where the two agree the held-out gain is clean of the choice. Each position's
    accuracy is over its own scored answers; its gain is paired: both accuracies on the (sample, occasion)
    units that the variant scored with and without examples.
    """
    from snap_bench.instruments.perturbation.few_shot import SPLIT_SEED, split_samples

    selection, held_out = split_samples(answers.samples)
    positions: dict[str, Any] = {}
    variant = _variant_of(few_shot[0])
    kept = set(held_out)
    without: dict[tuple[str, float, int], Observation] = {
        _unit(o): o for o in baseline if _variant_of(o) == variant and o.is_scored and o.item in kept
    }
    for position in sorted({o.factors[EXAMPLES_FACTOR] for o in few_shot}):
        rows = [o for o in few_shot if o.factors[EXAMPLES_FACTOR] == position]
        table = answers_table([_as_baseline(o) for o in rows])
        entry: dict[str, Any] = {"n": len(rows), "unscored_rate": sum(not o.is_scored for o in rows) / len(rows)}
        if not isinstance(table, str):
            units = np.arange(len(table.sample_of), dtype=np.intp)
            entry["custom_accuracy"] = _maybe(partial(custom_accuracy, table, units))
            entry["polarity_accuracy"] = _maybe(partial(polarity_accuracy, table, units))
        held = [o for o in rows if o.item in kept]
        pairs = [(without[_unit(o)], o) for o in held if o.is_scored and _unit(o) in without]
        gain = _paired_gain(pairs, len(held), settings)
        entry["n_paired"] = len(pairs)
        entry["gain"] = gain.value
        positions[position] = entry
        metrics[f"few_shot_gain[{position}]"] = replace(gain, note=_joined(gain.note, "held-out half of the inputs"))
    baseline_accuracy = None
    every = np.arange(len(answers.sample_of), dtype=np.intp)
    if variant in answers.variants:
        baseline_accuracy = variant_accuracies(answers, every)[answers.variants.index(variant)]
    chosen = _best_on(answers, [answers.samples.index(sample) for sample in selection])
    return {
        "variant": variant,
        "baseline_custom_accuracy": baseline_accuracy,
        "positions": positions,
        "split": {"seed": SPLIT_SEED, "selection": selection, "held_out": held_out},
        "best_on_selection_half": chosen,
        "choice_held_out": chosen == variant,
        "gain_rule": (
            "gain on the held-out half; phase 2 asked the variant chosen on every input"
            + (
                ", which the selection half alone also chooses, so the gain is clean of the choice"
                if chosen == variant
                else f"; the selection half alone would choose {chosen}, so the gain may still carry "
                "some of the choice's luck"
            )
        ),
    }


def _best_on(answers: Answers, sample_indices: list[int]) -> str | None:
    """The variant phase 2's rule picks on these samples: highest accuracy with unscored answers as the
    worst (few_shot.answered_accuracy); ties to the alphabetically first id."""
    if not sample_indices:
        return None
    units = answers.units_of(np.array(sample_indices, dtype=np.intp))
    accuracies = variant_accuracies(answers, units)
    scored = (~np.isnan(answers.values[units])).sum(axis=0)
    ranked = [
        (-answered_accuracy(accuracy, int(scored[column]), len(units)), name)
        for column, (name, accuracy) in enumerate(zip(answers.variants, accuracies, strict=True))
    ]
    return min(ranked)[1]


def _joined(*parts: str) -> str:
    return "; ".join(part for part in parts if part)


def _paired_gain(pairs: Sequence[tuple[Observation, Observation]], n_asked: int, settings: AnalysisSettings) -> Metric:
    """Custom accuracy with examples minus without, on the same scored units, with an interval over samples.

    The gain is (sum of squared errors without - with) / units / worst penalty; the bootstrap resamples
    samples with all their units, as the baseline's intervals do.
    """
    n_left_out = n_asked - len(pairs)
    undefined = "no sample has a scored answer with and without examples"
    if not pairs:
        return Metric(None, n=0, n_left_out=n_left_out, undefined=undefined)
    without = answers_table([before for before, _ in pairs])
    with_examples = answers_table([_as_baseline(after) for _, after in pairs])
    if isinstance(without, str) or isinstance(with_examples, str):
        return Metric(None, n=0, n_left_out=n_asked, undefined=without if isinstance(without, str) else undefined)
    units = np.arange(len(pairs), dtype=np.intp)
    before, after = _errors(without, units)[:, 0], _errors(with_examples, units)[:, 0]
    per_sample = np.array(
        [
            [before[mask].sum(), after[mask].sum(), mask.sum()]
            for mask in (without.sample_of == index for index in range(len(without.samples)))
        ],
        dtype=np.float64,
    )
    worst = max_squared_error(without.gold_kind)

    def gain(rows: FloatArray) -> float:
        return float((rows[:, 0].sum() - rows[:, 1].sum()) / rows[:, 2].sum() / worst)

    value = gain(per_sample)
    if len(per_sample) < 2:
        return Metric(value, n=len(pairs), n_left_out=n_left_out, note="no interval: one sample")
    interval = bootstrap_ci(
        gain, per_sample, n_resamples=settings.n_resamples, confidence=settings.confidence, seed=settings.seed
    )
    return Metric(value, interval.low, interval.high, n=len(pairs), n_left_out=n_left_out)


def _variant_of(observation: Observation) -> str:
    return "-".join(observation.factors.get(f, "") for f in VARIANT_FACTORS)


def _unit(observation: Observation) -> tuple[str, float, int]:
    return (observation.item, observation.temperature, observation.run)


def _as_baseline(observation: Observation) -> Observation:
    """A few-shot observation seen as a one-variant baseline, to reuse the same accuracy code."""
    factors = {f: level for f, level in observation.factors.items() if f != EXAMPLES_FACTOR}
    return Observation.from_dict({**observation.to_dict(), "factors": factors})
