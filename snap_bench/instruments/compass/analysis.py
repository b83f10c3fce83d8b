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

import functools
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from snap_bench.analysis.contradictions import contradiction_metrics, pair_table, reverse_pairs
from snap_bench.analysis.metric_tables import (
    AnalysisSettings,
    Metric,
    ModelAnalysis,
    answer_rates,
    factor_effects,
    interval_metric,
    mean_pairwise_r_value,
    observation_table,
    pairing_table,
    proportion,
    retest_metrics,
    wide,
)
from snap_bench.analysis.stability import level_metrics
from snap_bench.instruments.compass.factors import AXES, CONDITION_FACTORS, FACTORS, PAIR_CONDITION
from snap_bench.instruments.questionnaire.analysis import stability_design
from snap_bench.observations.observation import Observation
from snap_bench.observations.parsing import ANSWER_CODE_LABELS
from snap_bench.stats import (
    AXIS_SCALE,
    UndefinedStatistic,
    coordinate_spread_batch,
    mean_pairwise_r_batch,
    two_way_bootstrap_ci,
)
from snap_bench.stats.d_study import decision_study
from snap_bench.stats.g_study import g_study
from snap_bench.stats.g_study_design import GStudyDesign
from snap_bench.stats.position import MAX_ABS_SCORE
from snap_bench.stats.spread import spread_interval

# Within one temperature (never pooled): the conditions a placement should not depend on.
PLACEMENT_FACTORS = ("system_prompt", "choice")
# The G study of each temperature on the raw answers, as for every questionnaire: items measured, paraphrases
# nested in them, system prompt and choice crossed with them, runs replicating a cell.
STABILITY = stability_design("choice")
# The spread of the placement: conditions (system prompt x choice) measured, items and their paraphrases
# as facets, runs replicating. Its condition component is the spread net of run noise and item sampling.
SPREAD = GStudyDesign(
    "condition",
    ("item", "paraphrase"),
    nested={"paraphrase": ("item",)},
    interactions=(("condition", "item"),),
    replicate="run",
)
# One answer's keyed score (-2..+2) in coordinate points (-10..+10).
POINTS_PER_SCORE = AXIS_SCALE / MAX_ABS_SCORE


def analyse_compass(
    model: str, kind: Any, observations: Sequence[Observation], settings: AnalysisSettings
) -> ModelAnalysis:
    table = observation_table(observations, FACTORS)
    table["axis"] = [o.construct or "" for o in observations]
    table["no_opinion"] = [bool(o.extra.get("no_opinion")) for o in observations]
    valid = table[table["code"] == 0]
    result = ModelAnalysis(model, kind.name, len(table), len(valid))
    metrics = result.metrics
    metrics.update(answer_rates(table, settings))
    # The judged figures, each temperature apart: the G study of the raw answers, the contradictions
    # between statements of opposite direction, and the spread of the placement net of run noise.
    stability, details_g = level_metrics(table, STABILITY)
    metrics.update(stability)
    metrics.update(_contradictions(table, kind))
    metrics.update(_spreads(table))
    metrics["no_opinion_rate"] = proportion(int(table["no_opinion"].sum()), len(table), settings.confidence)
    metrics.update(retest_metrics(table, settings, with_cv=False))
    paraphrases = wide(table, ["item", *CONDITION_FACTORS, "run"], "paraphrase", "keyed")
    metrics["inter_paraphrase_r"] = interval_metric(
        paraphrases, mean_pairwise_r_value, mean_pairwise_r_batch, settings, 2
    )

    details: dict[str, Any] = {
        "coordinates": {},
        "per_run": {},
        "per_system_prompt": {},
        "per_choice": {},
        "g_study": details_g,
    }
    spreads: list[Metric] = []
    for axis in AXES:
        rows = valid[valid["axis"] == axis]
        metrics[axis] = _coordinate(rows, settings)
        details["coordinates"][axis] = metrics[axis].to_dict()
        spread = _spread(rows, settings)
        metrics[f"coordinate_sd_{axis}"] = replace(spread, note="the original design's figure (run noise included)")
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


def compass_pairs(instrument: Any) -> list[tuple[str, str]]:
    """The k-th forward item of an axis with its k-th reverse item (each answer in one pair), so an
    answerer that agrees with everything contradicts itself in every pair. Read from the item bank, not
    from the answers, which could carry another item's facts."""
    axes = {item.id: item.construct for item in instrument.items.values()}
    reverse = {item.id: item.reverse_scored for item in instrument.items.values()}
    return reverse_pairs(axes, reverse)


