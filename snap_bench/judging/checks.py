"""Each check of a session (a threshold or a baseline comparison) as one record with its figures.

The same record feeds the check's JUnit ``<properties>`` (so a CI dashboard can trend a passing value,
not only read a failure message) and the report's table of checks (value, interval, threshold, margin,
decision). It is built where the check is emitted (:mod:`snap_bench.judging.judgement`) and carried on
:class:`snap_bench.judging.judgement.Judgement`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from snap_bench.analysis.coverage import THIN_COVERAGE

# A check's decision: it passed, it failed and the exit status follows it, it failed outside the gate
# (--snap-gate), or the metric is undefined on these data and nothing was judged, or a baseline comparison
# could not be made (not compared: never a pass, the gate is incomplete), or its interval straddles its
# margin (undecided: never a pass, and not a shown failure; the exit status follows it only where gated).
DECISIONS = ("pass", "fail", "ungated", "not judged", "not compared", "undecided")


@dataclass(frozen=True)
class CheckRecord:
    name: str  # the check's test name, e.g. ``qwen2.5-coder-1.5b-compass-icc2_1``
    kind: str  # "threshold", "baseline", "drift", "items" or "serving"
    model: str
    instrument: str
    metric: str
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int
    n_designed: int  # n plus what was left out because an answer in it had no score
    threshold: str  # the rule in words: "minimum >= 0.6, target >= 0.7" or the non-inferiority margin
    margin: float | None  # how far the judged figure is on the good side of the line (negative: short of it)
    decision: str
    message: str
    status: str = ""  # excellent / target / acceptable / below / undefined (a threshold check's status)

    def properties(self) -> list[tuple[str, object]]:
        """JUnit ``<property>`` pairs: every figure, as plain values a dashboard can parse.

        The message itself is the ``threshold`` property the check has always carried; the rule is ``rule``.
        """
        renamed = {"threshold": "rule"}
        return [
            (renamed.get(key, key), "" if value is None else value)
            for key, value in asdict(self).items()
            if key not in ("name", "message")
        ]

    @property
    def coverage(self) -> float | None:
        return self.n / self.n_designed if self.n_designed else None


def threshold_record(name: str, instrument: str, check: Any, gated: bool) -> CheckRecord:
    """A :class:`snap_bench.judging.verdicts.Check` as a record."""
    metric = check.metric_result
    threshold = check.threshold
    margin = None
    if threshold is not None and check.judged_value is not None:
        sign = 1.0 if threshold.better == "higher" else -1.0
        margin = sign * (check.judged_value - threshold.minimum)
    if check.status in ("undefined", "insufficient data", "not judged"):
        decision = "not judged"
    elif check.passed:
        decision = "pass"
    else:
        decision = "fail" if gated else "ungated"
    return CheckRecord(
        name=name,
        kind="threshold",
        model=check.model,
        instrument=instrument,
        metric=check.metric,
        value=metric.value,
        ci_low=metric.ci_low,
        ci_high=metric.ci_high,
        n=metric.n,
        n_designed=metric.n + metric.n_left_out,
        threshold=threshold.describe() if threshold is not None else "",
        margin=margin,
        decision=decision,
        message=check.message,
        status=check.status,
    )


def comparison_record(name: str, comparison: Any, gated: bool) -> CheckRecord:
    """A :class:`snap_bench.judging.comparison.Comparison` (new minus baseline against its margin) as a record."""
    margin = None
    if comparison.ci_low is not None and comparison.ci_high is not None and comparison.margin is not None:
        # Non-inferior when the pessimistic end of the interval stays within the margin.
        worst = comparison.ci_low if comparison.better == "higher" else -comparison.ci_high
        margin = worst + comparison.margin
    not_compared = getattr(comparison, "not_compared", False)
    undecided = getattr(comparison, "undecided", False)
    passed = not comparison.regressed and not undecided
    decision = "not compared" if not_compared else _decision(passed, undecided, gated)
    within = "no margin" if comparison.margin is None else f"within {comparison.margin:g}"
    return CheckRecord(
        name=name,
        kind="baseline",
        model=comparison.model,
        instrument=comparison.instrument,
        metric=comparison.metric,
        value=comparison.difference,
        ci_low=comparison.ci_low,
        ci_high=comparison.ci_high,
        n=getattr(comparison, "compared", comparison.n),
        n_designed=getattr(comparison, "designed", comparison.n),
        threshold=f"non-inferior to {comparison.baseline} {within}",
        margin=margin,
        decision=decision,
        message=comparison.message,
        status="not compared"
        if not_compared
        else "regressed"
        if comparison.regressed
        else "undecided"
        if undecided
        else "non-inferior",
    )


def drift_record(drift: Any, gated: bool) -> CheckRecord:
    """A :class:`snap_bench.judging.drift.Drift` (the new model's mean position minus the baseline's) as a record."""
    margin = None
    if drift.ci_low is not None and drift.ci_high is not None and drift.margin is not None:
        # Equivalent when both ends stay within the margin: how far the farther end is inside it.
        margin = drift.margin - max(abs(drift.ci_low), abs(drift.ci_high))
    return CheckRecord(
        name=drift.name,
        kind="drift",
        model=drift.model,
        instrument=drift.instrument,
        metric=f"drift[{drift.construct}]",
        value=drift.difference,
        ci_low=drift.ci_low,
        ci_high=drift.ci_high,
        n=drift.n_conditions,
        n_designed=drift.n_conditions,
        threshold="no margin" if drift.margin is None else f"within +-{drift.margin:g} of {drift.baseline}",
        margin=margin,
        decision=_decision(not drift.moved and not drift.undecided, drift.undecided, gated),
        message=drift.message,
        status=drift.outcome,
    )


def _decision(passed: bool, undecided: bool, gated: bool) -> str:
    """A computed check's decision: passed, else outside the gate (ungated), else undecided or failed."""
    if passed:
        return "pass"
    if not gated:
        return "ungated"
    return "undecided" if undecided else "fail"


