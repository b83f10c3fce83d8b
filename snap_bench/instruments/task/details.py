"""What the perturbation report draws: per variant, per factor and per unit figures of the baseline."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from snap_bench.analysis.metric_tables import Metric
from snap_bench.instruments.task.answers import Answers
from snap_bench.instruments.task.few_shot import answered_accuracy, variant_index
from snap_bench.instruments.task.unit_statistics import (
    accuracy_of_errors,
    consistency,
    level_pairs,
    polarity_accuracy,
    squared_errors,
    value_or_none,
    variant_accuracies,
)
from snap_bench.stats import FloatArray, UndefinedStatistic
from snap_bench.stats.categorical import modal_share


def report_details(answers: Answers, factors: Sequence[str], metrics: dict[str, Metric]) -> dict[str, Any]:
    """Per variant, per two-level factor (reading its effect and flip rate from ``metrics``) and per unit."""
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
                "polarity_accuracy": value_or_none(partial(polarity_accuracy, _single(answers, own), every)),
                "weighted_index": variant_index(accuracy, n_scored, len(answers.sample_of), model_consistency),
                "unscored_rate": float(unscored[:, column].mean()),
                "n": n_scored,
            }
        )
    # Ranked as phase 2 chooses its variant: unscored answers count as the worst (few_shot.answered_accuracy).
    ranked = sorted(variants, key=lambda v: -float(v["answered_accuracy"]))  # stable: ties stay alphabetical
    per_factor: dict[str, Any] = {}
    for factor in factors:
        levels, _ = level_pairs(answers, factor)
        errors = squared_errors(answers, every)
        per_factor[factor] = {
            "levels": levels,
            "accuracy": {level: _level_accuracy(answers, errors, factor, level) for level in levels},
            "accuracy_effect": metrics[f"accuracy_effect[{factor}]"].value,
            "flip_rate": metrics[f"flip_rate[{factor}]"].value,
        }
    shares = modal_share(answers.values)
    return {
        "gold_kind": answers.gold_kind,
        "labels": list(answers.label_set.labels),
        "encoding": dict(answers.label_set.encoding),
        "variants": variants,
        "best_variant": ranked[0]["id"] if ranked else None,
        "worst_variant": ranked[-1]["id"] if ranked else None,
        "factors": per_factor,
        "units": [
            {
                "sample": answers.samples[answers.sample_of[u]],
                "gold": answers.gold_labels[u],
                "consistency": float(shares[u]),
                "labels": [None if math.isnan(v) else answers.label_set.label_of(v) for v in answers.values[u]],
            }
            for u in range(len(answers.sample_of))
        ],
    }


def _level_accuracy(answers: Answers, errors: FloatArray, factor: str, level: str) -> float | None:
    """Custom accuracy over the variants at ``level`` of ``factor``; None without a scored answer."""
    columns = [c for c, levels in enumerate(answers.variant_levels) if levels[factor] == level]
    try:
        return accuracy_of_errors(answers, errors[:, columns])
    except UndefinedStatistic:
        return None


def _single(answers: Answers, column: FloatArray) -> Answers:
    """The table with one variant whose answers are ``column``."""
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
        answers.label_set,
        answers.dimensions,
    )