def _contradictions(table: Any, instrument: Any) -> dict[str, Metric]:
    """Per temperature: ``contradiction_rate[t0]`` (keyed -2..+2 scores read as 1..5 answers)."""
    return contradiction_metrics(table, compass_pairs(instrument), PAIR_CONDITION, shift=MAX_ABS_SCORE + 1)


def _spreads(table: Any) -> dict[str, Metric]:
    """Per temperature and axis: the SD of the placement across the shipped system prompts and choices,
    net of run noise, in coordinate points (``coordinate_spread_economic[t0]``); and the larger axis's
    (``coordinate_spread_max[t0]``), which is judged."""
    metrics: dict[str, Metric] = {}
    for level, rows in table.groupby("temperature", sort=True):
        spreads = []
        for axis in AXES:
            axis_rows = rows[rows["axis"] == axis]
            metric = _condition_spread(axis_rows)
            metrics[f"coordinate_spread_{axis}[{level}]"] = metric
            spreads.append(metric)
        metrics[f"coordinate_spread_max[{level}]"] = _largest(spreads)
    return metrics


def contradiction_table(instrument: Any, observations: Sequence[Observation]) -> Any:
    """One row per (statement, opposite statement) pair and condition, for the upgrade gate."""
    table = observation_table(observations, FACTORS)
    return pair_table(table, compass_pairs(instrument), PAIR_CONDITION, shift=MAX_ABS_SCORE + 1)


def spread_table(instrument: Any, observations: Sequence[Observation]) -> Any:
    """The shared table with each answer's axis and its condition (system prompt/temperature/choice): what
    the upgrade gate compares the spreads on."""
    table = pairing_table(instrument, observations)
    table["axis"] = [o.construct or "" for o in observations]
    table["condition"] = table[list(CONDITION_FACTORS)].astype(str).agg("/".join, axis=1)
    return table


def spread_max(instrument: Any, table: Any) -> tuple[float, float, float]:
    """The larger axis's spread net of run noise on one temperature's rows, with its interval, as
    ``coordinate_spread_max[level]`` reports it (for the upgrade gate); NaN when undefined."""
    largest = _largest([_condition_spread(table[table["axis"] == axis]) for axis in AXES])
    if largest.value is None or largest.ci_low is None or largest.ci_high is None:
        return math.nan, math.nan, math.nan
    return largest.value, largest.ci_low, largest.ci_high


def _condition_spread(rows: Any) -> Metric:
    designed = len(rows)
    scored = rows.dropna(subset=["keyed"])
    used = len(scored)
    if used < 2 or scored["item"].nunique() < 2:
        return Metric(None, n=used, n_left_out=designed - used, undefined="fewer than two statements answered")
    # Column-wise, not a row-wise join (a Python call per row)
    columns = [scored[name].astype(str) for name in PLACEMENT_FACTORS]
    condition = functools.reduce(lambda left, right: left + "/" + right, columns).tolist()
    if len(set(condition)) < 2:
        return Metric(None, n=used, n_left_out=designed - used, undefined="fewer than two conditions")
    labels = {"condition": condition, **{name: scored[name].tolist() for name in ("item", "paraphrase", "run")}}
    try:
        # Only the components' point values are read (the relative error): no information matrix.
        study = g_study(scored["keyed"].to_numpy(float), labels, SPREAD, intervals=False)
    except UndefinedStatistic:
        return Metric(0.0, 0.0, 0.0, n=used, n_left_out=designed - used, note="every answer the same")
    except ValueError as error:
        return Metric(None, n=used, n_left_out=designed - used, undefined=str(error))
    # The spread across the shipped conditions: the observed condition means' variance net of what
    # run noise, paraphrases and condition x item interactions add to each (the relative error of the
    # condition means), with a non-central chi-square interval (stats.spread.spread_interval).
    noise = decision_study(study).relative_error_variance
    means = scored.assign(condition=condition).groupby("condition")["keyed"].mean().to_numpy(float)
    try:
        spread = spread_interval(means, noise)
    except ValueError as error:
        return Metric(None, n=used, n_left_out=designed - used, undefined=str(error))
    return Metric(
        POINTS_PER_SCORE * spread.value**0.5,
        POINTS_PER_SCORE * spread.ci_low**0.5,
        POINTS_PER_SCORE * spread.ci_high**0.5,
        n=used,
        n_left_out=designed - used,
        note=f"net of run noise; {len(means)} conditions",
    )


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
    return Metric(
        worst.value,
        worst.ci_low,
        worst.ci_high,
        n=worst.n,
        n_left_out=worst.n_left_out,
        note="the larger of the two axes' spreads",
    )


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
