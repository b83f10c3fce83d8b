"""Observations -> per-model metric tables, with bootstrap confidence intervals.

Nothing is dropped silently: every metric says how many units (cells, rows) it used and how many it
left out because an answer in them had no score; a metric that is mathematically undefined on the
data (a model that answers 5 everywhere has no correlations) carries the reason instead of a value.
pandas is imported here, and this module is only imported on the controller at session end.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from snap_bench.observations.observation import Observation
from snap_bench.observations.parsing import AnswerCode
from snap_bench.stats import (
    UndefinedStatistic,
    all_runs_agree_share,
    all_runs_agree_share_batch,
    bootstrap_ci,
    coefficient_of_variation,
    coefficient_of_variation_batch,
    eta_squared,
    icc,
    icc_batch,
    krippendorff_alpha,
    mean_pairwise_r,
    mean_pairwise_r_batch,
)

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class AnalysisSettings:
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 20261122

    def interval(self, batch: Callable[[FloatArray, FloatArray], FloatArray], matrix: FloatArray) -> Any:
        """The bootstrap interval of a vectorised statistic over the rows of ``matrix``, as configured."""
        return bootstrap_ci(
            batch, matrix, n_resamples=self.n_resamples, confidence=self.confidence, seed=self.seed, vectorized=True
        )


@dataclass(frozen=True)
class Metric:
    """One figure of one model, with its interval and the data it rests on."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    n_left_out: int = 0
    undefined: str | None = None
    note: str = ""

    @property
    def coverage(self) -> float | None:
        """The share of the designed units the figure uses, ``n / (n + n_left_out)``; None when the
        metric counts neither (a figure that does not rest on units, such as a spread of accuracies)."""
        designed = self.n + self.n_left_out
        return self.n / designed if designed else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n": self.n,
            "n_left_out": self.n_left_out,
            "coverage": self.coverage,
            "undefined": self.undefined,
            "note": self.note,
        }


@dataclass
class ModelAnalysis:
    model: str
    instrument: str
    n_observations: int
    n_valid: int
    metrics: dict[str, Metric] = field(default_factory=dict)
    effects: dict[str, float] = field(default_factory=dict)
    construct_means: dict[str, float] = field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, float | None]]] = field(default_factory=dict)
    # The share of scored answers among the observations the judged metrics rest on, where that is not
    # all of them (the perturbation judges its baseline, not phase 2's few-shot answers); None: all.
    judged_scored_share: float | None = None
    # Results particular to an instrument (coordinates, per-variant accuracy): JSON-serialisable,
    # written to analysis.json as they are and read by that instrument's report section.
    details: dict[str, Any] = field(default_factory=dict)


class Analyser(Protocol):
    """What analyses one model's observations of an instrument (every Instrument does)."""

    def analyse(self, model: str, observations: Sequence[Observation], settings: AnalysisSettings) -> ModelAnalysis: ...


def analyse(
    observations: Sequence[Observation],
    instruments: Mapping[str, Analyser],
    settings: AnalysisSettings = AnalysisSettings(),
) -> dict[tuple[str, str], ModelAnalysis]:
    """Analyse every (model, instrument) present in ``observations`` with that instrument's own analysis."""
    groups: dict[tuple[str, str], list[Observation]] = {}
    for observation in observations:
        if observation.cache_hit and observation.run > 1:
            # The endpoint replayed an earlier answer from its cache: a repetition that measured nothing,
            # left out of the run-to-run figures (the session says so once, snap_bench.observations.spend).
            continue
        groups.setdefault((observation.model, observation.instrument), []).append(observation)
    return {
        (model, instrument): instruments[instrument].analyse(model, group, settings)
        for (model, instrument), group in sorted(groups.items())
    }


