"""The perturbation instrument's part of the report: accuracy per variant, effect per factor, label heatmap.

Drawn only from the analysis entries (``details``) the analysis wrote; every model or item text is
escaped, and each chart is matplotlib's SVG, inlined.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from snap_bench.analysis.metric_specs import MetricCatalogue
from snap_bench.observations.observation import Observation
from snap_bench.report.charts import RC_PARAMS, new_figure, short, to_svg
from snap_bench.report.formatting import format_value, number, text
from snap_bench.report.palette import model_colour
from snap_bench.report.tables import mapping

logger = logging.getLogger(__name__)
NO_LABEL_COLOUR = "#bdbdbd"


def perturbation_section(
    models: Mapping[str, Mapping[str, Any]], observations: Sequence[Observation], catalogue: MetricCatalogue
) -> str:
    """The section's HTML: comparison charts across models, then one collapsible part per model."""
    entries = [(str(name), mapping(entry.get("details"))) for name, entry in models.items()]
    entries = [(name, details) for name, details in entries if details.get("variants")]
    if not entries:
        return "<p>No perturbation results to draw.</p>"
    parts = [
        '<h4 id="snap-perturbation-charts">Accuracy per variant and effect per factor</h4><div class="snap-row">',
        _figure(
            lambda: variant_accuracy_chart("snap-perturbation-variants", entries),
            "Custom accuracy (1 - MSE / worst penalty, polarity-weighted encoding) of each of the 16 prompt "
            "variants, per model: solid over all its answers, an unscored one counted as the worst (the figure "
            "that ranks the variants), light over its scored answers only. Variant = "
            "formality-phrasing-order-synonyms.",
        ),
        _figure(
            lambda: factor_effect_chart("snap-perturbation-factors", entries),
            "Per factor: accuracy at the first level minus the second (left), and the share of inputs whose "
            "label changes when only that factor changes (right). The largest bar on the right is the "
            "rewording that hurts consistency most.",
        ),
        "</div>",
    ]
    for index, (name, details) in enumerate(entries, start=1):
        parts.append(
            f'<details class="snap-model" id="snap-perturbation-model-{index}"{" open" if len(entries) <= 2 else ""}>'
            f"<summary>{text(name)}</summary>"
        )
        parts.append(variant_table(details, catalogue))
        parts.append(phase2_table(details, catalogue))
        parts.append(
            _figure(
                partial(label_heatmap, f"snap-perturbation-heatmap-{index}", details),
                "Label per input (rows, with the gold and the share of variants agreeing on the modal label) "
                "and variant (columns); grey: no label (refused or invalid).",
            )
        )
        parts.append("</details>")
    return "".join(parts)


def _figure(draw: Callable[[], str], caption: str) -> str:
    try:
        svg = draw()
    except Exception as error:  # one chart that cannot be drawn must not cost the report
        logger.warning("snap-bench report: perturbation chart not drawn: %s", error)
        return f'<p class="snap-chart-missing">Chart not drawn ({text(caption)}): {text(error)}</p>'
    return f'<figure class="snap-chart">{svg}<figcaption>{text(caption)}</figcaption></figure>'


