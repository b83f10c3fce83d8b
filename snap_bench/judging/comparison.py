"""The upgrade gate's decision rule: is NEW non-inferior to the BASELINE on every judged metric of every
instrument? Each difference and its interval come from :mod:`snap_bench.judging.pairing_methods`."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from snap_bench.judging.deciding import runs_to_decide
from snap_bench.judging.outcomes import NON_INFERIOR, NOT_COMPARED, REGRESSION, UNDECIDED
from snap_bench.judging.pairing_methods import NotCompared, Result, Sides, against_saved
from snap_bench.observations.observation import Observation

if TYPE_CHECKING:
    from snap_bench.analysis.metric_tables import AnalysisSettings
    from snap_bench.judging.baseline import BaselineSpec
    from snap_bench.judging.pairing_methods import Compared
    from snap_bench.judging.verdicts import ThresholdConfig


@dataclass(frozen=True)
class Comparison:
    """One check of the gate. ``outcome``: non-inferior (the interval lies wholly on the safe side of the
    margin), undecided (it straddles the margin), REGRESSION (it lies wholly past it) or not compared.
    ``compared``/``designed``: the units the comparison rests on out of the baseline's (``unit``: cells, rows,
    conditions). ``regressed``: a regression was shown; ``runs_to_decide``: for an undecided check, the runs
    that would decide it at the observed noise and difference (None where no number of runs would: the
    difference lies past the margin, or the interval resamples items and more items would)."""

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
    runs_to_decide: int | None = None
    # What more of would decide an undecided check: "runs", "items", or "" where more of neither would.
    decided_by: str = ""

    @property
    def not_compared(self) -> bool:
        return self.outcome == NOT_COMPARED

    @property
    def undecided(self) -> bool:
        """Non-inferiority was neither shown nor refuted: never a pass, and not a shown regression."""
        return self.outcome == UNDECIDED

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


def compared_metrics(config: ThresholdConfig) -> list[str]:
    """Every judged metric (thresholds.yaml ``metrics``), then any other metric given a margin."""
    return [*config.metrics, *(name for name in config.non_inferiority if name not in config.metrics)]


def compare_with_baseline(
    observations: list[Observation],
    baseline: BaselineSpec,
    instruments: Mapping[str, Compared],
    settings: AnalysisSettings,
    thresholds: Callable[[str], ThresholdConfig],
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
        sides = Sides(kind, rows, by_model.get((baseline.model, instrument), []))
        saved = None if baseline.saved is None else baseline.saved.get(instrument, {})
        new_analysis = None
        # The runs each cell was asked: what an undecided check's advice counts from.
        runs = len({o.run for o in rows})
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
                        result = against_saved(name, new_analysis, saved)
                    elif spec is None or spec.pairing is None:
                        raise NotCompared(
                            f"no paired method: {instrument}'s MetricSpec for {metric} declares no pairing"
                        )
                    else:
                        result = sides.compare(spec.pairing, settings, level)
                    decided = _decide(question, result, config.min_coverage, paired=saved is None, runs=runs)
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


def _named_levels(metric: str, by: str | None, config: ThresholdConfig, sides: Sides) -> list[tuple[str, str | None]]:
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


def _decide(question: Question, result: Result, min_coverage: float, *, paired: bool, runs: int = 1) -> Comparison:
    estimate, low, high = result.difference
    margin = question.margin if question.margin is not None else 0.0
    # Non-inferiority must be shown: the whole interval of (new - old) has to stay above -margin
    # (below +margin where lower is better). An interval reaching past the margin never passes: it is
    # "undecided" when it also reaches the safe side (the design could not tell; more runs would), a
    # "REGRESSION" when it lies wholly past it (a loss shown).
    if question.better == "higher":
        reaches, clearly, bound = low <= -margin, high < -margin, f"lower bound {low:+.3f} vs -{margin:g}"
    else:
        reaches, clearly, bound = high >= margin, low > margin, f"upper bound {high:+.3f} vs +{margin:g}"
    outcome = REGRESSION if clearly else UNDECIDED if reaches else NON_INFERIOR
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
    needed, decided_by = None, ""
    if clearly:
        reason = f"worse than the baseline by more than the margin ({bound})"
    elif reaches:
        unit = "runs" if result.noise == "runs" else "items"
        deciding = runs_to_decide(
            estimate, low, high, margin, runs=runs if unit == "runs" else result.n, better=question.better, unit=unit
        )
        # Only a count of runs is something a run can be asked for (--snap-runs); items are named in the words.
        needed = deciding.runs if unit == "runs" else None
        decided_by = unit if deciding.runs is not None else ""
        reason = f"the interval straddles the margin ({bound}); {deciding.advice}"
    head = f"{outcome}: {reason}; " if reason else f"{outcome}: "
    message = (
        f"{head}{question.model} vs {question.baseline} {question.instrument} {question.metric}: "
        f"{result.new_value:.3f} vs {result.old_value:.3f}, difference {estimate:+.3f} [{low:+.3f}, {high:+.3f}], "
        f"margin {margin:g}; {result.method}, {result.n} units; coverage {result.compared}/{result.designed} "
        f"{result.unit}"
    )
    return Comparison(
        **_asked(question),
        new_value=result.new_value,
        baseline_value=result.old_value,
        difference=estimate,
        ci_low=low,
        ci_high=high,
        paired=paired,
        n=result.n,
        regressed=clearly,
        message=message,
        outcome=outcome,
        method=result.method,
        compared=result.compared,
        designed=result.designed,
        unit=result.unit,
        reason=reason,
        runs_to_decide=needed,
        decided_by=decided_by,
    )


def _asked(question: Question) -> dict[str, Any]:
    """The fields of a comparison that restate its question: which models, which figure, its margin."""
    return {
        "model": question.model,
        "baseline": question.baseline,
        "instrument": question.instrument,
        "metric": question.metric,
        "margin": question.margin,
        "better": question.better,
    }


def _identical(question: Question, problem: NotCompared, designed: int) -> Comparison:
    message = (
        f"{NON_INFERIOR}: identical answers to all {designed} conditions, so no difference, although it could "
        f"not be compared otherwise ({problem.reason}); {question.model} vs {question.baseline} "
        f"{question.instrument} {question.metric}; coverage {designed}/{designed} conditions"
    )
    return Comparison(
        **_asked(question),
        new_value=None,
        baseline_value=None,
        difference=0.0,
        ci_low=0.0,
        ci_high=0.0,
        paired=True,
        n=0,
        regressed=False,
        message=message,
        outcome=NON_INFERIOR,
        method="identical answers",
        compared=designed,
        designed=designed,
        unit="conditions",
        reason=problem.reason,
    )


def _not_compared(question: Question, problem: NotCompared, *, paired: bool) -> Comparison:
    message = (
        f"{NOT_COMPARED}: {problem.reason}; {question.model} vs {question.baseline} {question.instrument} "
        f"{question.metric}; coverage {problem.compared}/{problem.designed} {problem.unit}"
    )
    return Comparison(
        **_asked(question),
        new_value=None,
        baseline_value=None,
        difference=None,
        ci_low=None,
        ci_high=None,
        paired=paired,
        n=0,
        regressed=False,
        message=message,
        outcome=NOT_COMPARED,
        method="",
        compared=problem.compared,
        designed=problem.designed,
        unit=problem.unit,
        reason=problem.reason,
    )
