"""A questionnaire's part of the report: stability per temperature, radar, variance shares, where the models
stand among human respondents (where the questionnaire has norms), and a section per model."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import snap_bench.report.charts as charts
import snap_bench.report.tables as tables
from snap_bench.analysis.metric_specs import MetricCatalogue
from snap_bench.observations.observation import Observation
from snap_bench.report.aggregates import by_model, level_means, score_counts
from snap_bench.report.context import ReportContext
from snap_bench.report.figures import figure_html as _figure
from snap_bench.report.formatting import ThresholdTable, metric_label, number, text
from snap_bench.report.tables import mapping
from snap_bench.report.thin_figures import is_thin

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


# The element ids of a section, renamed for a questionnaire other than the first (the profile), so that two
# questionnaires' sections in one report keep their own anchors and charts.
_SECTION_IDS = re.compile(
    r'(?<=["#])snap-(?=(?:charts|models|model-\d+|radar|components|effects|heatmap-\d+|scores-\d+)\b)'
)


def questionnaire_section(context: ReportContext, anchor: str = "snap") -> str:
    """Contents, stability, norms, radar and variance shares across models, then one folded section per model;
    its element ids start with ``anchor``."""
    html = _section(context)
    return html if anchor == "snap" else _SECTION_IDS.sub(f"{anchor}-", html)


def _section(context: ReportContext) -> str:
    models = list(context.models.items())
    grouped = by_model(context.observations)
    thresholds, catalogue = context.thresholds, context.catalogue
    sections = [
        _contents(models),
        '<h4 id="snap-charts">Stability per temperature (judged)</h4>',
        temperature_table(models, thresholds, catalogue),
        _components(models),
        norms_table(models),
        "<h4>The original design's figures (reported, not judged)</h4>",
        '<div class="snap-row">',
        _radar(models, thresholds, catalogue),
        _effects(models),
        "</div>",
        '<h4 id="snap-models">Per model</h4>',
    ]
    for index, (name, entry) in enumerate(models, start=1):
        sections.append(_model_section(index, name, entry, grouped.get(name, []), thresholds, catalogue, len(models)))
    return "".join(sections)


def _contents(models: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    links = [("snap-charts", "charts")]
    links += [(f"snap-model-{index}", name) for index, (name, _) in enumerate(models, start=1)]
    links.append(("snap-downloads", "downloads"))
    return "<p>Jump to: " + " · ".join(f'<a href="#{anchor}">{text(label)}</a>' for anchor, label in links) + "</p>"


def _radar(
    models: Sequence[tuple[str, Mapping[str, Any]]], thresholds: ThresholdTable, catalogue: MetricCatalogue
) -> str:
    present = [m for m in RADAR_METRICS if any(m in mapping(entry.get("metrics")) for _, entry in models)]
    if not present:
        return "<p>No stability metrics to draw.</p>"

    def on_unit_scale(metric: str, value: object) -> float | None:
        figure = number(value)
        if figure is None:
            return None
        return 1 - figure / 100 if metric == "cv_mean" else figure

    spokes = ["1 \N{MINUS SIGN} CV/100" if m == "cv_mean" else metric_label(m, catalogue) for m in present]

    def drawn(entry: Mapping[str, Any], metric: str) -> float | None:
        figure = mapping(mapping(entry.get("metrics")).get(metric))
        return None if is_thin(figure) else on_unit_scale(metric, figure.get("value"))  # a thin figure: a gap

    series = [(name, [drawn(entry, m) for m in present]) for name, entry in models if entry.get("metrics")]
    targets = [on_unit_scale(m, mapping(thresholds.get(m)).get("target")) for m in present]
    return _figure(
        lambda: charts.radar_chart("snap-radar", spokes, series, targets),
        "The original design's stability figures per model, all temperatures pooled, on complete cells only "
        "(1 = perfectly stable; clipped to [0, 1]; dashed: the original targets; a gap is an undefined metric "
        "or one resting on under half of its design).",
    )


def levels_of(models: Sequence[tuple[str, Mapping[str, Any]]], family: str) -> list[str]:
    """The temperatures at which any model reports ``family[level]``, in increasing temperature."""
    found = {
        name[len(family) + 1 : -1]
        for _, entry in models
        for name in mapping(entry.get("metrics"))
        if name.startswith(f"{family}[") and name.endswith("]")
    }
    return sorted(found, key=_temperature)


def _temperature(level: str) -> float:
    try:
        return float(level.lstrip("t"))
    except ValueError:
        return math.inf


def temperature_table(
    models: Sequence[tuple[str, Mapping[str, Any]]], thresholds: ThresholdTable, catalogue: MetricCatalogue
) -> str:
    """Per model and temperature: the judged dependability of one answer, the run-to-run SD and the coverage."""
    levels = levels_of(models, "dependability")
    if not levels:
        return "<p>No per-temperature G study in the analysis.</p>"
    head = "".join(f'<th colspan="3">{text(level)}</th>' for level in levels)
    sub = "<th>dependability Φ</th><th>run SD</th><th>coverage</th>" * len(levels)
    body = []
    for name, entry in models:
        metrics = mapping(entry.get("metrics"))
        cells = []
        for level in levels:
            key = f"dependability[{level}]"
            cells.append(tables.metric_cell(key, mapping(metrics.get(key)), thresholds, catalogue))
            sd = number(mapping(metrics.get(f"run_sd[{level}]")).get("value"))
            coverage = number(mapping(metrics.get(key)).get("coverage"))
            cells.append(f'<td class="snap-num">{"—" if sd is None else f"{sd:.2f}"}</td>')
            cells.append(f'<td class="snap-num">{"—" if coverage is None else f"{coverage:.0%}"}</td>')
        body.append(f'<tr><th scope="row">{text(name)}</th>{"".join(cells)}</tr>')
    return (
        '<table class="snap-table snap-temperatures"><thead>'
        f'<tr><th rowspan="2">model</th>{head}</tr><tr>{sub}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        "<p><small>Dependability Φ of one raw answer (the share of its variance that is the item's; paraphrase, "
        "system prompt, context and run noise count as error), each temperature judged apart, the verdict the "
        "worst; run SD: one answer's standard deviation when the same prompt is asked again, in scale points; "
        "coverage: scored answers / designed answers (below 50 %: insufficient data).</small></p>"
    )


def _components(models: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """The G study's variance shares per model and temperature (replaces the order-dependent η² chart)."""
    rows = []
    for name, entry in models:
        studies = mapping(mapping(entry.get("details")).get("g_study"))
        for level, study in studies.items():
            shares = {
                str(component.get("effect")): float(component.get("share") or 0.0)
                for component in mapping(study).get("components") or []
                if isinstance(component, Mapping)
            }
            if shares:
                rows.append((f"{name} {level}", shares))
    if not rows:
        return ""
    factors = list(dict.fromkeys(factor for _, shares in rows for factor in shares))
    return _figure(
        lambda: charts.effects_chart("snap-components", rows, factors),
        "Generalizability study per temperature (REML on the raw answers; paraphrase nested in item): the share "
        "of one answer's variance each facet carries. A stable model's variance is item (what is asked); "
        "residual is run-to-run noise, cell the interactions left.",
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
        "The original design's variance decomposition (η², sequential sums of squares, paraphrase taken as "
        "crossed, temperatures pooled; it depends on the order of the factors): shown for comparison only.",
    )


