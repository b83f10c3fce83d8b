"""Phase 2: few-shot examples before and after the prompt, against the same variant's baseline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from snap_bench.analysis.metric_tables import AnalysisSettings, Metric
from snap_bench.instruments.task.answers import Answers, answers_table, variant_id
from snap_bench.instruments.task.few_shot import (
    EXAMPLES_FACTOR,
    SPLIT_SEED,
    answered_accuracy,
    split_samples,
)
from snap_bench.instruments.task.unit_statistics import (
    custom_accuracy,
    polarity_accuracy,
    squared_errors,
    value_or_none,
    variant_accuracies,
)
from snap_bench.observations.observation import Observation
from snap_bench.stats import FloatArray, bootstrap_ci


@dataclass(frozen=True)
class Phase2:
    """What phase 2 adds to a model's analysis: its entry of the details (``details["phase2"]``), and each
    position's few-shot gain keyed as a metric (``few_shot_gain[pre]``), reported beside the judged ones."""

    details: dict[str, Any]
    gains: dict[str, Metric]


def analyse_phase2(
    answers: Answers,
    baseline: Sequence[Observation],
    few_shot: Sequence[Observation],
    settings: AnalysisSettings,
) -> Phase2:
    """Few-shot prefix and suffix against the same variant's baseline, on the held-out half of the inputs.

    Phase 2 asks the variant chosen on the whole baseline (the recordings hold that one); choosing and
    measuring on the same inputs inflates the gain (winner's curse), so the gain is measured on the
    held-out half only (few_shot.split_samples), and the variant the selection half alone would choose is
    reported beside it: where the two agree the held-out gain is clean of the choice. Each position's
    accuracy is over its own scored answers; its gain is paired: both accuracies on the (sample, occasion)
    units that the variant scored with and without examples.
    """
    selection, held_out = split_samples(answers.samples)
    positions: dict[str, Any] = {}
    gains: dict[str, Metric] = {}
    variant = variant_id(few_shot[0], answers.dimensions)
    kept = set(held_out)
    without: dict[tuple[str, float | None, int], Observation] = {
        _unit(o): o for o in baseline if variant_id(o, answers.dimensions) == variant and o.is_scored and o.item in kept
    }
    for position in sorted({o.factors[EXAMPLES_FACTOR] for o in few_shot}):
        rows = [o for o in few_shot if o.factors[EXAMPLES_FACTOR] == position]
        table = answers_table([_as_baseline(o) for o in rows], answers.label_set, answers.dimensions)
        entry: dict[str, Any] = {"n": len(rows), "unscored_rate": sum(not o.is_scored for o in rows) / len(rows)}
        if not isinstance(table, str):
            units = np.arange(len(table.sample_of), dtype=np.intp)
            entry["custom_accuracy"] = value_or_none(partial(custom_accuracy, table, units))
            entry["polarity_accuracy"] = value_or_none(partial(polarity_accuracy, table, units))
        held = [o for o in rows if o.item in kept]
        pairs = [(without[_unit(o)], o) for o in held if o.is_scored and _unit(o) in without]
        gain = _paired_gain(pairs, len(held), settings, answers)
        entry["n_paired"] = len(pairs)
        entry["gain"] = gain.value
        positions[position] = entry
        gains[f"few_shot_gain[{position}]"] = replace(gain, note=_joined(gain.note, "held-out half of the inputs"))
    baseline_accuracy = None
    every = np.arange(len(answers.sample_of), dtype=np.intp)
    if variant in answers.variants:
        baseline_accuracy = variant_accuracies(answers, every)[answers.variants.index(variant)]
    chosen = _best_on(answers, [answers.samples.index(sample) for sample in selection])
    details = {
        "variant": variant,
        "baseline_custom_accuracy": baseline_accuracy,
        "positions": positions,
        "split": {"seed": SPLIT_SEED, "selection": selection, "held_out": held_out},
        "best_on_selection_half": chosen,
        "choice_held_out": chosen == variant,
        "gain_rule": _gain_rule(variant, chosen),
    }
    return Phase2(details, gains)


def _gain_rule(variant: str, chosen: str | None) -> str:
    """How far the held-out gain is clean of the choice of ``variant``, the one phase 2 asked."""
    return "gain on the held-out half; phase 2 asked the variant chosen on every input" + (
        ", which the selection half alone also chooses, so the gain is clean of the choice"
        if chosen == variant
        else f"; the selection half alone would choose {chosen}, so the gain may still carry some of the choice's luck"
    )


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


def _paired_gain(
    pairs: Sequence[tuple[Observation, Observation]], n_asked: int, settings: AnalysisSettings, baseline: Answers
) -> Metric:
    """Custom accuracy with examples minus without, on the same scored units, with an interval over samples.

    The gain is (sum of squared errors without - with) / units / worst penalty; the bootstrap resamples
    samples with all their units, as the baseline's intervals do.
    """
    n_left_out = n_asked - len(pairs)
    undefined = "no sample has a scored answer with and without examples"
    if not pairs:
        return Metric(None, n=0, n_left_out=n_left_out, undefined=undefined)
    without = answers_table([before for before, _ in pairs], baseline.label_set, baseline.dimensions)
    with_examples = answers_table([_as_baseline(after) for _, after in pairs], baseline.label_set, baseline.dimensions)
    if isinstance(without, str) or isinstance(with_examples, str):
        return Metric(None, n=0, n_left_out=n_asked, undefined=without if isinstance(without, str) else undefined)
    units = np.arange(len(pairs), dtype=np.intp)
    before, after = squared_errors(without, units)[:, 0], squared_errors(with_examples, units)[:, 0]
    per_sample = np.array(
        [
            [before[mask].sum(), after[mask].sum(), mask.sum()]
            for mask in (without.sample_of == index for index in range(len(without.samples)))
        ],
        dtype=np.float64,
    )
    worst = without.label_set.max_error(without.gold_kind)

    def gain(rows: FloatArray) -> float:
        return float((rows[:, 0].sum() - rows[:, 1].sum()) / rows[:, 2].sum() / worst)

    value = gain(per_sample)
    if len(per_sample) < 2:
        return Metric(value, n=len(pairs), n_left_out=n_left_out, note="no interval: one sample")
    interval = bootstrap_ci(
        gain, per_sample, n_resamples=settings.n_resamples, confidence=settings.confidence, seed=settings.seed
    )
    return Metric(value, interval.low, interval.high, n=len(pairs), n_left_out=n_left_out)


def _unit(observation: Observation) -> tuple[str, float | None, int]:
    return (observation.item, observation.temperature, observation.run)


def _as_baseline(observation: Observation) -> Observation:
    """A few-shot observation seen as a one-variant baseline, to reuse the same accuracy code."""
    factors = {f: level for f, level in observation.factors.items() if f != EXAMPLES_FACTOR}
    return Observation.from_dict({**observation.to_dict(), "factors": factors})
