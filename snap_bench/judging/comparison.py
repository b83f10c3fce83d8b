"""Is NEW non-inferior to the BASELINE on every judged metric of every instrument?

Each metric is compared the way its :class:`~snap_bench.analysis.metric_specs.Pairing` says: both models'
observations are lined up on the conditions both were asked, the metric is computed for each on those,
and the interval of the difference comes from a paired method (a bootstrap over the design's random
units, or Newcombe's interval for a rate). A metric that cannot be compared (no margin, no pairing, no
shared condition, undefined on one side) is its own outcome, ``not compared``: it never passes, and the
gate is then incomplete.

One rule across the checks: intersection-union. The gate passes only when *every* check shows
non-inferiority, each with its own 95 % interval (one-sided 2.5 %): the claim "no worse on any metric"
is the intersection of the per-metric claims, so wrongly passing a regressed model is bounded by the
largest per-check error (2.5 %) without splitting alpha (Berger 1982). What the rule does not bound,
failing an unchanged model, is held down by the margins, chosen from the noise of a replayed model and
measured over all checks together by ``python -m bench.gate``.

pandas is imported here, on the controller at session end only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from snap_bench.observations.observation import Observation

if TYPE_CHECKING:
    from snap_bench.analysis.metric_specs import Pairing
    from snap_bench.analysis.metric_tables import AnalysisSettings, FloatArray
    from snap_bench.instruments import Instrument
    from snap_bench.judging.baseline import BaselineSpec

NON_INFERIOR = "non-inferior"
INCONCLUSIVE = "inconclusive"
REGRESSION = "REGRESSION"
NOT_COMPARED = "not compared"


@dataclass(frozen=True)
class Comparison:
    """One check of the gate. ``outcome``: non-inferior, inconclusive (the interval reaches past the
    margin), REGRESSION (it lies wholly past it) or not compared. ``compared``/``designed``: the units
    the comparison rests on out of the baseline's (``unit``: cells, rows, conditions)."""

    model: str
    baseline: str
    instrument: str
    metric: str
    new_value: float | None
    baseline_value: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    margin: float | None
    better: str
    paired: bool
    n: int
    regressed: bool
    message: str
    outcome: str = NON_INFERIOR
    method: str = ""
    compared: int = 0
    designed: int = 0
    unit: str = "conditions"
    reason: str = ""

    @property
    def not_compared(self) -> bool:
        return self.outcome == NOT_COMPARED

    def coverage(self) -> str:
        return f"{self.compared}/{self.designed} {self.unit}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Question:
    """One comparison to make: is ``model`` non-inferior to ``baseline`` on ``metric``?"""

    model: str
    baseline: str
    instrument: str
    metric: str
    margin: float | None
    better: str


@dataclass(frozen=True)
class Result:
    """What a method found: both values, the difference with its interval, and what it rests on."""

    new_value: float
    old_value: float
    difference: tuple[float, float, float]
    method: str
    n: int
    compared: int
    designed: int
    unit: str


class NotCompared(Exception):
    """Why a metric could not be compared; carries the coverage reached so far."""

    def __init__(self, reason: str, compared: int = 0, designed: int = 0, unit: str = "conditions") -> None:
        super().__init__(reason)
        self.reason, self.compared, self.designed, self.unit = reason, compared, designed, unit


def compared_metrics(config: Any) -> list[str]:
    """Every judged metric (thresholds.yaml ``metrics``), then any other metric given a margin."""
    return [*config.metrics, *(name for name in config.non_inferiority if name not in config.metrics)]