def answer_rates(table: Any, settings: AnalysisSettings) -> dict[str, Metric]:
    """The share of answers refused, invalid, failed at the API, and all three together."""
    metrics: dict[str, Metric] = {}
    for name, code in (
        ("refusal_rate", AnswerCode.REFUSAL),
        ("invalid_rate", AnswerCode.INVALID),
        ("api_error_rate", AnswerCode.API_ERROR),
    ):
        metrics[name] = proportion(int((table["code"] == int(code)).sum()), len(table), settings.confidence)
    metrics["unscored_rate"] = proportion(int((table["code"] != 0).sum()), len(table), settings.confidence)
    return metrics


def retest_metrics(table: Any, settings: AnalysisSettings, *, with_cv: bool) -> dict[str, Metric]:
    """Agreement of the runs of each cell: test-retest r, ICC(2,1), Krippendorff's alpha, TARa, and CV.

    The CV (SD/mean) only means something on a scale with a true zero below every point, like 1..5;
    a signed scale (the compass's -2..+2) passes ``with_cv=False``.
    """
    runs = wide(table, index=["cell"], columns="run", values="keyed")
    raw_runs = wide(table, index=["cell"], columns="run", values="score")
    metrics = {
        "test_retest_r": interval_metric(runs, mean_pairwise_r_value, mean_pairwise_r_batch, settings, min_columns=2),
        "icc2_1": interval_metric(runs, icc21_value, icc21_batch, settings, min_columns=2),
    }
    if with_cv:
        metrics["cv_mean"] = interval_metric(runs, _cv_mean, coefficient_of_variation_batch, settings, min_columns=2)
        metrics["cv_max"] = point_metric(runs, _cv_max, min_columns=2)
    metrics["krippendorff_alpha_runs"] = _krippendorff_runs(runs)
    metrics["tara_all_runs"] = interval_metric(raw_runs, all_runs_agree_share, all_runs_agree_share_batch, settings, 2)
    return metrics


def observation_table(observations: Sequence[Observation], factors: Sequence[str] | None = None) -> Any:
    """One row per observation: cell, item, construct, run, raw and keyed score, code, factor levels.

    ``factors`` defaults to every factor the observations name."""
    import pandas as pd

    if factors is None:
        factors = sorted({factor for o in observations for factor in o.factors})

    return pd.DataFrame(
        {
            "condition_id": [o.condition_id for o in observations],
            "cell": [o.cell for o in observations],
            "item": [o.item for o in observations],
            "construct": [o.construct or o.item for o in observations],
            "run": [o.run for o in observations],
            "score": [np.nan if o.score is None else float(o.score) for o in observations],
            "keyed": [np.nan if o.keyed_score is None else o.keyed_score for o in observations],
            "code": [0 if o.code is None else o.code for o in observations],
            **{factor: [o.factors.get(factor, "") for o in observations] for factor in factors if factor != "item"},
            # Who served each answer, where an endpoint said (the stability designs take it as a facet where
            # it varies, so a second provider's difference is not counted as run noise).
            **({"provider": [o.provider or "" for o in observations]} if any(o.provider for o in observations) else {}),
        }
    )


def pairing_table(instrument: Any, observations: Sequence[Observation]) -> Any:
    """The long table the upgrade gate pairs two models on by default: :func:`observation_table` with
    ``unscored`` (1: the answer has no score) for the rates. ``instrument`` is for the table makers of
    instruments that need it (a pairing's ``table``); this one does not."""
    table = observation_table(observations)
    table["unscored"] = (table["code"] != 0).astype(float)
    return table


def proportion(count: int, total: int, confidence: float) -> Metric:
    """A share with its Wilson score interval (Wilson 1927; Newcombe 1998, method 3)."""
    if total == 0:
        return Metric(None, n=0, undefined="no observations")
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    share = count / total
    denominator = 1 + z * z / total
    centre = (share + z * z / (2 * total)) / denominator
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / denominator
    return Metric(share, max(0.0, centre - half), min(1.0, centre + half), n=total)


