"""Metrics + thresholds -> a status per metric, a verdict, a composite score and a rank per model."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from snap_bench.analysis.metric_specs import MetricSpec, spec_in
from snap_bench.design.config import ConfigError, ConfigFiles, Node, load_yaml
from snap_bench.design.temperatures import DEFAULT_LEVEL, temperature_level

if TYPE_CHECKING:
    from snap_bench.analysis.metric_tables import Metric, ModelAnalysis

THRESHOLDS_FILE = "thresholds.yaml"
Verdict = Literal["PASS", "BORDERLINE", "FAIL", "INCOMPLETE"]
JUDGE_RULES = ("point", "ci")
# The status of a check whose metric rests on less than ``min_coverage`` of its designed data.
INSUFFICIENT = "insufficient data"
# Statuses that fail a check (and so the verdict).
FAILING = ("below", INSUFFICIENT)


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
    # The temperatures at which a per-temperature metric (``dependability[t0.5]``) is judged; None: every
    # temperature the analysis reports. A listed temperature without answers is insufficient data.
    temperatures: tuple[float, ...] | None = None
    # A metric is judged only when it uses at least this share of its designed data (n / (n + n_left_out)).
    min_coverage: float = 0.5
    # Against a baseline: the largest move of a construct's mean position (scale points) that is no drift.
    drift_margin: float | None = None
    # The largest excess flip rate between two providers (two reasoning efforts) of one model that still passes
    # (snap_bench.judging.serving_check); None: the instrument sets none, and a serving check is not judged.
    provider_flip_rate: float | None = None
    effort_flip_rate: float | None = None
    # What each of the instrument's metrics is (its own specs; the shared ones are always known).
    specs: Mapping[str, MetricSpec] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """One (model, metric) judgement: a test outcome of its own."""

    model: str
    metric: str
    status: str  # excellent / target / acceptable / below / undefined / insufficient data
    judged_value: float | None
    metric_result: Metric
    threshold: Threshold | None
    message: str

    @property
    def passed(self) -> bool:
        return self.status not in FAILING


@dataclass
class ModelVerdict:
    model: str
    verdict: Verdict
    composite: float | None
    rank: int = 0
    checks: list[Check] = field(default_factory=list)
    # The composite's interval (the weighted mean of the metrics' interval ends: wider than a joint one).
    composite_ci: tuple[float, float] | None = None
    # Models of the same instrument whose composite intervals overlap this one's: their ranks are ties.
    tied_with: list[str] = field(default_factory=list)
    # The metric judged in place of the undefined ones (thresholds.yaml `undefined_stand_in`), when it was.
    stand_in_metric: str | None = None


def load_thresholds(
    config: ConfigFiles,
    instrument: str,
    overrides: dict[str, tuple[float, float]],
    judge: str | None,
    specs: Mapping[str, MetricSpec],
    section: Node | None = None,
) -> ThresholdConfig:
    """The instrument's section of thresholds.yaml, judged by ``specs`` (the metrics the instrument reports, its own
    and the shared: the composite reads each one's direction and scale there): a metric name it does not report
    or a ``better`` that contradicts the metric is a ConfigError. The
    project's thresholds.yaml, when it has one, replaces the packaged one whole. ``section``: the instrument's
    own (a questionnaire file's `thresholds:` over the defaults), instead of its name's section of the file."""
    if section is None:
        section = load_yaml(config.path(THRESHOLDS_FILE)).get(instrument)
    path = section.path
    metrics = {
        name: _threshold(node, _known(specs, instrument, name, node)) for name, node in section.get("metrics").items()
    }
    for name, (minimum, target) in overrides.items():
        base = metrics.get(name)
        if base is None:
            raise ConfigError(
                path,
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
        temperatures=_judged_temperatures(section.get("temperatures", "all")),
        min_coverage=section.get("min_coverage", 0.5).number(0, 1, "share"),
        drift_margin=section.get("drift_margin").number(0, 1000, "margin") if section.has("drift_margin") else None,
        provider_flip_rate=_flip_rate(section, "provider_flip_rate"),
        effort_flip_rate=_flip_rate(section, "effort_flip_rate"),
        specs=dict(specs),
    )


def _flip_rate(section: Node, key: str) -> float | None:
    """A serving factor's flip-rate threshold: a share of conditions, so in [0, 1]."""
    return section.get(key).number(0, 1, "share of conditions") if section.has(key) else None


def flip_rate_threshold(config: ThresholdConfig, factor: str) -> float | None:
    """The threshold of a serving factor's excess flip rate (``provider`` or ``effort``), None where unset."""
    return {"provider": config.provider_flip_rate, "effort": config.effort_flip_rate}.get(factor)


def _judged_temperatures(node: Node) -> tuple[float, ...] | None:
    """``all`` (every temperature of the run, the verdict the worst of them) or a list of temperatures."""
    if node.value == "all":
        return None
    if not isinstance(node.value, list) or not node.value:
        raise node.error(f"{node.value!r} is not a list of temperatures", "write all, or a list such as [0.0, 1.0]")
    return tuple(element.number(0.0, 2.0, "temperature") for element in node.elements())


def _known(specs: Mapping[str, MetricSpec], instrument: str, name: str, node: Node) -> MetricSpec:
    """The spec of a metric thresholds.yaml names; an unknown name is an error (a typo would drop a check)."""
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


def judged_names(name: str, analysis: ModelAnalysis, config: ThresholdConfig) -> list[str]:
    """The metrics a threshold named ``name`` judges: the metric itself, or each member of its
    per-temperature family (``name[t0]``, ``name[t1]``) at the judged temperatures. Temperatures are
    never pooled: each is a check of its own, so the verdict is the worst of them."""
    if name in analysis.metrics:
        return [name]
    members = sorted(
        (key for key in analysis.metrics if key.startswith(f"{name}[") and key.endswith("]")), key=_level_order
    )
    if not members or config.temperatures is None:
        return members
    if members == [f"{name}[{DEFAULT_LEVEL}]"]:
        # A model asked at its provider's default temperature has that one level: judged like any other.
        return members
    return [f"{name}[{temperature_level(t)}]" for t in config.temperatures]


def _level_order(name: str) -> tuple[float, str]:
    """``x[t0]`` before ``x[t0.5]`` before ``x[t1]``: temperatures in increasing order, other levels after."""
    level = name.partition("[")[2].rstrip("]")
    try:
        return float(level.removeprefix("t")), level
    except ValueError:
        return float("inf"), level


def judge(analysis: ModelAnalysis, config: ThresholdConfig) -> ModelVerdict:
    from snap_bench.analysis.metric_tables import Metric

    checks: list[Check] = []
    any_undefined = False
    judged = [
        (member, threshold)
        for name, threshold in config.metrics.items()
        for member in judged_names(name, analysis, config)
    ]
    for name, threshold in judged:
        metric = analysis.metrics.get(name)
        if metric is None:  # a judged temperature that was not asked
            metric = Metric(None, undefined="no answers at this temperature")
            reason = "no answers at this temperature"
        elif metric.coverage is not None and metric.coverage < config.min_coverage:
            designed = metric.n + metric.n_left_out
            reason = (
                f"rests on {metric.n} of {designed} designed (coverage {metric.coverage:.0%} < "
                f"{config.min_coverage:.0%})"
            )
        else:
            reason = ""
        if reason:
            message = f"{analysis.model} {name}: {INSUFFICIENT.upper()}: {reason}; not judged, so not passed"
            checks.append(Check(analysis.model, name, INSUFFICIENT, None, metric, threshold, message))
            continue
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
    stand_in_metric = None
    if any_undefined and config.stand_in_metric and config.stand_in:
        metric = analysis.metrics.get(config.stand_in_metric)
        if metric is not None and metric.value is not None:
            checks.append(_check(analysis.model, config.stand_in_metric, metric, config.stand_in, config.judge))
            stand_in_metric = config.stand_in_metric
    statuses = [check.status for check in checks]
    defined = [status for status in statuses if status != "undefined"]
    if not defined or any(status in FAILING for status in statuses):
        verdict: Verdict = "FAIL"
    elif "acceptable" in statuses or "undefined" in statuses:
        # a judged figure that cannot be computed cannot support a PASS
        verdict = "BORDERLINE"
    else:
        verdict = "PASS"
    score, interval = composite_with_interval(analysis, config)
    return ModelVerdict(
        analysis.model, verdict, score, checks=checks, composite_ci=interval, stand_in_metric=stand_in_metric
    )


def _check(model: str, name: str, metric: Metric, threshold: Threshold, rule: str) -> Check:
    assert metric.value is not None  # callers pass defined metrics only
    judged = metric.value
    if rule == "ci":
        pessimistic = metric.ci_low if threshold.better == "higher" else metric.ci_high
        judged = pessimistic if pessimistic is not None else metric.value
    status = threshold.status(judged)
    high = "no upper bound" if metric.ci_high is None else f"{metric.ci_high:.3f}"
    interval = "" if metric.ci_low is None else f" [{metric.ci_low:.3f}, {high}]"
    judged_text = "" if rule == "point" else f", judged on the interval bound {judged:.3f}"
    left_out = (
        f", {metric.n_left_out} left out (unscored answers; coverage {metric.coverage:.0%})"
        if metric.n_left_out and metric.coverage is not None
        else ""
    )
    message = (
        f"{model} {name} = {metric.value:.3f}{interval}{judged_text}: {threshold.status_words(status)} "
        f"({threshold.describe()}), n={metric.n}{left_out}"
    )
    return Check(model, name, status, judged, metric, threshold, message)


def composite(analysis: ModelAnalysis, config: ThresholdConfig) -> float | None:
    """The composite stability score (see :func:`composite_with_interval`)."""
    return composite_with_interval(analysis, config)[0]


def composite_with_interval(
    analysis: ModelAnalysis, config: ThresholdConfig
) -> tuple[float | None, tuple[float, float] | None]:
    """Weighted mean of the metrics mapped to [0, 1], times the share of scored answers; and its interval.

    A weight named after a per-temperature family (``dependability``) goes to the mean of its judged
    members. Undefined metrics leave the weighting. The factor matters: a model that answers one
    question in four could otherwise rank first on the few cells where it did answer. The share is over
    the observations the judged metrics rest on (``judged_scored_share`` where an instrument sets it),
    so a follow-up stage asked in the same session does not move the verdict's composite. The interval
    maps each metric's interval ends the same way (a metric without one contributes its point), so it
    is at least as wide as a joint interval would be: cheap, and conservative for telling ranks apart.
    """
    point = low = high = weight_sum = 0.0
    for name, weight in config.composite_weights.items():
        spec = spec_in(config.specs, name)
        members = [analysis.metrics.get(member) for member in judged_names(name, analysis, config)]
        defined = [metric for metric in members if metric is not None and metric.value is not None]
        if spec is None or not defined:
            continue
        scores = [_score_interval(spec, metric) for metric in defined]
        point += weight * sum(score[0] for score in scores) / len(scores)
        low += weight * sum(score[1] for score in scores) / len(scores)
        high += weight * sum(score[2] for score in scores) / len(scores)
        weight_sum += weight
    if not weight_sum:
        return None, None
    scored_share = analysis.judged_scored_share
    if scored_share is None:
        scored_share = analysis.n_valid / analysis.n_observations if analysis.n_observations else 0.0
    factor = scored_share / weight_sum
    return point * factor, (low * factor, high * factor)


def _score_interval(spec: MetricSpec, metric: Metric) -> tuple[float, float, float]:
    assert metric.value is not None  # callers pass defined metrics only
    point = spec.composite_score(metric.value)
    ends = [spec.composite_score(end) for end in (metric.ci_low, metric.ci_high) if end is not None]
    return point, min([point, *ends]), max([point, *ends])


def rank(verdicts: list[ModelVerdict]) -> None:
    """Rank 1 = highest composite; models without a composite come last. Models whose composite
    intervals overlap are named as ties of each other (``tied_with``): their order is not shown."""
    ordered = sorted(verdicts, key=lambda v: (v.composite is None, -(v.composite or 0.0), v.model))
    for position, verdict in enumerate(ordered, start=1):
        verdict.rank = position
        verdict.tied_with = [
            other.model
            for other in ordered
            if other is not verdict
            and verdict.composite_ci is not None
            and other.composite_ci is not None
            and other.composite_ci[0] <= verdict.composite_ci[1]
            and verdict.composite_ci[0] <= other.composite_ci[1]
        ]


def to_json(verdict: ModelVerdict, analysis: ModelAnalysis) -> dict[str, Any]:
    statuses = {check.metric: check.status for check in verdict.checks}
    return {
        "verdict": verdict.verdict,
        "composite": verdict.composite,
        "composite_ci": list(verdict.composite_ci) if verdict.composite_ci else None,
        "rank": verdict.rank,
        "tied_with": verdict.tied_with,
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