def compare_with_baseline(
    observations: list[Observation],
    baseline: BaselineSpec,
    instruments: Mapping[str, Instrument],
    settings: AnalysisSettings,
    thresholds: Any,
) -> list[Comparison]:
    """Every judged metric of every instrument the new model was asked, against the baseline."""
    from snap_bench.analysis.metric_specs import spec_in

    by_model: dict[tuple[str, str], list[Observation]] = {}
    for observation in observations:
        by_model.setdefault((observation.model, observation.instrument), []).append(observation)
    comparisons: list[Comparison] = []
    for (model, instrument), rows in sorted(by_model.items()):
        if model == baseline.model:
            continue
        config = thresholds(instrument)
        kind = instruments[instrument]
        sides = _Sides(kind, rows, by_model.get((baseline.model, instrument), []))
        saved = None if baseline.saved is None else baseline.saved.get(instrument, {})
        new_analysis = None
        for metric in compared_metrics(config):
            threshold = config.metrics.get(metric)
            spec = spec_in(kind.metrics, metric)
            better = threshold.better if threshold is not None else spec.better if spec is not None else "higher"
            by = spec.pairing.by if spec is not None and spec.pairing is not None else None
            for name, level in _named_levels(metric, by, config, sides):
                margin = config.non_inferiority.get(metric)
                question = Question(model, baseline.model, instrument, name, margin, better)
                try:
                    if question.margin is None:
                        raise NotCompared(
                            f"no non-inferiority margin: add {instrument}.non_inferiority.{metric} to thresholds.yaml"
                        )
                    if saved is not None:
                        if new_analysis is None:
                            new_analysis = kind.analyse(model, rows, settings)
                        result = _against_saved(name, new_analysis, saved)
                    elif spec is None or spec.pairing is None:
                        raise NotCompared(
                            f"no paired method: {instrument}'s MetricSpec for {metric} declares no pairing"
                        )
                    else:
                        result = sides.compare(spec.pairing, settings, level)
                    decided = _decide(question, result, config.min_coverage, paired=saved is None)
                except NotCompared as problem:
                    if saved is None and sides.identical:
                        # The same answer to every designed condition: NEW - OLD is 0 whatever the metric,
                        # even one undefined on both or without a paired method (a model's own baseline
                        # file, replayed by `make gate`).
                        comparisons.append(_identical(question, problem, sides.designed))
                    else:
                        comparisons.append(_not_compared(question, problem, paired=saved is None))
                    continue
                comparisons.append(decided)
    return comparisons


def _named_levels(metric: str, by: str | None, config: Any, sides: _Sides) -> list[tuple[str, str | None]]:
    """``[(metric, None)]``, or for a per-level metric (``by``: temperature) one ``(metric[level], level)``
    per judged level: thresholds.yaml's temperatures, else every level the baseline was asked at."""
    if by is None:
        return [(metric, None)]
    if by == "temperature" and config.temperatures is not None:
        from snap_bench.design.temperatures import temperature_level

        levels = [temperature_level(t) for t in config.temperatures]
    else:
        levels = sorted({o.factors.get(by, "") for o in sides.all_old} - {""}, key=_level_key)
    return [(f"{metric}[{level}]", level) for level in levels] or [(metric, None)]


def _level_key(level: str) -> tuple[float, str]:
    try:
        return float(level.removeprefix("t")), level
    except ValueError:
        return math.inf, level


