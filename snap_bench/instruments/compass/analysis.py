"""One model's political-compass observations -> its coordinates, their uncertainty and their stability.

Coordinates are on [-10, 10] per axis (economic: left -, right +; social: libertarian -,
authoritarian +), from the keyed scores of the scored answers (see
:func:`snap_bench.stats.axis_coordinate`). Reported per model (with a two-way bootstrap interval
over items and runs), per run, per system prompt and per condition (system prompt x temperature x
choice); the spread of the per-condition coordinates is the instrument's stability figure, with
test-retest r and ICC(2,1) over the cells as for the profile. pandas is imported here, on the
controller at session end only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from snap_bench.analysis import (
    AnalysisSettings,
    Metric,
    ModelAnalysis,
    answer_rates,
    factor_effects,
    interval_metric,
    mean_pairwise_r_value,
    observation_table,
    proportion,
    retest_metrics,
    wide,
)
from snap_bench.instruments.compass.metrics import AXES, FACTORS
from snap_bench.observation import Observation
from snap_bench.parsing import ANSWER_CODE_LABELS
from snap_bench.stats import (
    UndefinedStatistic,
    coordinate_spread_batch,
    mean_pairwise_r_batch,
    two_way_bootstrap_ci,
)

# The conditions whose coordinates should agree: everything but the item, the paraphrase and the run.
CONDITION_FACTORS = ("system_prompt", "temperature", "choice")


def analyse_compass(
    model: str, instrument: str, observations: Sequence[Observation], settings: AnalysisSettings
) -> ModelAnalysis:
    table = observation_table(observations, FACTORS)
    table["axis"] = [o.construct or "" for o in observations]
    table["no_opinion"] = [bool(o.extra.get("no_opinion")) for o in observations]
    valid = table[table["code"] == 0]
    result = ModelAnalysis(model, instrument, len(table), len(valid))
    metrics = result.metrics
    metrics.update(answer_rates(table, settings))
    metrics["no_opinion_rate"] = proportion(int(table["no_opinion"].sum()), len(table), settings.confidence)
    metrics.update(retest_metrics(table, settings, with_cv=False))
    paraphrases = wide(table, ["item", *CONDITION_FACTORS, "run"], "paraphrase", "keyed")
    metrics["inter_paraphrase_r"] = interval_metric(
        paraphrases, mean_pairwise_r_value, mean_pairwise_r_batch, settings, 2
    )

    details: dict[str, Any] = {"coordinates": {}, "per_run": {}, "per_system_prompt": {}, "per_choice": {}}
    spreads: list[Metric] = []
    for axis in AXES:
        rows = valid[valid["axis"] == axis]
        metrics[axis] = _coordinate(rows, settings)
        details["coordinates"][axis] = metrics[axis].to_dict()
        spread = _spread(rows, settings)
        metrics[f"coordinate_sd_{axis}"] = spread
        spreads.append(spread)
        for column, key in (("run", "per_run"), ("system_prompt", "per_system_prompt"), ("choice", "per_choice")):
            for level, level_rows in rows.groupby(column):
                details[key].setdefault(str(level), {})[axis] = _point(level_rows["keyed"])
    metrics["coordinate_sd_max"] = _largest(spreads)
    details["per_condition"] = _per_condition(valid)
    details["items"] = _answers_per_item(table, observations)
    result.details = details
    result.effects = factor_effects(valid, FACTORS)
    result.construct_means = {axis: float(v) for axis, v in valid.groupby("axis")["keyed"].mean().items()}
    return result


def _point(keyed: Any) -> float | None:
    values = keyed.dropna().to_numpy(float)
    return float(5.0 * values.mean()) if values.size else None


def _coordinate(rows: Any, settings: AnalysisSettings) -> Metric:
    """The axis coordinate with a two-way bootstrap interval (items x runs)."""
    if rows.empty:
        return Metric(None, undefined="no scored answer on this axis")
    matrix = _item_by_run(rows)
    n = len(rows)
    point = _point(rows["keyed"])
    if matrix.shape[0] < 2:
        return Metric(point, n=n, note="no interval: fewer than 2 items answered")
    try:
        interval = two_way_bootstrap_ci(
            matrix, n_resamples=settings.n_resamples, confidence=settings.confidence, seed=settings.seed
        )
    except UndefinedStatistic as error:
        return Metric(point, n=n, note=f"no interval: {error.reason}")
    # The point is the mean over answers; the interval resamples item x run means (equal weights).
    return Metric(point, interval.low, interval.high, n=n)


def _item_by_run(rows: Any) -> Any:
    """Mean keyed score per item (rows) and run (columns); NaN where an item has no scored answer in a run."""
    return rows.groupby(["item", "run"])["keyed"].mean().unstack("run").to_numpy(float)


def _spread(rows: Any, settings: AnalysisSettings) -> Metric:
    """SD of the coordinates across conditions, bootstrapped over items."""
    if rows.empty:
        return Metric(None, undefined="no scored answer on this axis")
    conditions = rows.assign(condition=rows[list(CONDITION_FACTORS)].astype(str).agg("/".join, axis=1))
    matrix = conditions.groupby(["item", "condition"])["keyed"].mean().unstack("condition")
    data = matrix.to_numpy(float)
    if data.shape[1] < 2:
        return Metric(None, n=int(data.shape[1]), undefined="fewer than two conditions")
    point = float(coordinate_spread_batch(data)[0])
    if np.isnan(point):
        return Metric(None, n=int(data.shape[1]), undefined="fewer than two conditions with a coordinate")
    try:
        interval = settings.interval(coordinate_spread_batch, data)
    except (UndefinedStatistic, ValueError) as error:
        return Metric(point, n=int(data.shape[1]), note=f"no interval: {error}")
    return Metric(point, interval.low, interval.high, n=int(data.shape[1]), note="n = conditions")


def _largest(spreads: Sequence[Metric]) -> Metric:
    defined = [metric for metric in spreads if metric.value is not None]
    if not defined:
        return Metric(None, undefined="no axis has a spread")
    worst = max(defined, key=lambda metric: metric.value or 0.0)
    return Metric(worst.value, worst.ci_low, worst.ci_high, n=worst.n, note="the larger of the two axes' spreads")


def _per_condition(valid: Any) -> list[dict[str, Any]]:
    entries = []
    for levels, rows in valid.groupby(list(CONDITION_FACTORS)):
        entry: dict[str, Any] = dict(zip(CONDITION_FACTORS, map(str, levels), strict=True))
        for axis in AXES:
            entry[axis] = _point(rows[rows["axis"] == axis]["keyed"])
        entries.append(entry)
    return entries


def _answers_per_item(table: Any, observations: Sequence[Observation]) -> dict[str, Any]:
    """Per item: its axis, whether it is reverse-keyed, and how often each answer was given."""
    reverse = {o.item: bool(o.extra.get("reverse")) for o in observations}
    items: dict[str, Any] = {}
    for item, rows in table.groupby("item"):
        answers = rows.apply(_answer_label, axis=1).value_counts()
        items[str(item)] = {
            "axis": str(rows["axis"].iloc[0]),
            "reverse": reverse.get(str(item), False),
            "answers": {str(label): int(count) for label, count in answers.items()},
            "coordinate": _point(rows["keyed"]),
        }
    return items


ANSWER_LABELS = {2: "strongly agree", 1: "agree", 0: "neutral", -1: "disagree", -2: "strongly disagree"}


def _answer_label(row: Any) -> str:
    if row["no_opinion"]:
        return "no opinion"
    if row["code"] != 0:
        return next((label for code, label in ANSWER_CODE_LABELS.items() if code == int(row["code"])), "unscored")
    return ANSWER_LABELS.get(int(row["score"]), str(row["score"]))