def variant_table(details: Mapping[str, Any], catalogue: MetricCatalogue) -> str:
    best, worst = details.get("best_variant"), details.get("worst_variant")
    factors = list(mapping(details.get("factors"))) or ["formality", "phrasing", "order", "synonyms"]
    head = "".join(f"<th>{text(f)}</th>" for f in factors)
    rows = []
    for variant in details.get("variants") or []:
        entry = mapping(variant)
        levels = mapping(entry.get("levels"))
        mark = " (best)" if entry.get("id") == best else " (worst)" if entry.get("id") == worst else ""
        cells = "".join(f"<td>{text(levels.get(f, ''))}</td>" for f in factors)
        rows.append(
            f"<tr><td>{text(entry.get('id'))}{text(mark)}</td>{cells}"
            f"<td>{format_value('accuracy', entry.get('custom_accuracy'), catalogue)}</td>"
            f"<td>{format_value('accuracy', entry.get('answered_accuracy'), catalogue)}</td>"
            f"<td>{format_value('accuracy', entry.get('polarity_accuracy'), catalogue)}</td>"
            f"<td>{format_value('index', entry.get('weighted_index'), catalogue)}</td>"
            f"<td>{format_value('unscored_rate', entry.get('unscored_rate'), catalogue)}</td>"
            f"<td>{text(entry.get('n', ''))}</td></tr>"
        )
    gold = "five-class" if details.get("gold_kind") == "five_class" else "polarity (binary)"
    return (
        f"<p>Gold: {text(gold)}. Custom accuracy is over a variant's scored answers; over all answers, an "
        "unscored one counts as the worst answer, and that figure (in the weighted index) ranks the variants.</p>"
        f'<table class="snap-table"><thead><tr><th>variant</th>{head}<th>custom accuracy</th>'
        "<th>over all answers</th><th>polarity accuracy</th><th>weighted index</th><th>unscored</th>"
        "<th>n scored</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def phase2_table(details: Mapping[str, Any], catalogue: MetricCatalogue) -> str:
    phase2 = mapping(details.get("phase2"))
    if not phase2:
        return ""
    rows = [
        f"<tr><td>baseline ({text(phase2.get('variant'))})</td>"
        f"<td>{format_value('accuracy', phase2.get('baseline_custom_accuracy'), catalogue)}</td>"
        "<td></td><td></td><td></td>"
        "<td></td></tr>"
    ]
    names = {"pre": "examples before the prompt", "suf": "examples after the prompt"}
    for position, values in mapping(phase2.get("positions")).items():
        entry = mapping(values)
        rows.append(
            f"<tr><td>{text(names.get(position, position))}</td>"
            f"<td>{format_value('accuracy', entry.get('custom_accuracy'), catalogue)}</td>"
            f"<td>{format_value('gain', entry.get('gain'), catalogue)}</td>"
            f"<td>{format_value('unscored_rate', entry.get('unscored_rate'), catalogue)}</td>"
            f"<td>{text(entry.get('n', ''))}</td><td>{text(entry.get('n_paired', ''))}</td></tr>"
        )
    return (
        "<p>Phase 2: the best baseline variant with few-shot examples (the chosen examples are in "
        "perturbation-audit.json). Each accuracy is over that prompt's scored answers; the gain compares "
        "both prompts on the samples scored with and without examples (paired).</p>"
        '<table class="snap-table"><thead><tr><th>prompt</th><th>custom accuracy</th><th>gain over baseline</th>'
        "<th>unscored</th><th>n</th><th>paired n</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def variant_accuracy_chart(chart_id: str, entries: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    import matplotlib

    variants = [str(mapping(v).get("id")) for v in entries[0][1].get("variants") or []]
    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(7.0, 0.22 * len(variants) * max(1, len(entries)) ** 0.5 + 1.0)
        axes = figure.add_subplot()
        height = 0.8 / len(entries)
        for series, (name, details) in enumerate(entries):
            by_id = {str(mapping(v).get("id")): mapping(v) for v in details["variants"]}
            positions = [row + series * height for row in range(len(variants))]
            colour = model_colour(name)
            scored = [number(by_id.get(variant, {}).get("custom_accuracy")) or 0.0 for variant in variants]
            # analysis.json files written before answered_accuracy existed fall back to the scored figure
            answered = [
                number(by_id.get(variant, {}).get("answered_accuracy", by_id.get(variant, {}).get("custom_accuracy")))
                or 0.0
                for variant in variants
            ]
            axes.barh(positions, scored, height=height, color=colour, alpha=0.3)
            axes.barh(positions, answered, height=height, label=short(name), color=colour)
        axes.set_yticks([row + 0.4 - height / 2 for row in range(len(variants))], variants)
        axes.set_xlim(0, 1)
        axes.invert_yaxis()
        axes.set_xlabel("custom accuracy: solid over all answers (unscored as the worst), light over scored ones")
        axes.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        return to_svg(figure, chart_id)


def factor_effect_chart(chart_id: str, entries: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    import matplotlib

    factors = list(mapping(entries[0][1].get("factors")))
    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(7.0, 0.35 * len(factors) * max(1, len(entries)) ** 0.5 + 1.0)
        effect_axes, flip_axes = figure.subplots(1, 2, sharey=True)
        height = 0.8 / len(entries)
        for series, (name, details) in enumerate(entries):
            per_factor = mapping(details.get("factors"))
            positions = [row + series * height for row in range(len(factors))]
            colour = model_colour(name)
            effects = [number(mapping(per_factor.get(f)).get("accuracy_effect")) or 0.0 for f in factors]
            flips = [number(mapping(per_factor.get(f)).get("flip_rate")) or 0.0 for f in factors]
            effect_axes.barh(positions, effects, height=height, color=colour, label=short(name))
            flip_axes.barh(positions, flips, height=height, color=colour)
        labels = []
        for factor in factors:
            levels = mapping(entries[0][1].get("factors")).get(factor, {}).get("levels") or []
            labels.append(f"{factor} ({' - '.join(str(level) for level in levels)})")
        effect_axes.set_yticks([row + 0.4 - height / 2 for row in range(len(factors))], labels)
        effect_axes.invert_yaxis()
        effect_axes.axvline(0, color="#57606a", linewidth=0.6)
        effect_axes.set_xlabel("accuracy difference between the levels")
        flip_axes.set_xlim(0, 1)
        flip_axes.set_xlabel("share of labels that change")
        effect_axes.legend(loc="lower left", bbox_to_anchor=(0, 1.02), frameon=False, ncols=max(1, len(entries)))
        return to_svg(figure, chart_id)


def label_heatmap(chart_id: str, details: Mapping[str, Any]) -> str:
    import matplotlib
    import numpy as np
    from matplotlib.colors import ListedColormap

    encoding = {str(k): float(v) for k, v in mapping(details.get("encoding")).items()}
    units = [mapping(unit) for unit in details.get("units") or []]
    variants = [str(mapping(v).get("id")) for v in details.get("variants") or []]
    values = np.array(
        [[encoding.get(str(label), np.nan) if label is not None else np.nan for label in u["labels"]] for u in units]
    )
    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(7.0, 0.16 * len(units) + 1.6)
        axes = figure.add_subplot()
        colours = matplotlib.colormaps["RdBu"].resampled(7)
        cmap = ListedColormap([colours(i) for i in range(7)]).with_extremes(bad=NO_LABEL_COLOUR)
        image = axes.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=-3.5, vmax=3.5, aspect="auto")
        axes.set_xticks(range(len(variants)), variants, rotation=90, fontsize=6)
        axes.set_yticks(
            range(len(units)),
            [f"{u['sample']} ({u['gold']}, {float(u['consistency']):.2f})" for u in units],
            fontsize=6,
        )
        bar = figure.colorbar(image, ax=axes, ticks=sorted(set(encoding.values())), fraction=0.04)
        bar.ax.set_yticklabels([label for label, _ in sorted(encoding.items(), key=lambda item: item[1])])
        return to_svg(figure, chart_id)