class _Sides:
    """Both models' observations of one instrument, restricted to the conditions both were asked."""

    def __init__(self, instrument: Instrument, new_rows: list[Observation], old_rows: list[Observation]) -> None:
        self.instrument = instrument
        old_ids = {o.condition_id for o in old_rows}
        shared = old_ids & {o.condition_id for o in new_rows}
        self.designed = len(old_ids)
        self.shared = len(shared)
        self.new = [o for o in new_rows if o.condition_id in shared]
        self.old = [o for o in old_rows if o.condition_id in shared]
        self.all_old = old_rows
        answers = {o.condition_id: (o.score, o.keyed_score, o.code) for o in self.old}
        self.identical = (
            bool(old_rows)
            and self.shared == self.designed
            and all(answers[o.condition_id] == (o.score, o.keyed_score, o.code) for o in self.new)
        )
        self._tables: dict[Any, tuple[Any, Any, Any]] = {}

    def tables(self, pairing: Pairing) -> tuple[Any, Any, Any]:
        """(new table, old table, baseline's whole table), made once per table maker."""
        from snap_bench.analysis.metric_tables import pairing_table

        maker = pairing.table() if pairing.table is not None else pairing_table
        if maker not in self._tables:
            # What is designed is what the baseline was asked: a narrowed run covers part of it.
            self._tables[maker] = (
                maker(self.instrument, self.new),
                maker(self.instrument, self.old),
                maker(self.instrument, self.all_old),
            )
        return self._tables[maker]

    def compare(self, pairing: Pairing, settings: AnalysisSettings, level: str | None = None) -> Result:
        if not self.shared:
            raise NotCompared(
                "no condition was asked of both models" if self.designed else "the baseline has no observations here",
                0,
                self.designed,
            )
        new, old, everything = self.tables(pairing)
        if level is not None and pairing.by is not None:
            new, old, everything = (table[table[pairing.by] == level] for table in (new, old, everything))
            if everything.empty:
                raise NotCompared(f"the baseline was not asked at {level}", 0, 0)
        if pairing.method in ("independent", "jackknife"):
            level_sides = _Refitted(self.instrument, pairing, new, old, len(everything), self.identical)
            return level_sides.independent() if pairing.method == "independent" else level_sides.jackknife(settings)
        if pairing.method == "proportion":
            result = _paired_proportion(pairing, new, old, len(everything), settings)
            if self.identical:
                # Every designed condition answered alike (a replay of the baseline's own answers): the rate
                # is the same, as the bootstrap of any other metric finds it (its interval is [0, 0]);
                # Newcombe's interval would still allow for discordant pairs no data hint at.
                return dataclasses.replace(result, difference=(0.0, 0.0, 0.0), method="identical answers")
            return result
        return _paired_bootstrap(pairing, new, old, everything, settings)


def _paired_proportion(pairing: Pairing, new: Any, old: Any, designed: int, settings: AnalysisSettings) -> Result:
    """A rate on the pairs both were asked, by Newcombe's interval of the paired difference."""
    from snap_bench.stats.paired import newcombe_paired_ci

    key = list(pairing.rows)
    joined = (
        new.set_index(key)[pairing.values]
        .to_frame("new")
        .join(old.set_index(key)[pairing.values].to_frame("old"), how="inner")
    )
    # A row without a value on either side (a pair with an unscored answer) is left out of the pairs.
    joined = joined.dropna()
    if joined.empty:
        raise NotCompared("no condition was answered by both models", 0, designed)
    a, b = joined["new"].to_numpy(float) > 0.5, joined["old"].to_numpy(float) > 0.5
    counts = (int((a & b).sum()), int((a & ~b).sum()), int((~a & b).sum()), int((~a & ~b).sum()))
    estimate, low, high = newcombe_paired_ci(*counts, confidence=settings.confidence)
    n = len(joined)
    return Result(
        float(a.mean()), float(b.mean()), (estimate, low, high), pairing.describe(), n, n, designed, "conditions"
    )


def _wide(table: Any, index: list[str], pairing: Pairing) -> Any:
    grouped = table.groupby([*index, pairing.columns], sort=True)[pairing.values]
    return (grouped.mean() if pairing.aggregate == "mean" else grouped.first()).unstack(pairing.columns)


