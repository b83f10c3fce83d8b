"""The psychometric profile's part of the report: radar, variance shares, and a section per model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import snap_bench.report.charts as charts
import snap_bench.report.tables as tables
from snap_bench.instruments.base import ReportContext
from snap_bench.observation import Observation
from snap_bench.report.aggregates import by_model, level_means, score_counts
from snap_bench.report.coverage import is_thin
from snap_bench.report.figures import figure_html as _figure
from snap_bench.report.formatting import ThresholdTable, metric_label, number, text
from snap_bench.report.tables import mapping

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


def profile_section(context: ReportContext) -> str:
    """Contents, radar and variance shares across models, then one folded section per model."""
    models = list(context.models.items())
    grouped = by_model(context.observations)
    thresholds = context.thresholds
    sections = [
        _contents(models),
        '<h4 id="snap-charts">Stability and sources of variance</h4>',
        '<div class="snap-row">',
        _radar(models, thresholds),
        _effects(models),
        "</div>",
        '<h4 id="snap-models">Per model</h4>',
    ]
    for index, (name, entry) in enumerate(models, start=1):
        sections.append(_model_section(index, name, entry, grouped.get(name, []), thresholds, len(models)))
    return "".join(sections)


def _contents(models: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    links = [("snap-charts", "charts")]
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
