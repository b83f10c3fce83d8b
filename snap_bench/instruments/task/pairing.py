"""How two models' perturbation answers line up for the upgrade gate: per input sample, per variant.

Every metric is computed on a matrix with one row per (sample, temperature, run) unit and one column per
variant (or per flip count), and the gate resamples samples, the design's random unit, with all their
units, as the instrument's own intervals do. Only the baseline (phase 1) answers enter: phase 2's
few-shot answers are asked of one variant per model and are not judged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from snap_bench.observations.observation import Observation
from snap_bench.stats import FloatArray

UNIT = ("item", "temperature", "run")


def baseline_table(instrument: Any, observations: Sequence[Observation]) -> Any:
    """One row per baseline answer: its unit, variant, label value, normalised error and unscored flag."""
    import pandas as pd

    from snap_bench.instruments.task.answers import variant_id
    from snap_bench.instruments.task.few_shot import EXAMPLES_FACTOR
    from snap_bench.instruments.task.labelled_data import read_gold

    rows: list[dict[str, Any]] = []
    dimensions = list(instrument.design.factors)
    labels = instrument.label_set
    for o in observations:
        if EXAMPLES_FACTOR in o.factors:
            continue
        value = math.nan if o.keyed_score is None or not o.is_scored else float(o.keyed_score)
        error = math.nan
        gold = read_gold(o.construct)
        if gold is not None and not math.isnan(value):
            low, high = labels.gold_interval(*gold)
            error = float(labels.errors([value], [low], [high])[0]) / labels.max_error(gold[0])
        rows.append(
            {
                "condition_id": o.condition_id,
                "item": o.item,
                "temperature": o.temperature,
                "run": o.run,
                "variant": variant_id(o, dimensions),
                "value": value,
                "error": error,
                "unscored": float(not o.is_scored),
            }
        )
    columns = ["condition_id", *UNIT, "variant", "value", "error", "unscored"]
    return pd.DataFrame(rows, columns=columns)


def flip_table(instrument: Any, observations: Sequence[Observation]) -> Any:
    """Per unit and two-level factor: how many variant pairs differing only in it changed label, of how
    many counted (the rule of the analysis's flip rate); long, one row per unit x count."""
    import pandas as pd

    from snap_bench.instruments.task.answers import answers_table
    from snap_bench.instruments.task.few_shot import EXAMPLES_FACTOR
    from snap_bench.instruments.task.unit_statistics import level_pairs

    baseline = [o for o in observations if EXAMPLES_FACTOR not in o.factors]
    answers = answers_table(baseline, instrument.label_set, list(instrument.design.factors))
    if isinstance(answers, str):
        return pd.DataFrame(columns=[*UNIT, "count", "amount"])
    keys = sorted({(o.item, o.temperature, o.run) for o in baseline})
    rows: list[dict[str, Any]] = []
    for factor in answers.dimensions:
        if len({levels.get(factor) for levels in answers.variant_levels}) != 2:
            continue
        _, pairs = level_pairs(answers, factor)
        changed = np.zeros(len(keys))
        counted = np.zeros(len(keys))
        for first, second in pairs:
            a, b = answers.values[:, first], answers.values[:, second]
            both_missing = np.isnan(a) & np.isnan(b)
            counted += ~both_missing
            changed += ~both_missing & ~((a == b) & ~np.isnan(a))
        for index, key in enumerate(keys):
            unit = dict(zip(UNIT, key, strict=True))
            rows.append({**unit, "count": f"{factor}:changed", "amount": changed[index]})
            rows.append({**unit, "count": f"{factor}:total", "amount": counted[index]})
    return pd.DataFrame(rows, columns=[*UNIT, "count", "amount"])


def accuracy_batch(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """Custom accuracy, 1 - mean normalised squared error over the scored answers drawn."""
    present = ~np.isnan(matrix)
    with np.errstate(invalid="ignore", divide="ignore"):
        result: FloatArray = 1.0 - (counts @ np.where(present, matrix, 0.0).sum(axis=1)) / (
            counts @ present.sum(axis=1)
        )
    return result


def consistency_batch(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """Mean over the units drawn of the share of variants giving the unit's modal label."""
    from snap_bench.stats.categorical import modal_share

    result: FloatArray = (counts @ modal_share(matrix)) / counts.sum(axis=1)
    return result


def max_flip_rate_batch(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """The largest factor's flip rate; columns come in (factor:changed, factor:total) pairs."""
    changed, total = counts @ matrix[:, 0::2], counts @ matrix[:, 1::2]
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(total > 0, changed / total, np.nan)
        result: FloatArray = np.fmax.reduce(rates, axis=1)
    return result