def _paired_bootstrap(pairing: Pairing, new: Any, old: Any, everything: Any, settings: AnalysisSettings) -> Result:
    """The statistic of both models on the rows both have, the difference resampled by cluster."""
    from snap_bench.stats import UndefinedStatistic
    from snap_bench.stats.paired import cluster_bootstrap_ci

    index = list(pairing.rows)
    for extra in (pairing.cluster, pairing.within):
        if extra is not None and extra not in index:
            index.append(extra)
    new_wide, old_wide = _wide(new, index, pairing), _wide(old, index, pairing)
    columns = [column for column in old_wide.columns if column in set(new_wide.columns)]
    unit = f"{pairing.rows[0]}s" if len(pairing.rows) == 1 else "rows"
    designed = int(_wide(everything, index, pairing).shape[0])
    joined = new_wide[columns].add_suffix("_new").join(old_wide[columns].add_suffix("_old"), how="inner")
    matrix = joined.to_numpy(dtype=float)
    if pairing.complete:
        keep = ~np.isnan(matrix).any(axis=1)
        joined, matrix = joined[keep], matrix[keep]
    rows = int(matrix.shape[0])
    k = len(columns)
    if rows == 0 or k == 0:
        raise NotCompared(f"no {unit[:-1]} answered by both models", rows, designed, unit)
    clusters = _codes(joined.index.get_level_values(pairing.cluster)) if pairing.cluster else np.arange(rows)
    groups = _codes(joined.index.get_level_values(pairing.within)) if pairing.within else np.zeros(rows, np.intp)
    statistic = _grouped(pairing.statistic(), groups)

    def difference(data: FloatArray, counts: FloatArray) -> FloatArray:
        result: FloatArray = statistic(data[:, :k], counts) - statistic(data[:, k:], counts)
        return result

    ones = np.ones((1, rows))
    n_clusters = int(clusters.max()) + 1
    try:
        new_value, old_value = float(statistic(matrix[:, :k], ones)[0]), float(statistic(matrix[:, k:], ones)[0])
        if math.isnan(new_value) or math.isnan(old_value):
            side = "the new model" if math.isnan(new_value) else "the baseline"
            raise NotCompared(f"undefined for {side} on the {unit} both answered", rows, designed, unit)
        interval = cluster_bootstrap_ci(
            difference,
            matrix,
            clusters,
            n_resamples=settings.n_resamples,
            confidence=settings.confidence,
            seed=settings.seed,
        )
    except (UndefinedStatistic, ValueError) as error:
        raise NotCompared(f"no interval on the {unit} both answered: {error}", rows, designed, unit) from None
    estimate = new_value - old_value
    return Result(
        new_value,
        old_value,
        (estimate, interval.low, interval.high),
        pairing.describe(),
        n_clusters,
        rows,
        designed,
        unit,
    )


