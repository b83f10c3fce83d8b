"""The summary section of the HTML report: what a researcher reads first, built from analysis.json.

:func:`summary_html` returns one HTML fragment for pytest-html's ``pytest_html_results_summary``
hook: the verdicts, the metrics against their thresholds, the charts, the breakdowns and the data
as downloads. Everything from the document and the observations is escaped; the charts are
matplotlib's SVG, inlined.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from snap_bench.observation import Observation
from snap_bench.report import charts, tables
from snap_bench.report.aggregates import by_model, level_means, score_counts
from snap_bench.report.checks import CheckRecord, checks_table
from snap_bench.report.conditions import conditions_section
from snap_bench.report.coverage import is_thin
from snap_bench.report.downloads import CSV_GZIP_OVER, analysis_download, csv_download
from snap_bench.report.figures import figure_html as _figure
from snap_bench.report.first_screen import first_screen
from snap_bench.report.formatting import ThresholdTable, metric_label, number, text
from snap_bench.report.glossary import glossary_html
from snap_bench.report.palette import register_models
from snap_bench.report.tables import mapping

logger = logging.getLogger(__name__)

# The stability metrics of the radar, each mapped to [0, 1] where 1 is perfectly stable.
RADAR_METRICS = (
    "test_retest_r",
    "inter_paraphrase_r",
    "icc2_1",
    "cronbach_alpha_moral",
    "cronbach_alpha_personality",
    "cv_mean",
)
EFFECT_ORDER = ("item", "paraphrase", "system_prompt", "temperature", "context")
HEATMAP_FACTORS = (("system_prompt", "per system prompt"), ("temperature", "per temperature"))
# With more models than this, each model's section starts folded so the page opens on the overview.
OPEN_MODEL_SECTIONS = 3

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
.snap-status-undefined{background:#e8e8e8;color:#555;font-style:italic}
.snap-badge{display:inline-block;padding:2px 9px;border-radius:10px;font-weight:700;font-size:12px;color:#fff;
letter-spacing:.03em}
.snap-badge-pass{background:#1a7f37}.snap-badge-borderline{background:#bf8700}.snap-badge-fail{background:#cf222e}
.snap-badge-none{background:#6e7781}
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


# instrument -> "module:function" drawing its own part of the report from its analysis entries;
# signature (models: Mapping[str, Mapping[str, Any]], observations: Sequence[Observation]) -> str.
# The profile ("snap") is drawn by this module; an instrument without an entry gets the generic
# verdicts and metric tables only.
INSTRUMENT_SECTIONS: dict[str, str] = {
    "compass": "snap_bench.report.compass:compass_section",
    "perturbation": "snap_bench.report.perturbation:perturbation_section",
}
INSTRUMENT_TITLES = {
    "snap": "psychometric profile",
    "compass": "political compass",
    "perturbation": "prompt perturbation (sentiment robustness)",
}


def summary_html(
    document: Mapping[str, Any],
    observations: Sequence[Observation],
    thresholds: ThresholdTable,
    *,
    instrument_thresholds: Mapping[str, ThresholdTable] | None = None,
    csv_gzip_over: int = CSV_GZIP_OVER,
    checks: Sequence[CheckRecord] = (),
) -> str:
    """The report's summary section as an HTML fragment.

    ``document`` is analysis.json as a dict, ``observations`` what observations.jsonl holds, and
    ``thresholds`` the profile's ``metrics`` of thresholds.yaml (metric -> better, minimum, target,
    excellent); ``instrument_thresholds`` the same for the other instruments, by name. The
    observation CSV is embedded gzip-compressed when larger than ``csv_gzip_over`` bytes. ``checks`` are
    the session's judged checks with their figures (the first screen's reasons and the table of checks).
    """
    session = mapping(document.get("session"))
    profile_observations = [o for o in observations if o.instrument == "snap"]
    grouped = by_model(profile_observations)
    models = _models(document, grouped)
    others = [(str(name), mapping(entry)) for name, entry in mapping(document.get("instruments")).items()]
    comparisons = [mapping(c) for c in document.get("baseline") or [] if isinstance(c, Mapping)]
    register_models([name for name, _ in models] + [str(m) for _, e in others for m in mapping(e.get("models"))])
    sections = [
        STYLE,
        first_screen(document, observations, checks),
        '<h2 id="snap-summary">snap-bench: how consistently the models answer</h2>',
        _run_facts(session, models, others, observations),
    ]
    if checks:
        sections += ['<h3 id="snap-checks-title">Checks</h3>', checks_table(checks)]
    if models or not others:  # an empty run shows the profile's empty state
        sections += _profile_sections(models, grouped, thresholds, comparisons, bool(others))
    for name, entry in others:
        own = [o for o in observations if o.instrument == name]
        sections.append(_instrument_section(name, entry, own, (instrument_thresholds or {}).get(name, {})))
    conditions, conditions_script = conditions_section(observations)
    sections += [conditions, _prompts(observations)]
    sections.append(glossary_html(thresholds))
    sections += [
        '<h3 id="snap-downloads">Downloads</h3><ul>',
        f"<li>{csv_download(observations, csv_gzip_over).link()}</li>",
        f"<li>{analysis_download(document).link()}</li>",
        "</ul>",
    ]
    # The conditions' data and script sit after the section: nothing inside it is a script.
    return f'<section class="snap-report" id="snap-report">{"".join(sections)}</section>{conditions_script}'


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


def _profile_sections(
    models: Sequence[tuple[str, Mapping[str, Any]]],
    grouped: Mapping[str, list[Observation]],
    thresholds: ThresholdTable,
    comparisons: Sequence[Mapping[str, Any]],
    titled: bool,
) -> list[str]:
    sections = ['<h3 id="snap-instrument-snap">Psychometric profile</h3>'] if titled else []
    sections += [
        tables.verdicts_table(models, thresholds),
        _contents(models, bool(comparisons)),
        '<h3 id="snap-metrics">Metrics against their thresholds</h3>',
        "<p>Each cell: the estimate and its 95% bootstrap interval, coloured by its status. Hover for n.</p>",
        tables.legend_html(),
        tables.metric_matrix(models, thresholds),
        '<h3 id="snap-charts">Stability and sources of variance</h3>',
        '<div class="snap-row">',
        _radar(models, thresholds),
        _effects(models),
        "</div>",
    ]
    if comparisons:
        sections += ['<h3 id="snap-baseline">Comparison with the baseline</h3>', _baseline(comparisons)]
    sections.append('<h3 id="snap-models">Per model</h3>')
    for index, (name, entry) in enumerate(models, start=1):
        sections.append(_model_section(index, name, entry, grouped.get(name, []), thresholds, len(models)))
    return sections


def _instrument_section(
    name: str, entry: Mapping[str, Any], observations: Sequence[Observation], thresholds: ThresholdTable
) -> str:
    """Another instrument: the shared verdict and metric tables, then what its own module draws."""
    models = sorted(
        ((str(model), mapping(values)) for model, values in mapping(entry.get("models")).items()),
        key=lambda item: (number(item[1].get("rank")) is None, number(item[1].get("rank")) or 0.0, item[0]),
    )
    title = INSTRUMENT_TITLES.get(name, name)
    parts = [
        f'<h3 id="snap-instrument-{text(name)}">{text(title[:1].upper() + title[1:])}</h3>',
        tables.verdicts_table(models, thresholds),
        tables.legend_html(),
        tables.metric_matrix(models, thresholds),
    ]
    target = INSTRUMENT_SECTIONS.get(name)
    if target is not None:
        module_name, _, function = target.partition(":")
        try:
            draw = getattr(importlib.import_module(module_name), function)
            parts.append(draw(dict(models), observations))
        except Exception as error:  # the report is written at session end: one bad section must not lose the rest
            logger.warning("snap-bench report: %s section not drawn: %s", name, error)
            parts.append(f'<p class="snap-chart-missing">The {text(name)} section was not drawn: {text(error)}</p>')
    return "".join(parts)


def _models(
    document: Mapping[str, Any], grouped: Mapping[str, list[Observation]]
) -> list[tuple[str, Mapping[str, Any]]]:
    """Judged models by rank, then baselines; models with observations but no analysis come last."""
    entries = [(str(name), mapping(entry)) for name, entry in mapping(document.get("models")).items()]

    def order(item: tuple[str, Mapping[str, Any]]) -> tuple[bool, float, str]:
        rank = number(item[1].get("rank"))
        return (rank is None, rank if rank is not None else 0.0, item[0])

    entries.sort(key=order)
    known = {name for name, _ in entries}
    return entries + [(name, {}) for name in sorted(grouped) if name not in known]


def _run_facts(
    session: Mapping[str, Any],
    models: Sequence[tuple[str, Mapping[str, Any]]],
    others: Sequence[tuple[str, Mapping[str, Any]]],
    observations: Sequence[Observation],
) -> str:
    names = [name for name, _ in models]
    for _, entry in others:
        names += [str(name) for name in mapping(entry.get("models")) if name not in names]
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
    missing = session.get("missing_reports") or []
    if missing:
        facts.append(("conditions without a report", f"{len(missing)} (listed in analysis.json)"))
    rows = "".join(f"<dt>{text(label)}</dt><dd>{text(value)}</dd>" for label, value in facts)
    return f'<dl class="snap-facts">{rows}</dl>'


def _contents(models: Sequence[tuple[str, Mapping[str, Any]]], with_baseline: bool) -> str:
    links = [("snap-metrics", "metrics"), ("snap-charts", "charts")]
    if with_baseline:
        links.append(("snap-baseline", "baseline"))
    links += [(f"snap-model-{index}", name) for index, (name, _) in enumerate(models, start=1)]
    links.append(("snap-downloads", "downloads"))
    return "<p>Jump to: " + " · ".join(f'<a href="#{anchor}">{text(label)}</a>' for anchor, label in links) + "</p>"


def _radar(models: Sequence[tuple[str, Mapping[str, Any]]], thresholds: ThresholdTable) -> str:
    present = [m for m in RADAR_METRICS if any(m in mapping(entry.get("metrics")) for _, entry in models)]
    if not present:
        return "<p>No stability metrics to draw.</p>"

    def on_unit_scale(metric: str, value: object) -> float | None:
        figure = number(value)
        if figure is None:
            return None
        return 1 - figure / 100 if metric == "cv_mean" else figure

    spokes = ["1 \N{MINUS SIGN} CV/100" if m == "cv_mean" else metric_label(m) for m in present]

    def drawn(entry: Mapping[str, Any], metric: str) -> float | None:
        figure = mapping(mapping(entry.get("metrics")).get(metric))
        return None if is_thin(figure) else on_unit_scale(metric, figure.get("value"))  # a thin figure: a gap

    series = [(name, [drawn(entry, m) for m in present]) for name, entry in models if entry.get("metrics")]
    targets = [on_unit_scale(m, mapping(thresholds.get(m)).get("target")) for m in present]
    return _figure(
        lambda: charts.radar_chart("snap-radar", spokes, series, targets),
        "Stability per model (1 = perfectly stable; values clipped to [0, 1]; dashed: the targets; "
        "a gap is an undefined metric or one resting on under half of its design).",
    )


def _effects(models: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    rows = [
        (name, {str(k): float(v) for k, v in mapping(entry.get("effects")).items() if number(v) is not None})
        for name, entry in models
        if mapping(entry.get("effects"))
    ]
    if not rows:
        return "<p>No variance decomposition in the analysis.</p>"
    names = {factor for _, effects in rows for factor in effects}
    factors = [f for f in EFFECT_ORDER if f in names] + sorted(names - {*EFFECT_ORDER, "residual"}) + ["residual"]
    return _figure(
        lambda: charts.effects_chart("snap-effects", rows, factors),
        "Variance decomposition (η², sequential sums of squares): the share of the score variance due to each "
        "factor; a stable model's variance is item (what is asked), not prompt, temperature or paraphrase.",
    )


def _baseline(comparisons: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for comparison in comparisons:
        difference = number(comparison.get("difference"))
        margin = number(comparison.get("margin"))
        if difference is None or margin is None:
            continue
        better = comparison.get("better") if comparison.get("better") in ("higher", "lower") else "higher"
        metric = metric_label(str(comparison.get("metric", "")))
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
    return chart + tables.baseline_table(comparisons)


def _model_section(
    index: int,
    name: str,
    entry: Mapping[str, Any],
    observations: Sequence[Observation],
    thresholds: ThresholdTable,
    n_models: int,
) -> str:
    composite = number(entry.get("composite"))
    heading = (
        f"{tables.verdict_badge(entry)} {text(name)}"
        + (f" · composite {composite:.3f}" if composite is not None else "")
        + (f" · rank {text(entry['rank'])}" if entry.get("rank") is not None else "")
    )
    parts = [
        f'<details class="snap-model" id="snap-model-{index}"{" open" if n_models <= OPEN_MODEL_SECTIONS else ""}>',
        f"<summary>{heading}</summary>",
    ]
    if entry.get("metrics"):
        parts += ["<h4>Metrics</h4>", tables.model_metric_table(entry, thresholds)]
    if observations:
        parts += [
            "<h4>Answers</h4>",
            '<div class="snap-row">',
            _heatmaps(index, observations),
            _distribution(index, observations),
            "</div>",
        ]
    else:
        parts.append("<p>No observations of this model were passed to the report.</p>")
    if entry.get("breakdowns") or entry.get("construct_means"):
        parts += [
            "<h4>Breakdowns</h4>",
            '<div class="snap-row">',
            tables.breakdown_tables(entry, thresholds),
            tables.construct_means_table(entry),
            "</div>",
        ]
    parts.append("</details>")
    return "".join(parts)


def _heatmaps(index: int, observations: Sequence[Observation]) -> str:
    constructs = {o.item: o.construct for o in observations if o.construct}
    panels = []
    for factor, title in HEATMAP_FACTORS:
        means = level_means(observations, factor)
        if means is None:
            continue
        rows = [f"{item} {constructs[item]}" if constructs.get(item, item) != item else item for item in means.items]
        panels.append(charts.HeatmapPanel(title, rows, means.levels, means.means))
    if not panels:
        return ""
    counts = score_counts(observations)
    low, high = counts.scores[0], counts.scores[-1]
    return _figure(
        lambda: charts.heatmap_chart(f"snap-heatmap-{index}", panels, low, high),
        "Mean keyed score per item (reverse-keyed items reversed); grey: no scored answer in that cell.",
    )


def _distribution(index: int, observations: Sequence[Observation]) -> str:
    counts = score_counts(observations)
    return _figure(
        lambda: charts.distribution_chart(
            f"snap-scores-{index}", counts.scores, counts.raw, counts.keyed, counts.unscored, counts.total
        ),
        f"Answers of all {counts.total:,} conditions: raw score as given, keyed score as analysed, and the "
        "answers without a score by reason.",
    )
