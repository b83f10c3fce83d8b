"""What each figure means, in one place: the report's glossary and docs/glossary.md are rendered from the metric specs.

The meaning, unit and good direction of a metric are its :class:`snap_bench.analysis.metric_specs.MetricSpec`
(the shared ones and each registered instrument's own), the same entries the verdicts and the composite
read; the report adds the few figures of its own below. A test (tests/unit/report/test_glossary.py) fails when
docs/glossary.md's glossary is not exactly :func:`glossary_markdown`; ``snap-bench glossary`` prints it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from snap_bench.analysis.metric_specs import SHARED_METRICS, MetricSpec
from snap_bench.report.formatting import text

THRESHOLDS_MEAN = (
    "A judged figure has a minimum (a maximum, when lower is better), a target and sometimes an excellent "
    "level, in `thresholds.yaml`. Short of the minimum the check fails and the model FAILs; between the "
    "minimum and the target the model is BORDERLINE; at or beyond every target it PASSes. A figure computed on "
    "less than half of its design is drawn hatched grey, whatever its value."
)
UNITS = {
    "coefficient": "coefficient (at most 1)",
    "share": "share, 0 to 1",
    "percent": "%",
    "points": "scale points",
}
# The report's own figures, which no instrument computes.
REPORT_TERMS: Mapping[str, MetricSpec] = {
    "composite": MetricSpec(
        "composite",
        unit="share",
        description="weighted mean of the judged figures mapped to 0-1, times the share of scored answers; "
        "ranks the models",
    ),
    "run agreement per temperature": MetricSpec(
        "run agreement",
        unit="share",
        description="the first screen's chart: at each temperature, the share of cells whose runs all gave the "
        "same score, over the cells whose every run was scored, with a Wilson interval",
    ),
    "used / designed": MetricSpec(
        "coverage",
        unit="share",
        description="beside each figure: the cells or answers it was computed from, and how many the design had "
        "(the rest held an answer without a score)",
    ),
}


def glossary_rows(kinds: Mapping[str, Any]) -> list[tuple[str, str, MetricSpec]]:
    """(term, where it applies, spec): the shared metrics, each instrument's own, then the report's terms.

    ``kinds`` maps an instrument's name to its class (anything with ``title`` and ``metrics``); the
    registered instruments, or a session's.
    """
    rows = [(name, "every instrument", spec) for name, spec in SHARED_METRICS.items() if spec.description]
    for _, kind in sorted(kinds.items()):
        rows += [(metric, str(kind.title), spec) for metric, spec in kind.metrics.items() if spec.description]
    rows += [(name, "the report", spec) for name, spec in REPORT_TERMS.items()]
    return rows


def glossary_markdown(kinds: Mapping[str, Any]) -> str:
    """The glossary of docs/glossary.md: a table of the terms, then what the thresholds mean."""
    lines = ["| term | where | meaning | unit | good |", "|---|---|---|---|---|"]
    lines += [
        f"| `{name}` | {where} | {spec.description} | {UNITS[spec.unit]} | {spec.better} |"
        for name, where, spec in glossary_rows(kinds)
    ]
    return "\n".join([*lines, "", f"**Thresholds.** {THRESHOLDS_MEAN}"])


def glossary_html(thresholds: Mapping[str, Mapping[str, Mapping[str, Any]]], kinds: Mapping[str, Any]) -> str:
    """The report's glossary, with each judged metric's thresholds as this session applied them."""
    rows = []
    for name, where, spec in glossary_rows(kinds):
        rules = "; ".join(
            f"{instrument}: {_rule(table[name])}" for instrument, table in sorted(thresholds.items()) if name in table
        )
        rows.append(
            f"<tr><th scope=row><code>{text(name)}</code></th><td>{text(where)}</td><td>{text(spec.description)}</td>"
            f"<td>{text(UNITS[spec.unit])}</td><td>{text(spec.better)}</td><td>{text(rules)}</td></tr>"
        )
    return (
        '<h3 id="snap-glossary">What the figures mean</h3>'
        f'<p>{text(THRESHOLDS_MEAN.replace("`", ""))}</p><table class="snap-table" id="snap-glossary-table">'
        "<thead><tr><th>term</th><th>where</th><th>meaning</th><th>unit</th><th>good</th>"
        f"<th>thresholds in this session</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _rule(threshold: Mapping[str, Any]) -> str:
    sign = ">=" if threshold.get("better") == "higher" else "<="
    parts = [f"minimum {sign} {threshold.get('minimum')}", f"target {sign} {threshold.get('target')}"]
    if threshold.get("excellent") is not None:
        parts.append(f"excellent {sign} {threshold.get('excellent')}")
    return ", ".join(parts)