@dataclass(frozen=True)
class _Refitted:
    """Both models' long tables of one level, for a figure refitted on each side rather than computed
    from a matrix: ``compared`` counts the conditions both answered with a score, ``designed`` the
    baseline's conditions at that level."""

    instrument: Instrument
    pairing: Pairing
    new: Any
    old: Any
    designed: int
    identical: bool
    unit: str = "answers"

    @property
    def compared(self) -> int:
        """The conditions both models answered with a score (what both refits rest on)."""
        values = self.pairing.values
        scored = [set(table.loc[table[values].notna(), "condition_id"]) for table in (self.new, self.old)]
        return len(scored[0] & scored[1])

    def not_compared(self, reason: str) -> NotCompared:
        return NotCompared(reason, self.compared, self.designed, self.unit)

    def result(self, new_value: float, old_value: float, difference: tuple[float, float, float], n: int) -> Result:
        method = "identical answers" if self.identical else self.pairing.describe()
        return Result(new_value, old_value, difference, method, n, self.compared, self.designed, self.unit)

    def jackknife(self, settings: AnalysisSettings) -> Result:
        """A refitted figure (a G study's coefficient) of both models on the answers both gave, the paired
        difference's interval from refits with one cluster (item) left out at a time."""
        from snap_bench.stats import UndefinedStatistic
        from snap_bench.stats.paired import jackknife_ci

        key = self.pairing.cluster
        if self.pairing.refit is None or key is None:
            raise TypeError("a jackknife pairing needs refit and cluster")
        refit = self.pairing.refit()
        new_value, new_start = refit(self.instrument, self.new, None)
        if math.isnan(new_value):
            raise self.not_compared("undefined for the new model on the answers both gave")
        if self.identical:
            # Every designed condition answered alike: the difference is 0 without refitting anything.
            return self.result(new_value, new_value, (0.0, 0.0, 0.0), 0)
        old_value, old_start = refit(self.instrument, self.old, None)
        if math.isnan(old_value):
            raise self.not_compared("undefined for the baseline on the answers both gave")
        clusters = sorted(set(self.old[key]) & set(self.new[key]))
        # Each leave-one-out refit starts from its side's full fit: it lies close, so it converges quickly.
        left_out = [
            refit(self.instrument, self.new[self.new[key] != cluster], new_start)[0]
            - refit(self.instrument, self.old[self.old[key] != cluster], old_start)[0]
            for cluster in clusters
        ]
        try:
            interval = jackknife_ci(new_value - old_value, left_out, settings.confidence)
        except (UndefinedStatistic, ValueError) as error:
            raise self.not_compared(f"no interval on the answers both gave: {error}") from None
        return self.result(new_value, old_value, (interval.estimate, interval.low, interval.high), len(clusters))

    def independent(self) -> Result:
        """Each model's figure with its own interval on the answers both gave, combined (MOVER)."""
        from snap_bench.stats.paired import mover_ci

        if self.pairing.estimate is None:
            raise TypeError("an independent pairing needs estimate")
        estimate = self.pairing.estimate()
        first = estimate(self.instrument, self.new)
        if math.isnan(first[0]):
            raise self.not_compared("undefined for the new model on the answers both gave")
        if self.identical:
            return self.result(first[0], first[0], (0.0, 0.0, 0.0), 0)
        second = estimate(self.instrument, self.old)
        if math.isnan(second[0]):
            raise self.not_compared("undefined for the baseline on the answers both gave")
        return self.result(first[0], second[0], mover_ci(first, second), self.compared)


def _codes(labels: Any) -> Any:
    _, codes = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    return codes.astype(np.intp)


def _grouped(batch: Callable[[FloatArray, FloatArray], FloatArray], groups: Any) -> Callable[..., FloatArray]:
    """The statistic within each group of rows, the largest kept (one group: the statistic itself)."""
    masks = [groups == group for group in np.unique(groups)]
    if len(masks) == 1:
        return batch

    def largest(data: FloatArray, counts: FloatArray) -> FloatArray:
        values = np.stack([batch(data[mask], counts[:, mask]) for mask in masks])
        with np.errstate(invalid="ignore"):
            result: FloatArray = np.fmax.reduce(values, axis=0)
        return result

    return largest


def _against_saved(metric: str, analysis: Any, saved: Mapping[str, Any]) -> Result:
    """Against a saved analysis.json (no per-condition results): unpaired and conservative. The interval
    of the difference joins both intervals end to end (new low - old high, new high - old low), wider than
    any paired or independent interval; a saved value without an interval is taken as wide as the new one's."""
    new = analysis.metrics.get(metric)
    old = saved.get("metrics", {}).get(metric, {})
    if new is None or new.value is None or new.ci_low is None or new.ci_high is None:
        raise NotCompared(f"the new model's {metric} has no value with an interval")
    if old.get("value") is None:
        raise NotCompared(f"the saved baseline has no value of {metric}")
    value = float(old["value"])
    half = (new.ci_high - new.ci_low) / 2
    old_low = float(old["ci_low"]) if old.get("ci_low") is not None else value - half
    old_high = float(old["ci_high"]) if old.get("ci_high") is not None else value + half
    method = "unpaired, conservative (saved analysis: intervals joined end to end)"
    if old.get("ci_low") is None:
        method = "unpaired, conservative (saved point value, its interval taken as wide as the new one's)"
    difference = (new.value - value, new.ci_low - old_high, new.ci_high - old_low)
    return Result(new.value, value, difference, method, new.n, new.n, int(old.get("n") or new.n), "units")