def item_record(change: Any, gated: bool) -> CheckRecord:
    """A :class:`snap_bench.judging.item_changes.ItemChange` (an item's mean shift against the baseline's, its
    false-discovery-adjusted q) as a record."""
    decision = "not compared" if change.q is None else "pass" if not change.reliable else "fail" if gated else "ungated"
    return CheckRecord(
        name=change.name,
        kind="items",
        model=change.model,
        instrument=change.instrument,
        metric=f"item[{change.item}]",
        value=change.shift,
        ci_low=None,
        ci_high=None,
        n=change.conditions,
        n_designed=change.conditions,
        threshold=f"no change beyond the run noise of {change.baseline} (q > {change.rate:g})",
        margin=None if change.q is None else change.q - change.rate,
        decision=decision,
        message=change.message,
        status=change.outcome,
    )


def serving_record(check: Any, gated: bool) -> CheckRecord:
    """A :class:`snap_bench.judging.serving_check.ServingCheck` (two servings' excess flip rate against the
    instrument's threshold) as a record; its model is the base model, its metric names the pair."""
    flips = check.flips
    outcome = check.outcome
    decision = outcome if outcome in ("pass", "not judged") else _decision(False, outcome == "undecided", gated)
    rule = "no threshold" if check.threshold is None else f"95% interval <= {check.threshold:g}"
    return CheckRecord(
        name=check.name,
        kind="serving",
        model=check.base,
        instrument=check.instrument,
        metric=check.name.removeprefix(f"{check.base}-{check.instrument}-"),  # the pair, and the level held
        value=flips.judged,
        ci_low=flips.ci_low,
        ci_high=flips.ci_high,
        n=flips.matched,
        n_designed=flips.asked,
        threshold=f"{check.factor} {check.level_a} vs {check.level_b}: {rule}",
        margin=check.margin,
        decision=decision,
        message=check.message,
        status=outcome,
    )


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def checks_table(records: Sequence[CheckRecord]) -> str:
    """The checks as an HTML table, failures first; every text escaped."""
    if not records:
        return "<p>No checks were judged in this session.</p>"
    order = {"fail": 0, "undecided": 1, "ungated": 2, "not compared": 3, "not judged": 4, "pass": 5}
    rows = []
    for record in sorted(records, key=lambda r: (order.get(r.decision, 9), r.model, r.instrument, r.metric)):
        bounds = (record.ci_low, record.ci_high)
        interval = "" if None in bounds else f"[{record.ci_low:.3f}, {record.ci_high:.3f}]"
        coverage = f"{record.n:,} / {record.n_designed:,}"
        thin = record.coverage is not None and record.coverage < THIN_COVERAGE
        margin = "—" if record.margin is None else f"{record.margin:+.3f}"
        rows.append(
            f'<tr class="snap-check-{record.decision.replace(" ", "-")}" id="snap-check-{html.escape(record.name)}">'
            f"<td>{html.escape(record.model)}</td><td>{html.escape(record.instrument)}</td>"
            f"<td>{html.escape(record.metric)}</td><td class=snap-num>{_figure(record.value)}</td>"
            f"<td class=snap-num>{interval}</td>"
            f'<td class="snap-num{" snap-thin" if thin else ""}">{coverage}</td>'
            f"<td>{html.escape(record.threshold)}</td><td class=snap-num>{margin}</td>"
            f"<td><b>{html.escape(record.decision)}</b></td></tr>"
        )
    return (
        '<table class="snap-table" id="snap-checks"><caption>Every check of the session: the figure judged, its 95% '
        "interval, what it rests on (used / designed), the rule, the margin (how far on the good side of the minimum "
        "or of the non-inferiority margin; negative: short of it) and the decision</caption><thead><tr>"
        "<th>model</th><th>instrument</th><th>metric</th><th>value</th><th>interval</th><th>used / designed</th>"
        f"<th>threshold</th><th>margin</th><th>decision</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
