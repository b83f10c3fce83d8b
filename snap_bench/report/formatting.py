"""How a figure reads in the report: escaping, number formats, and a metric's status against its thresholds.

Every string that reaches the page from a document or an observation passes through :func:`text`:
model output and config values are untrusted, and pytest-html inserts extras with ``insertAdjacentHTML``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

from snap_bench.analysis.metric_specs import MetricCatalogue
from snap_bench.judging.verdicts import Threshold
from snap_bench.observations.parsing import ANSWER_CODE_LABELS

ThresholdTable = Mapping[str, Mapping[str, Any]]

# Statuses as analysis.json writes them, best first; the CSS classes of the cells are derived from them.
STATUSES = ("excellent", "target", "acceptable", "below", "insufficient data", "undefined", "not judged")
STATUS_MEANING = {
    "excellent": "at or beyond the excellent threshold",
    "target": "meets the target",
    "acceptable": "at least the minimum, short of the target (BORDERLINE)",
    "below": "short of the minimum: the model FAILs",
    "insufficient data": "rests on less than the required share of its designed answers: not judged, the model FAILs",
    "undefined": "cannot be computed on these data (reason shown); not judged",
    "not judged": "reported, no threshold applies",
}
# After the thresholded metrics (in thresholds.yaml order), the rest in this order, then alphabetically.
METRIC_ORDER = (
    "test_retest_r",
    "inter_paraphrase_r",
    "icc2_1",
    "tara_all_runs",
    "unscored_rate",
    "refusal_rate",
    "invalid_rate",
    "api_error_rate",
)
ANSWER_CODES = {int(code): label for code, label in ANSWER_CODE_LABELS.items()}


def text(value: object) -> str:
    """Escape anything for HTML text and attribute values (quotes included)."""
    return html.escape(str(value), quote=True)


def metric_label(name: str, catalogue: MetricCatalogue) -> str:
    """The metric's label from its spec; a family member ``name[level]`` fills the family label's {level}."""
    spec = catalogue.spec(name)
    if spec is not None:
        return spec.label
    family, _, level = name.partition("[")
    spec = catalogue.spec(family) if level.endswith("]") else None
    if spec is None:
        return name
    if "{level}" in spec.label:
        return spec.label.format(level=level[:-1])
    return f"{spec.label} {level[:-1]}"


def ordered_metrics(names: set[str] | list[str], thresholds: ThresholdTable) -> list[str]:
    present = set(names)
    first = [name for name in thresholds if name in present]
    rest = [name for name in METRIC_ORDER if name in present and name not in first]
    return first + rest + sorted(present - set(first) - set(rest))


def number(value: object) -> float | None:
    """A finite float, or None for null, NaN and anything that is not a number (a hand-edited document)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    result = float(value)
    return result if math.isfinite(result) else None


def format_value(name: str, value: object, catalogue: MetricCatalogue, digits: int = 3) -> str:
    figure = number(value)
    if figure is None:
        return "—"
    spec = catalogue.spec(name.partition("[")[0])
    unit = spec.unit if spec is not None else "share" if name.endswith("_rate") else "coefficient"
    if unit == "share" and (spec is None or spec.better == "lower"):
        # a rate: one decimal whatever the digits, so that a 0.2 % refusal rate does not read as 0 %
        return f"{figure:.1%}"
    if unit == "percent":
        return f"{figure:.1f} %"
    return f"{figure:.{digits}f}"


def format_interval(name: str, low: object, high: object, catalogue: MetricCatalogue, digits: int = 3) -> str:
    if number(low) is None or number(high) is None:
        return ""
    return f"[{format_value(name, low, catalogue, digits)}, {format_value(name, high, catalogue, digits)}]"


def threshold_of(name: str, thresholds: ThresholdTable) -> Threshold | None:
    """The config's entry as the verdicts' Threshold, so the report judges exactly as the gate does."""
    # a per-temperature figure (dependability[t0]) is judged against its family's thresholds
    entry = thresholds.get(name) or thresholds.get(name.partition("[")[0])
    if entry is None:
        return None
    better = entry.get("better")
    minimum, target = number(entry.get("minimum")), number(entry.get("target"))
    if better not in ("higher", "lower") or minimum is None or target is None:
        return None
    return Threshold(better=better, minimum=minimum, target=target, excellent=number(entry.get("excellent")))


def describe_threshold(name: str, thresholds: ThresholdTable, catalogue: MetricCatalogue) -> str:
    threshold = threshold_of(name, thresholds)
    if threshold is None:
        return ""
    sign = "≥" if threshold.better == "higher" else "≤"
    parts = [
        f"min {sign} {format_value(name, threshold.minimum, catalogue, 2)}",
        f"target {sign} {format_value(name, threshold.target, catalogue, 2)}",
    ]
    if threshold.excellent is not None:
        parts.append(f"excellent {sign} {format_value(name, threshold.excellent, catalogue, 2)}")
    return ", ".join(parts)


def metric_status(name: str, metric: Mapping[str, Any], thresholds: ThresholdTable) -> str:
    """The document's status when the gate judged the metric; otherwise judged here on the point value.

    The gate's status wins because it may judge the interval bound (``--snap-judge=ci``); a baseline
    model's metrics carry no status, so they are coloured against the same thresholds here.
    """
    value = number(metric.get("value"))
    if value is None:
        return "undefined"
    status = metric.get("status")
    if status in STATUSES:
        return str(status)
    threshold = threshold_of(name, thresholds)
    return threshold.status(value) if threshold is not None else "not judged"


def value_status(name: str, value: object, thresholds: ThresholdTable) -> str:
    """The status of a bare point value (a breakdown cell): judged when the metric has thresholds."""
    figure = number(value)
    if figure is None:
        return "undefined"
    threshold = threshold_of(name, thresholds)
    return threshold.status(figure) if threshold is not None else "not judged"


def status_class(status: str) -> str:
    return "snap-status-" + status.replace(" ", "-")
