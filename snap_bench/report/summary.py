"""The summary section of the HTML report: what a researcher reads first, built from analysis.json.

:func:`summary_html` returns one HTML fragment for pytest-html's ``pytest_html_results_summary``
hook: the verdicts, the metrics against their thresholds, the charts, the breakdowns and the data
as downloads. Everything from the document and the observations is escaped; the charts are
matplotlib's SVG, inlined.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

import snap_bench.report.charts as charts
import snap_bench.report.tables as tables
from snap_bench.analysis.coverage import incomplete_models
from snap_bench.analysis.metric_specs import MetricCatalogue, MetricSpec
from snap_bench.judging.checks import CheckRecord, checks_table
from snap_bench.observations.observation import Observation
from snap_bench.report.analysis_document import Titled
from snap_bench.report.conditions import conditions_section
from snap_bench.report.context import ReportContext
from snap_bench.report.downloads import CSV_COMPRESS_OVER, analysis_download, csv_download
from snap_bench.report.figures import figure_html as _figure
from snap_bench.report.first_screen import ExitLine, first_screen
from snap_bench.report.formatting import ThresholdTable, metric_label, number, text
from snap_bench.report.glossary import glossary_html
from snap_bench.report.palette import register_models
from snap_bench.report.servings_section import servings_section
from snap_bench.report.tables import mapping
from snap_bench.report.trend_section import StoredTrend, trend_section

logger = logging.getLogger(__name__)

# The report's style sheet, scoped to its classes; it also styles the row extras of rows.py.
STYLE = """<style>
.snap-report{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;font-size:13px;color:#1f2328;
margin:1em 0}
.snap-report h2{font-size:20px;margin:.4em 0}
.snap-report h3{font-size:16px;margin:1.2em 0 .4em;border-bottom:1px solid #d0d7de}
.snap-report h4{font-size:14px;margin:.9em 0 .3em}
.snap-report p,.snap-report li{color:#1f2328}
.snap-report a{color:#0969da}
.snap-facts{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:.4em 0}
.snap-facts dt{font-weight:600}.snap-facts dd{margin:0}
.snap-table{border-collapse:collapse;margin:.4em 0 1em}
.snap-table th,.snap-table td{border:1px solid #d0d7de;padding:3px 8px;vertical-align:top;text-align:left}
.snap-table thead th{background:#f6f8fa}
.snap-table caption{text-align:left;font-weight:600;padding:2px 0}
.snap-table small{color:inherit;opacity:.8}
.snap-verdicts th[scope=row]{white-space:nowrap}
.snap-num{text-align:right!important;font-variant-numeric:tabular-nums;white-space:nowrap}
.snap-status-excellent{background:#1a7f37;color:#fff}
.snap-status-target{background:#b4e6c2}
.snap-status-acceptable{background:#ffe08a}
.snap-status-below{background:#ffb4b0}
.snap-status-insufficient-data{background:#ffb4b0;font-style:italic}
.snap-status-undefined{background:#e8e8e8;color:#555;font-style:italic}
.snap-badge{display:inline-block;padding:2px 9px;border-radius:10px;font-weight:700;font-size:12px;color:#fff;
letter-spacing:.03em}
.snap-badge-pass{background:#1a7f37}.snap-badge-borderline{background:#bf8700}.snap-badge-fail{background:#cf222e}
.snap-badge-none{background:#6e7781}.snap-badge-incomplete{background:#8250df}
.snap-legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px}
.snap-swatch{padding:1px 6px;border:1px solid #d0d7de}
.snap-row{display:flex;flex-wrap:wrap;gap:0 16px;align-items:flex-start}
.snap-chart{margin:.4em 16px .8em 0;display:inline-block;vertical-align:top}
.snap-chart svg{max-width:100%;height:auto;display:block;overflow:visible}
.snap-chart figcaption{font-size:12px;color:#57606a;max-width:640px}
.snap-chart-missing{color:#cf222e}
.snap-observation{color:#1f2328;font-size:12px}
.snap-observation p{margin:2px 0 4px}
.snap-observation pre{margin:2px 0 6px;padding:4px 6px;background:#f6f8fa;border:1px solid #d0d7de;white-space:pre-wrap}
details.snap-model{border:1px solid #d0d7de;border-radius:6px;padding:.3em .8em;margin:.6em 0}
details.snap-model>summary{cursor:pointer;font-weight:600;font-size:15px;padding:.2em 0}
</style>"""


class Sectioned(Titled, Protocol):
    """What the report asks of an instrument: its title, what its metrics are, and its own section."""

    @property
    def metrics(self) -> Mapping[str, MetricSpec]: ...

    def report_section(self, context: ReportContext) -> str: ...


def summary_html(
    document: Mapping[str, Any],
    observations: Sequence[Observation],
    thresholds: Mapping[str, ThresholdTable],
    instruments: Mapping[str, Sectioned],
    *,
    csv_compress_over: int = CSV_COMPRESS_OVER,
    checks: Sequence[CheckRecord] = (),
    trend: StoredTrend | None = None,
    changed: Collection[tuple[str, str, str]] | None = None,
    exit_line: ExitLine | None = None,
) -> str:
    """The report's summary section as an HTML fragment.

    ``document`` is analysis.json as a dict, ``observations`` what observations.jsonl holds,
    ``thresholds`` each instrument's ``metrics`` of thresholds.yaml (metric -> better, minimum, target,
    excellent) and ``instruments`` the session's instruments, which draw their own parts. The
    observation CSV is embedded xz-compressed when larger than ``csv_compress_over`` bytes. ``checks`` are
    the session's judged checks with their figures (the first screen's reasons and the table of checks).
    ``trend`` is what the results store holds for the report's models (None: no history section). ``exit_line``
    is what the exit status said and why, the first screen's first line.
    """
    session = mapping(document.get("session"))
    entries = [(str(name), mapping(entry)) for name, entry in mapping(document.get("instruments")).items()]
    comparisons = [mapping(c) for c in document.get("baseline") or [] if isinstance(c, Mapping)]
    register_models([str(model) for _, entry in entries for model in mapping(entry.get("models"))])
    catalogue = MetricCatalogue({name: instrument.metrics for name, instrument in instruments.items()})
    sections = [
        STYLE,
        first_screen(document, observations, checks, catalogue, exit_line),
        '<h2 id="snap-summary">snap-bench: how consistently the models answer</h2>',
        _run_facts(session, entries, observations),
    ]
    if checks:
        sections += ['<h3 id="snap-checks-title">Checks</h3>', checks_table(checks)]
    if not entries:
        sections.append("<p>No instrument was analysed in this run.</p>")
    for name, entry in entries:
        own = [o for o in observations if o.instrument == name]
        sections.append(
            _instrument_section(
                name,
                entry,
                own,
                thresholds.get(name, {}),
                [c for c in comparisons if c.get("instrument") == name],
                instruments.get(name),
                catalogue,
            )
        )
    if comparisons:
        sections += ['<h3 id="snap-baseline">Comparison with the baseline</h3>', _baseline(comparisons, catalogue)]
    sections.append(servings_section(document))
    changed_items = changed_items_table(document)
    if changed_items:
        sections += ['<h3 id="snap-changed-items">Items changed beyond the run noise</h3>', changed_items]
    if trend is not None:
        sections.append(trend_section(trend, report_models(entries), catalogue))
    conditions, conditions_script = conditions_section(observations, changed)
    sections += [conditions, _prompts(observations), glossary_html(thresholds, instruments)]
    sections += [
        '<h3 id="snap-downloads">Downloads</h3><ul>',
        f"<li>{csv_download(observations, csv_compress_over).link()}</li>",
        f"<li>{analysis_download(document).link()}</li>",
        "</ul>",
    ]
    # The conditions' data and script sit after the section: nothing inside it is a script.
    return f'<section class="snap-report" id="snap-report">{"".join(sections)}</section>{conditions_script}'


def changed_items_table(document: Mapping[str, Any]) -> str:
    """The items whose answers moved beyond the run-to-run noise (analysis.json ``changes.items``, reliable:
    q at most the false discovery rate), smallest q first; '' where none did."""
    rows = [mapping(c) for c in mapping(document.get("changes")).get("items") or [] if isinstance(c, Mapping)]
    reliable = sorted(
        (c for c in rows if c.get("reliable")), key=lambda c: (float(c.get("q") or 0.0), str(c.get("item")))
    )
    if not reliable:
        return ""
    body = "".join(
        f"<tr><td>{text(c.get('model', ''))} vs {text(c.get('baseline', ''))}</td><td>{text(c.get('instrument', ''))}"
        f'</td><th scope="row">{text(c.get("item", ""))}</th><td class="snap-num">{float(c.get("shift") or 0.0):+.2f}'
        f'</td><td class="snap-num">{float(c.get("q") or 0.0):.4f}</td><td class="snap-num">'
        f"{text(c.get('changed_conditions', ''))} / {text(c.get('conditions', ''))}</td></tr>"
        for c in reliable
    )
    return (
        '<table class="snap-table" id="snap-changed-items-table"><caption>Each item whose answers moved beyond the '
        "run-to-run noise (exact within-cell permutation test, false discovery rate 5 %): its mean shift in keyed "
        "points, its q, and the conditions answered differently. With --snap-gate=...,items each fails the run."
        "</caption><thead><tr><th>models</th><th>instrument</th><th>item</th><th>shift</th><th>q</th>"
        f"<th>changed / asked</th></tr></thead><tbody>{body}</tbody></table>"
    )


# Factors whose levels change the prompt's wording but not the item (listed once in "What was asked").
PROMPT_FACTORS = ("context", "choice")


def _prompts(observations: Sequence[Observation]) -> str:
    """Each system prompt once, and one full question per context or choice: the texts a row's id names.

    The rows of valid answers show only the item's text, so the rest of every prompt is here.
    """
    systems: dict[tuple[str, str], str] = {}
    examples: dict[tuple[str, tuple[tuple[str, str], ...]], Observation] = {}
    for observation in observations:
        level = observation.factors.get("system_prompt", "")
        if observation.messages and observation.messages[0].get("role") == "system":
            systems.setdefault((observation.instrument, level), str(observation.messages[0].get("content", "")))
        key = tuple((f, observation.factors[f]) for f in PROMPT_FACTORS if f in observation.factors)
        examples.setdefault((observation.instrument, key), observation)
    if not systems and not examples:
        return ""
    parts = [
        '<details class="snap-model" id="snap-prompts"><summary>What was asked: the prompts a row\'s id names'
        "</summary>",
    ]
    if systems:
        rows = "".join(
            f"<tr><td>{text(instrument)}</td><td>{text(level)}</td><td><pre>{text(content)}</pre></td></tr>"
            for (instrument, level), content in sorted(systems.items())
        )
        parts.append(
            '<table class="snap-table"><caption>System prompts</caption><thead><tr><th>instrument</th>'
            f"<th>level</th><th>system message</th></tr></thead><tbody>{rows}</tbody></table>"
        )
    rows = "".join(
        f"<tr><td>{text(instrument)}</td><td>{text(', '.join(f'{f} {v}' for f, v in key) or 'all')}</td>"
        f"<td>{text(example.condition_id)}</td><td><pre>{text(example.messages[-1].get('content', ''))}</pre></td></tr>"
        for (instrument, key), example in sorted(examples.items(), key=lambda entry: entry[0])
        if example.messages
    )
    parts.append(
        '<table class="snap-table"><caption>The question, one example per context or choice (the item text '
        "varies)</caption><thead><tr><th>instrument</th><th>levels</th><th>example condition</th>"
        f"<th>user message</th></tr></thead><tbody>{rows}</tbody></table></details>"
    )
    return "".join(parts)


def _instrument_section(
    name: str,
    entry: Mapping[str, Any],
    observations: Sequence[Observation],
    thresholds: ThresholdTable,
    comparisons: Sequence[Mapping[str, Any]],
    instrument: Sectioned | None,
    catalogue: MetricCatalogue,
) -> str:
    """One instrument: the shared verdict and metric tables, then what the instrument draws itself."""
    models = _ranked(entry)
    known = {o.model for o in observations}
    models += [(model, {}) for model in sorted(known - {model for model, _ in models})]
    title = str(entry.get("title") or (instrument.title if instrument is not None else name))
    parts = [
        f'<h3 id="snap-instrument-{text(name)}">{text(title[:1].upper() + title[1:])}</h3>',
        tables.verdicts_table(models, thresholds, catalogue),
        f'<h4 id="snap-metrics-{text(name)}">Metrics against their thresholds</h4>',
        "<p>Each cell: the estimate and its 95% interval, coloured by its status. Hover for n.</p>",
        tables.legend_html(),
        tables.metric_matrix(models, thresholds, catalogue),
    ]
    if instrument is not None:
        context = ReportContext(dict(models), observations, thresholds, comparisons, catalogue)
        try:
            parts.append(instrument.report_section(context))
        except Exception as error:  # the report is written at session end: one bad section must not lose the rest
            logger.warning("snap-bench report: %s section not drawn: %s", name, error)
            parts.append(f'<p class="snap-chart-missing">The {text(name)} section was not drawn: {text(error)}</p>')
    return "".join(parts)


def _ranked(entry: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """An instrument's judged models by rank, then the others (baselines) by name."""
    return sorted(
        ((str(model), mapping(values)) for model, values in mapping(entry.get("models")).items()),
        key=lambda item: (number(item[1].get("rank")) is None, number(item[1].get("rank")) or 0.0, item[0]),
    )


def report_models(entries: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Every model an instrument of the report analysed, in the order of the first instrument's ranking."""
    names: list[str] = []
    for _, entry in entries:
        names += [name for name, _ in _ranked(entry) if name not in names]
    return names


def _run_facts(
    session: Mapping[str, Any],
    entries: Sequence[tuple[str, Mapping[str, Any]]],
    observations: Sequence[Observation],
) -> str:
    names = report_models(entries)
    names += sorted({o.model for o in observations} - set(names))
    instruments = ", ".join(
        f"{name} (item bank {digest})" for name, digest in mapping(session.get("instruments")).items()
    )
    facts = [
        ("models", ", ".join(names) or "none"),
        ("instruments", instruments or "unknown"),
        ("record mode", session.get("record_mode", "unknown")),
        ("finished", session.get("finished", "unknown")),
        ("observations", f"{len(observations):,}"),
        ("bootstrap", f"{session.get('resamples', '?')} resamples, seed {session.get('seed', '?')}"),
        ("judged on", session.get("judge", "thresholds.yaml")),
    ]
    if session.get("baseline"):
        facts.append(("baseline", session["baseline"]))
    partial = incomplete_models(mapping(session.get("coverage")))
    if partial:
        facts.append(("INCOMPLETE (checks not judged)", "; ".join(f"{c.model}: {c.describe()}" for c in partial)))
    for model, spent in sorted(mapping(session.get("spend")).items()):
        facts.append((f"spent on {model}", f"${spent.get('cost_usd', 0):.6f} on {spent.get('requests', 0)} request(s)"))
    facts += [("notice", str(line)) for line in session.get("notices") or []]
    missing = session.get("missing_reports") or []
    if missing:
        facts.append(("conditions without a report", f"{len(missing)} (listed in analysis.json)"))
    rows = "".join(f"<dt>{text(label)}</dt><dd>{text(value)}</dd>" for label, value in facts)
    return f'<dl class="snap-facts">{rows}</dl>'


def _baseline(comparisons: Sequence[Mapping[str, Any]], catalogue: MetricCatalogue) -> str:
    rows = []
    for comparison in comparisons:
        difference = number(comparison.get("difference"))
        margin = number(comparison.get("margin"))
        if difference is None or margin is None:
            continue
        better = comparison.get("better") if comparison.get("better") in ("higher", "lower") else "higher"
        metric = metric_label(str(comparison.get("metric", "")), catalogue)
        label = f"{metric}: {comparison.get('model', '')} vs {comparison.get('baseline', '')}"
        rows.append(
            charts.BaselineRow(
                label,
                difference,
                number(comparison.get("ci_low")),
                number(comparison.get("ci_high")),
                margin,
                str(better),
                bool(comparison.get("regressed")),
            )
        )
    chart = (
        _figure(
            lambda: charts.baseline_chart("snap-baseline-chart", rows),
            "New minus baseline per metric with its 95% interval. Non-inferior (green) only when the whole "
            "interval lies on the shaded side of the dashed margin.",
        )
        if rows
        else "<p>No comparison has a difference to draw.</p>"
    )
    return chart + tables.baseline_table(comparisons, catalogue)