def _model_section(
    index: int,
    name: str,
    entry: Mapping[str, Any],
    observations: Sequence[Observation],
    thresholds: ThresholdTable,
    catalogue: MetricCatalogue,
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
        parts += ["<h4>Metrics</h4>", tables.model_metric_table(entry, thresholds, catalogue)]
    parts.append(planner_table(entry))
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
            tables.breakdown_tables(entry, thresholds, catalogue),
            tables.construct_means_table(entry, catalogue),
            "</div>",
        ]
    parts.append("</details>")
    return "".join(parts)


def planner_table(entry: Mapping[str, Any]) -> str:
    """The decision study of each temperature: runs or paraphrases to average for a target coefficient."""
    studies = mapping(mapping(entry.get("details")).get("g_study"))
    rows = []
    for level, study in studies.items():
        for plan in mapping(study).get("planner") or []:
            if not isinstance(plan, Mapping):
                continue
            for coefficient, label in (
                ("phi", "\N{GREEK CAPITAL LETTER PHI}"),
                ("g", "E\N{GREEK SMALL LETTER RHO}\N{SUPERSCRIPT TWO}"),
            ):
                counts = mapping(plan.get(coefficient))
                cells = "".join(f"<td>{text('—' if n is None else n)}</td>" for n in counts.values())
                ceiling = number(plan.get(f"{coefficient}_ceiling"))
                rows.append(
                    f"<tr><td>{text(level)}</td><td>{text(plan.get('facet'))}</td><td>{label}</td>{cells}"
                    f"<td>{'—' if ceiling is None else f'{ceiling:.2f}'}</td></tr>"
                )
    if not rows:
        return ""
    return (
        "<h4>Repetitions planner (decision study)</h4>"
        '<table class="snap-table"><thead><tr><th>temperature</th><th>averaged over</th><th>coefficient</th>'
        "<th>to 0.70</th><th>to 0.80</th><th>to 0.90</th><th>ceiling</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
        "<p><small>How many runs (or paraphrases) one reading would have to average, the other facets at one "
        "condition each, to reach the target; —: not within 50, the facets that do not shrink cap it (ceiling: "
        "that facet averaged away entirely).</small></p>"
    )


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