def wide(table: Any, index: list[str], columns: str, values: str) -> Any:
    """``values`` spread over ``columns``, one row per combination of ``index`` that occurs.

    An unscored answer stays as NaN (so :func:`complete_rows` can count what it leaves out); design
    combinations that do not exist (a personality item in the dilemma context) are no rows at all.
    """
    return table.groupby([*index, columns], sort=True)[values].first().unstack(columns)


def complete_rows(wide: Any) -> tuple[FloatArray, int]:
    matrix = np.asarray(wide.to_numpy(dtype=float), dtype=float)
    keep = ~np.isnan(matrix).any(axis=1)
    return matrix[keep], int((~keep).sum())


def mean_pairwise_r_value(matrix: FloatArray) -> float:
    return mean_pairwise_r(matrix).value


def icc21_value(matrix: FloatArray) -> float:
    return icc(matrix, "2,1").value


def icc21_batch(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """ICC(2,1) of many row-resamples at once: the statistic of the gate's ``icc2_1`` pairing."""
    return icc_batch(matrix, counts, form="2,1")


def _cv_mean(matrix: FloatArray) -> float:
    return coefficient_of_variation(matrix).mean


def _krippendorff_runs(wide: Any) -> Metric:
    """Ordinal Krippendorff's alpha with cells as units and runs as coders.

    Unlike the other figures it uses incomplete cells too (alpha is defined with missing values), so
    nothing is left out; only cells with fewer than two scored runs carry no information.
    """
    matrix = np.asarray(wide.to_numpy(dtype=float), dtype=float)
    pairable = int((np.sum(~np.isnan(matrix), axis=1) >= 2).sum())
    try:
        return Metric(krippendorff_alpha(matrix, level="ordinal"), n=pairable)
    except UndefinedStatistic as error:
        return Metric(None, n=pairable, undefined=error.reason)
    except ValueError as error:
        return Metric(None, n=pairable, undefined=str(error))


def _cv_max(matrix: FloatArray) -> float:
    return coefficient_of_variation(matrix).max


def point_metric(wide: Any, statistic: Callable[[FloatArray], float], min_columns: int) -> Metric:
    matrix, left_out = complete_rows(wide)
    if matrix.shape[1] < min_columns or matrix.shape[0] < 2:
        return Metric(None, n=int(matrix.shape[0]), n_left_out=left_out, undefined="too few complete rows or columns")
    try:
        return Metric(float(statistic(matrix)), n=int(matrix.shape[0]), n_left_out=left_out)
    except UndefinedStatistic as error:
        return Metric(None, n=int(matrix.shape[0]), n_left_out=left_out, undefined=error.reason)
    except ValueError as error:  # too little data for this statistic (e.g. a correlation on 2 rows)
        return Metric(None, n=int(matrix.shape[0]), n_left_out=left_out, undefined=str(error))


def interval_metric(
    wide: Any,
    statistic: Callable[[FloatArray], float],
    batch: Callable[[FloatArray, FloatArray], FloatArray],
    settings: AnalysisSettings,
    min_columns: int,
) -> Metric:
    point = point_metric(wide, statistic, min_columns)
    if point.value is None:
        return point
    matrix, _ = complete_rows(wide)
    try:
        interval = settings.interval(batch, matrix)
    except UndefinedStatistic as error:
        return Metric(point.value, n=point.n, n_left_out=point.n_left_out, note=f"no interval: {error.reason}")
    return Metric(point.value, interval.low, interval.high, n=point.n, n_left_out=point.n_left_out)


def factor_effects(valid: Any, design: Sequence[str]) -> dict[str, float]:
    """eta^2 of each design factor that varies (sequential sums of squares; parts + residual = 1)."""
    factors = {f: valid[f].astype(str).tolist() for f in design if valid[f].nunique() > 1}
    if len(valid) < 3 or not factors:
        return {}
    try:
        return {name: float(value) for name, value in eta_squared(valid["keyed"].to_numpy(float), factors).items()}
    except UndefinedStatistic:
        return {}
