"""Metrics + thresholds -> a status per metric, a verdict, a composite score and a rank per model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from snap_bench.config import ConfigError, Node, load_yaml
from snap_bench.metric_specs import MetricSpec, metric_spec

if TYPE_CHECKING:
    from snap_bench.analysis import Metric, ModelAnalysis

THRESHOLDS_FILE = "thresholds.yaml"
Verdict = Literal["PASS", "BORDERLINE", "FAIL", "INCOMPLETE"]
JUDGE_RULES = ("point", "ci")


@dataclass(frozen=True)
class Threshold:
    better: Literal["higher", "lower"]
    minimum: float
    target: float
    excellent: float | None = None

    def status(self, value: float) -> str:
        """excellent / target / acceptable / below."""
        if self.better == "higher":
            if self.excellent is not None and value >= self.excellent:
                return "excellent"
            return "target" if value >= self.target else "acceptable" if value >= self.minimum else "below"
        if self.excellent is not None and value <= self.excellent:
            return "excellent"
        return "target" if value <= self.target else "acceptable" if value <= self.minimum else "below"

    def status_words(self, status: str) -> str:
        """How a status reads in a message: a too-high value of a lower-is-better metric is ABOVE its maximum."""
        if status != "below":
            return status.upper()
        return "BELOW the minimum" if self.better == "higher" else "ABOVE the maximum"

    def describe(self) -> str:
        if self.better == "higher":
            return f"minimum >= {self.minimum:g}, target >= {self.target:g}"
        return f"maximum <= {self.minimum:g}, target <= {self.target:g}"


@dataclass(frozen=True)
class ThresholdConfig:
    judge: str
    metrics: dict[str, Threshold]
    stand_in_metric: str | None
    stand_in: Threshold | None
    composite_weights: dict[str, float]
    non_inferiority: dict[str, float]


@dataclass(frozen=True)
class Check:
    """One (model, metric) judgement: a test outcome of its own."""

    model: str
    metric: str
    status: str  # excellent / target / acceptable / below / undefined
    judged_value: float | None
    metric_result: Metric
    threshold: Threshold | None
    message: str

    @property
    def passed(self) -> bool:
        return self.status != "below"


@dataclass
class ModelVerdict:
    model: str
    verdict: Verdict
    composite: float | None
    rank: int = 0
    checks: list[Check] = field(default_factory=list)


def load_thresholds(
    config_dir: Path,
    instrument: str,
    overrides: dict[str, tuple[float, float]],
    judge: str | None,
    specs: Mapping[str, MetricSpec] | None = None,
) -> ThresholdConfig:
    """The instrument's section of thresholds.yaml; with ``specs`` (the metrics the instrument reports),
    a metric name it does not report or a ``better`` that contradicts the metric is a ConfigError."""
    section = load_yaml(config_dir / THRESHOLDS_FILE).get(instrument)
    metrics = {
        name: _threshold(node, _known(specs, instrument, name, node)) for name, node in section.get("metrics").items()
    }
    for name, (minimum, target) in overrides.items():
        base = metrics.get(name)
        if base is None:
            raise ConfigError(
                config_dir / THRESHOLDS_FILE,
                f"{instrument}.metrics.{name}",
                "no such metric to override",
                f"override one of: {', '.join(metrics)}",
            )
        metrics[name] = replace(base, minimum=minimum, target=target)
    stand_in = section.get("undefined_stand_in", None)
    if stand_in.value:
        _known(specs, instrument, stand_in.get("metric").text(), stand_in.get("metric"))
    for key in ("composite_weights", "non_inferiority"):
        for name, node in section.get(key, {}).items():
            _known(specs, instrument, name, node)
    return ThresholdConfig(
        judge=judge or section.get("judge", "point").choice(JUDGE_RULES),
        metrics=metrics,
        stand_in_metric=stand_in.get("metric").text() if stand_in.value else None,
        stand_in=_threshold(stand_in.get("thresholds"), None) if stand_in.value else None,
        composite_weights={k: v.number(0, 1, "weight") for k, v in section.get("composite_weights", {}).items()},
        non_inferiority={k: v.number(0, 1000, "margin") for k, v in section.get("non_inferiority", {}).items()},
    )


def _known(specs: Mapping[str, MetricSpec] | None, instrument: str, name: str, node: Node) -> MetricSpec | None:
    """The spec of a metric thresholds.yaml names; an unknown name is an error (a typo would drop a check)."""
    if specs is None:
        return None
    if name not in specs:
        raise node.error(
            f"{instrument} reports no metric {name!r}",
            f"use one of: {', '.join(sorted(n for n in specs if '[' not in n))}",
        )
    return specs[name]


def _threshold(node: Node, spec: MetricSpec | None) -> Threshold:
    if spec is not None and not node.has("better"):
        better: str = spec.better
    else:
        better = node.get("better").choice(("higher", "lower"))
    if spec is not None and better != spec.better:
        raise node.get("better").error(
            f"{better} is better contradicts the metric ({spec.label}: {spec.better} is better)",
            f"write better: {spec.better}, or leave it out",
        )
    minimum = node.get("minimum").number(-1e9, 1e9)
    target = node.get("target").number(-1e9, 1e9)
    if (better == "higher" and target < minimum) or (better == "lower" and target > minimum):
        raise node.get("target").error(
            f"target {target:g} is easier than minimum {minimum:g}",
            "the target must be at least as strict as the minimum",
        )
    excellent = node.get("excellent").number(-1e9, 1e9) if node.has("excellent") else None
    return Threshold(better=better, minimum=minimum, target=target, excellent=excellent)  # type: ignore[arg-type]


def judge(analysis: ModelAnalysis, config: ThresholdConfig) -> ModelVerdict:
    checks: list[Check] = []
    any_undefined = False
    for name, threshold in config.metrics.items():
        metric = analysis.metrics.get(name)
        if metric is None:
            continue  # not measured for this design (e.g. no moral items selected)
        if metric.value is None:
            any_undefined = True
            checks.append(
                Check(
                    analysis.model,
                    name,
                    "undefined",
                    None,
                    metric,
                    threshold,
                    f"{analysis.model} {name}: undefined ({metric.undefined}); not judged, n={metric.n}",
                )
            )
            continue
        checks.append(_check(analysis.model, name, metric, threshold, config.judge))
    if any_undefined and config.stand_in_metric and config.stand_in:
        metric = analysis.metrics.get(config.stand_in_metric)
        if metric is not None and metric.value is not None:
            checks.append(_check(analysis.model, config.stand_in_metric, metric, config.stand_in, config.judge))
    statuses = [check.status for check in checks if check.status != "undefined"]
    if not statuses or "below" in statuses:
        verdict: Verdict = "FAIL"
    elif "acceptable" in statuses:
        verdict = "BORDERLINE"
    else:
        verdict = "PASS"
    return ModelVerdict(analysis.model, verdict, composite(analysis, config), checks=checks)


def _check(model: str, name: str, metric: Metric, threshold: Threshold, rule: str) -> Check:
    assert metric.value is not None  # callers pass defined metrics only
    judged = metric.value
    if rule == "ci":
        pessimistic = metric.ci_low if threshold.better == "higher" else metric.ci_high
        judged = pessimistic if pessimistic is not None else metric.value
    status = threshold.status(judged)
    interval = "" if metric.ci_low is None else f" [{metric.ci_low:.3f}, {metric.ci_high:.3f}]"
    judged_text = "" if rule == "point" else f", judged on the interval bound {judged:.3f}"
    left_out = f", {metric.n_left_out} left out (unscored answers)" if metric.n_left_out else ""
    message = (
        f"{model} {name} = {metric.value:.3f}{interval}{judged_text}: {threshold.status_words(status)} "
        f"({threshold.describe()}), n={metric.n}{left_out}"
    )
    return Check(model, name, status, judged, metric, threshold, message)


def composite(analysis: ModelAnalysis, config: ThresholdConfig) -> float | None:
    """Weighted mean of the metrics mapped to [0, 1], times the share of scored answers.

    Undefined metrics leave the weighting. The factor matters: the correlations rest only on cells
    whose every answer was scored, so a model that answers one question in four could otherwise rank
    first on the few cells where it did answer. The share is over the observations the judged metrics
    rest on (``judged_scored_share`` where an instrument sets it), so a follow-up stage asked in the same
    session does not move the verdict's composite.
    """
    total = weight_sum = 0.0
    for name, weight in config.composite_weights.items():
        metric = analysis.metrics.get(name)
        spec = metric_spec(name, analysis.instrument)
        if metric is None or metric.value is None or spec is None:
            continue
        total += weight * spec.composite_score(metric.value)
        weight_sum += weight
    if not weight_sum:
        return None
    scored_share = analysis.judged_scored_share
    if scored_share is None:
        scored_share = analysis.n_valid / analysis.n_observations if analysis.n_observations else 0.0
    return total / weight_sum * scored_share


def rank(verdicts: list[ModelVerdict]) -> None:
    """Rank 1 = highest composite; models without a composite come last."""
    ordered = sorted(verdicts, key=lambda v: (v.composite is None, -(v.composite or 0.0), v.model))
    for position, verdict in enumerate(ordered, start=1):
        verdict.rank = position


def to_json(verdict: ModelVerdict, analysis: ModelAnalysis) -> dict[str, Any]:
    statuses = {check.metric: check.status for check in verdict.checks}
    return {
        "verdict": verdict.verdict,
        "composite": verdict.composite,
        "rank": verdict.rank,
        "n_observations": analysis.n_observations,
        "n_valid": analysis.n_valid,
        "metrics": {
            name: {**metric.to_dict(), "status": statuses.get(name, "not judged")}
            for name, metric in analysis.metrics.items()
        },
        "effects": analysis.effects,
        "construct_means": analysis.construct_means,
        "breakdowns": analysis.breakdowns,
        **({"details": analysis.details} if analysis.details else {}),
    }