def norms_table(models: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Per model and construct: the model's mean keyed answer with its interval beside the respondents'."""
    rows = []
    source = None
    for name, entry in models:
        norms = mapping(mapping(entry.get("details")).get("norms"))
        if not norms:
            continue
        source = norms
        for trait, figures in mapping(norms.get("traits")).items():
            interval = figures.get("model_ci")
            span = f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else ""
            mean = number(figures.get("model_mean"))
            cells = [
                "—" if mean is None else f"{mean:.2f}{span}",
                _fixed(figures.get("occasions"), 0),
                f"{figures['human_mean']:.2f} ({figures['human_sd']:.2f})",
                _signed(figures.get("z")),
                _fixed(figures.get("percentile"), 0),
                _fixed(figures.get("model_alpha"), 2),
                _fixed(figures.get("human_alpha"), 2),
            ]
            numbers = "".join(f'<td class="snap-num">{cell}</td>' for cell in cells)
            rows.append(f"<tr><td>{text(name)}</td><td>{text(trait)}</td>{numbers}</tr>")
    if source is None:
        return ""
    head = "".join(
        f"<th>{label}</th>"
        for label in (
            "model",
            "construct",
            "model mean [95% CI]",
            "occasions",
            "people: mean (SD)",
            "z",
            "percentile",
            f"model {ALPHA_SIGN}",
            f"people {ALPHA_SIGN}",
        )
    )
    return (
        f"<h4>Against {int(source['respondents']):,} people ({text(source['source'])})</h4>"
        "<p>The model's mean keyed answer per construct (a t interval over occasions: paraphrase, system prompt, "
        "temperature, context and run) against the respondents' trait scores; the percentile assumes their "
        "scores are normal. Cronbach's alpha: the model's over its occasions, the respondents' over people.</p>"
        f'<table class="snap-table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


ALPHA_SIGN = "\N{GREEK SMALL LETTER ALPHA}"


def _fixed(value: object, digits: int) -> str:
    figure = number(value)
    return "—" if figure is None else f"{figure:.{digits}f}"


def _signed(value: object) -> str:
    figure = number(value)
    return "—" if figure is None else f"{figure:+.2f}"