def _decide(question: Question, result: Result, min_coverage: float, *, paired: bool) -> Comparison:
    estimate, low, high = result.difference
    margin = question.margin if question.margin is not None else 0.0
    # Non-inferiority must be shown: the whole interval of (new - old) has to stay above -margin
    # (below +margin where lower is better). An interval reaching past the margin fails the gate:
    # "inconclusive" when it also reaches the safe side, "REGRESSION" when it lies wholly past it.
    if question.better == "higher":
        regressed, clearly, bound = low <= -margin, high < -margin, f"lower bound {low:+.3f} vs -{margin:g}"
    else:
        regressed, clearly, bound = high >= margin, low > margin, f"upper bound {high:+.3f} vs +{margin:g}"
    outcome = REGRESSION if clearly else INCONCLUSIVE if regressed else NON_INFERIOR
    if outcome == NON_INFERIOR and result.designed and result.compared / result.designed < min_coverage:
        # As for a verdict: a minority of the design cannot show that nothing got worse (two models
        # complete on 62 of 756 cells agree there, whatever the rest would say). A regression found on
        # that minority still stands.
        share = result.compared / result.designed
        raise NotCompared(
            f"insufficient data: compared on {result.compared} of {result.designed} {result.unit} (coverage "
            f"{share:.0%} < {min_coverage:.0%}); non-inferiority is not shown on a minority of the design",
            result.compared,
            result.designed,
            result.unit,
        )
    reason = ""
    if regressed:
        reason = (
            f"worse than the baseline by more than the margin ({bound})"
            if clearly
            else f"non-inferiority not shown: the interval reaches past the margin ({bound})"
        )
    head = f"{outcome}: {reason}; " if reason else f"{outcome}: "
    message = (
        f"{head}{question.model} vs {question.baseline} {question.instrument} {question.metric}: "
        f"{result.new_value:.3f} vs {result.old_value:.3f}, difference {estimate:+.3f} [{low:+.3f}, {high:+.3f}], "
        f"margin {margin:g}; {result.method}, {result.n} units; coverage {result.compared}/{result.designed} "
        f"{result.unit}"
    )
    return Comparison(
        question.model,
        question.baseline,
        question.instrument,
        question.metric,
        result.new_value,
        result.old_value,
        estimate,
        low,
        high,
        question.margin,
        question.better,
        paired,
        result.n,
        regressed,
        message,
        outcome,
        result.method,
        result.compared,
        result.designed,
        result.unit,
        reason,
    )


def _identical(question: Question, problem: NotCompared, designed: int) -> Comparison:
    message = (
        f"{NON_INFERIOR}: identical answers to all {designed} conditions, so no difference, although it could "
        f"not be compared otherwise ({problem.reason}); {question.model} vs {question.baseline} "
        f"{question.instrument} {question.metric}; coverage {designed}/{designed} conditions"
    )
    return Comparison(
        question.model,
        question.baseline,
        question.instrument,
        question.metric,
        None,
        None,
        0.0,
        0.0,
        0.0,
        question.margin,
        question.better,
        True,
        0,
        False,
        message,
        NON_INFERIOR,
        "identical answers",
        designed,
        designed,
        "conditions",
        problem.reason,
    )


def _not_compared(question: Question, problem: NotCompared, *, paired: bool) -> Comparison:
    message = (
        f"{NOT_COMPARED}: {problem.reason}; {question.model} vs {question.baseline} {question.instrument} "
        f"{question.metric}; coverage {problem.compared}/{problem.designed} {problem.unit}"
    )
    return Comparison(
        question.model,
        question.baseline,
        question.instrument,
        question.metric,
        None,
        None,
        None,
        None,
        None,
        question.margin,
        question.better,
        paired,
        0,
        False,
        message,
        NOT_COMPARED,
        "",
        problem.compared,
        problem.designed,
        problem.unit,
        problem.reason,
    )
