"""The report's tables: verdicts, metrics coloured against their thresholds, breakdowns, the baseline gate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from snap_bench.analysis.coverage import Coverage
from snap_bench.analysis.metric_specs import MetricCatalogue
from snap_bench.report.formatting import (
    STATUS_MEANING,
    STATUSES,
    ThresholdTable,
    describe_threshold,
    format_interval,
    format_value,
    metric_label,
    metric_status,
    number,
    ordered_metrics,
    status_class,
    text,
    value_status,
)
from snap_bench.report.thin_figures import THIN_CLASS, cell_class, coverage_text, is_thin

# Metrics of the across-model matrix: the judged and headline figures. Per-construct alphas and the
# like are in each model's own table, where there is room for them.
MATRIX_EXCLUDES = ("cronbach_alpha[",)
BREAKDOWN_COLUMNS = ("test_retest_r", "icc2_1", "mean_score", "unscored_rate")
FACTOR_TITLES = {"system_prompt": "system prompt", "temperature": "temperature", "context": "context"}


def mapping(value: object) -> Mapping[str, Any]:
    """A sub-object of the document, or an empty one: a partial document still renders."""
    return value if isinstance(value, Mapping) else {}


def verdict_badge(entry: Mapping[str, Any]) -> str:
    """PASS green, BORDERLINE amber, FAIL red; a baseline or an unanalysed model is grey."""
    verdict = entry.get("verdict")
    if verdict in ("PASS", "BORDERLINE", "FAIL", "INCOMPLETE"):
        return f'<span class="snap-badge snap-badge-{str(verdict).lower()}">{text(verdict)}</span>'
    label = "BASELINE" if entry.get("role") == "baseline" else "NOT JUDGED"
    return f'<span class="snap-badge snap-badge-none">{label}</span>'


def legend_html() -> str:
    items = "".join(
        f'<li><span class="snap-swatch {status_class(status)}">{text(status)}</span> '
        f"{text(STATUS_MEANING[status])}</li>"
        for status in STATUSES
    )
    thin = f'<span class="snap-swatch {THIN_CLASS}">47 / 540</span>'
    items += f"<li>{thin} used / designed under one half: no status colour, whatever the value</li>"
    return f'<ul class="snap-legend">{items}</ul>'


def verdicts_table(
    models: Sequence[tuple[str, Mapping[str, Any]]], thresholds: ThresholdTable, catalogue: MetricCatalogue
) -> str:
    rows = []
    for name, entry in models:
        n_observations = number(entry.get("n_observations"))
        n_valid = number(entry.get("n_valid"))
        valid = f"{n_valid / n_observations:.1%}" if n_observations and n_valid is not None else "—"
        metrics = mapping(entry.get("metrics"))
        short_of = [
            f"{metric_label(metric, catalogue)} ({metric_status(metric, mapping(metrics[metric]), thresholds)})"
            for metric in ordered_metrics(list(metrics), thresholds)
            if metric_status(metric, mapping(metrics[metric]), thresholds) in ("below", "acceptable")
        ]
        rank = entry.get("rank")
        coverage = mapping(entry.get("coverage"))
        if entry.get("verdict") == "INCOMPLETE" and coverage:
            short_of = [f"not judged: {Coverage.from_json(name, coverage).describe()}"]
        rows.append(
            "<tr>"
            f"<td>{text(rank) if rank is not None else '—'}</td>"
            f'<th scope="row">{text(name)}</th>'
            f"<td>{verdict_badge(entry)}</td>"
            f'<td class="snap-num">{format_value("composite", entry.get("composite"), catalogue)}</td>'
            f'<td class="snap-num">{text(entry.get("n_observations", "—"))}</td>'
            f'<td class="snap-num">{valid}</td>'
            f"<td>{text(', '.join(short_of)) or 'every judged metric meets its target'}</td>"
            "</tr>"
        )
    return (
        '<table class="snap-table snap-verdicts"><thead><tr><th>rank</th><th>model</th><th>verdict</th>'
        "<th>composite</th><th>conditions</th><th>valid</th><th>short of the target</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def metric_cell(
    name: str, metric: Mapping[str, Any], thresholds: ThresholdTable, catalogue: MetricCatalogue, digits: int = 2
) -> str:
    status = metric_status(name, metric, thresholds)
    if status == "undefined":
        reason = metric.get("undefined") or "no value"
        return (
            f'<td class="{status_class(status)}" title="{text(reason)}">undefined<br><small>{text(reason)}</small></td>'
        )
    interval = format_interval(name, metric.get("ci_low"), metric.get("ci_high"), catalogue, digits)
    tooltip = f"{status}; n={metric.get('n', '?')}, left out {metric.get('n_left_out', 0)}"
    if is_thin(metric):
        tooltip += "; rests on under half of its design: not a clear result"
    return (
        f'<td class="snap-num {cell_class(status_class(status), metric)}" title="{text(tooltip)}">'
        f"{format_value(name, metric.get('value'), catalogue, digits)}<br><small>{text(interval)}</small>"
        f"<br><small>{text(coverage_text(metric))}</small></td>"
    )


def metric_matrix(
    models: Sequence[tuple[str, Mapping[str, Any]]], thresholds: ThresholdTable, catalogue: MetricCatalogue
) -> str:
    """Metrics as rows, models as columns: the across-model comparison at one glance."""
    names: set[str] = set()
    for _, entry in models:
        names.update(n for n in mapping(entry.get("metrics")) if not n.startswith(MATRIX_EXCLUDES))
    header = "".join(f'<th scope="col">{text(name)}</th>' for name, _ in models)
    rows = []
    for metric in ordered_metrics(names, thresholds):
        cells = "".join(
            metric_cell(metric, mapping(mapping(entry.get("metrics")).get(metric)), thresholds, catalogue)
            if metric in mapping(entry.get("metrics"))
            else "<td>—</td>"
            for _, entry in models
        )
        rows.append(
            f'<tr><th scope="row">{text(metric_label(metric, catalogue))}<br><small>{text(metric)}</small></th>'
            f"<td><small>{text(describe_threshold(metric, thresholds, catalogue))}</small></td>{cells}</tr>"
        )
    return (
        '<table class="snap-table snap-metrics"><thead><tr><th>metric</th><th>thresholds</th>'
        f"{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def model_metric_table(entry: Mapping[str, Any], thresholds: ThresholdTable, catalogue: MetricCatalogue) -> str:
    """Every metric of one model with its interval, the data it rests on and why it is undefined."""
    metrics = mapping(entry.get("metrics"))
    rows = []
    for name in ordered_metrics(list(metrics), thresholds):
        metric = mapping(metrics[name])
        status = metric_status(name, metric, thresholds)
        reason = metric.get("undefined") or ""
        note = "; ".join(str(part) for part in (reason, metric.get("note")) if part)
        value = format_value(name, metric.get("value"), catalogue)
        interval = format_interval(name, metric.get("ci_low"), metric.get("ci_high"), catalogue)
        rows.append(
            f'<tr><th scope="row">{text(metric_label(name, catalogue))}<br><small>{text(name)}</small></th>'
            f'<td class="snap-num {cell_class(status_class(status), metric)}">{value}'
            f"<br><small>{text(coverage_text(metric))}</small></td>"
            f'<td class="snap-num">{text(interval)}</td>'
            f'<td class="snap-num">{text(metric.get("n", "—"))}</td>'
            f'<td class="snap-num">{text(metric.get("n_left_out", "—"))}</td>'
            f'<td class="{status_class(status)}">{text(status)}</td>'
            f"<td><small>{text(describe_threshold(name, thresholds, catalogue))}</small></td>"
            f"<td>{text(note)}</td></tr>"
        )
    return (
        '<table class="snap-table"><thead><tr><th>metric</th><th>value</th><th>95% interval</th><th>n</th>'
        "<th>left out</th><th>status</th><th>thresholds</th><th>reason / note</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def breakdown_tables(entry: Mapping[str, Any], thresholds: ThresholdTable, catalogue: MetricCatalogue) -> str:
    """Point values within each level of a factor (no intervals), coloured as the whole-model figures are."""
    tables = []
    for factor, levels in mapping(entry.get("breakdowns")).items():
        header = "".join(f"<th>{text(metric_label(column, catalogue))}</th>" for column in BREAKDOWN_COLUMNS)
        rows = []
        for level, figures in mapping(levels).items():
            values = mapping(figures)
            cells = "".join(
                f'<td class="snap-num {status_class(value_status(column, values.get(column), thresholds))}">'
                f"{format_value(column, values.get(column), catalogue)}</td>"
                for column in BREAKDOWN_COLUMNS
            )
            rows.append(f'<tr><th scope="row">{text(level)}</th>{cells}</tr>')
        title = FACTOR_TITLES.get(str(factor), str(factor))
        tables.append(
            f'<table class="snap-table snap-breakdown"><caption>per {text(title)}</caption>'
            f"<thead><tr><th>{text(title)}</th>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    if not tables:
        return "<p>No breakdowns in the analysis.</p>"
    return f'<div class="snap-row">{"".join(tables)}</div>'


def construct_means_table(entry: Mapping[str, Any], catalogue: MetricCatalogue) -> str:
    means = mapping(entry.get("construct_means"))
    if not means:
        return ""
    cells = "".join(
        f'<tr><th scope="row">{text(construct)}</th>'
        f'<td class="snap-num">{format_value("mean_score", value, catalogue, 2)}</td></tr>'
        for construct, value in means.items()
    )
    return (
        '<table class="snap-table snap-breakdown"><caption>mean keyed score per construct</caption>'
        f"<thead><tr><th>construct</th><th>mean</th></tr></thead><tbody>{cells}</tbody></table>"
    )


# The gate's decisions: red for a regression shown, amber for one undecided, grey for one not compared (never a
# pass), green otherwise. "inconclusive" is how documents written before undecided had its name said it.
DECISION_STATUS = {
    "REGRESSION": "below",
    "undecided": "acceptable",
    "inconclusive": "below",
    "not compared": "undefined",
}
DECISION_WORDS = {"inconclusive": "not shown non-inferior", "undecided": "undecided (never a pass)"}
DECISION_ORDER = {"REGRESSION": 0, "undecided": 1, "inconclusive": 1, "not compared": 2}


def baseline_table(comparisons: Sequence[Mapping[str, Any]], catalogue: MetricCatalogue) -> str:
    """Per instrument and metric: the decision with its reason first, old, new, the difference with its
    interval, the margin, the coverage (compared / designed) and the method; failed checks first."""
    rows = []

    def order(comparison: Mapping[str, Any]) -> tuple[str, int]:
        return str(comparison.get("instrument", "")), DECISION_ORDER.get(_outcome(comparison), 3)

    for comparison in sorted(comparisons, key=order):
        metric = str(comparison.get("metric", ""))
        outcome = _outcome(comparison)
        difference = format_value(metric, comparison.get("difference"), catalogue)
        interval = format_interval(metric, comparison.get("ci_low"), comparison.get("ci_high"), catalogue)
        reason = str(comparison.get("reason") or "")
        decision = DECISION_WORDS.get(outcome, outcome)
        coverage = f"{comparison.get('compared', '—')}/{comparison.get('designed', '—')} {comparison.get('unit', '')}"
        rows.append(
            "<tr>"
            f'<td class="{status_class(DECISION_STATUS.get(outcome, "target"))}"><b>{text(decision)}</b>'
            + (f"<br>{text(reason)}" if reason else "")
            + f"<br><small>{text(comparison.get('message', ''))}</small></td>"
            f"<td>{text(comparison.get('instrument', ''))}</td>"
            f'<th scope="row">{text(metric_label(metric, catalogue))}</th>'
            f"<td>{text(comparison.get('model', ''))} vs {text(comparison.get('baseline', ''))}</td>"
            f'<td class="snap-num">{format_value(metric, comparison.get("baseline_value"), catalogue)}</td>'
            f'<td class="snap-num">{format_value(metric, comparison.get("new_value"), catalogue)}</td>'
            f'<td class="snap-num">{text(difference)} <small>{text(interval)}</small></td>'
            f'<td class="snap-num">{format_value(metric, comparison.get("margin"), catalogue)}</td>'
            f'<td class="snap-num">{text(coverage)}</td>'
            f"<td>{text(comparison.get('method') or ('paired' if comparison.get('paired') else 'unpaired'))}"
            f"<br><small>n = {text(comparison.get('n', '—'))}</small></td>"
            "</tr>"
        )
    return (
        '<table class="snap-table snap-baseline"><thead><tr><th>decision</th><th>instrument</th><th>metric</th>'
        "<th>models</th><th>baseline</th><th>new</th><th>difference [95% interval]</th><th>margin</th>"
        f"<th>coverage</th><th>method</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _outcome(comparison: Mapping[str, Any]) -> str:
    """The decision; a document written before outcomes were recorded has only ``regressed``."""
    outcome = comparison.get("outcome")
    if isinstance(outcome, str):
        return outcome
    return "inconclusive" if comparison.get("regressed") else "non-inferior"
