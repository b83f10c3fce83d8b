"""The political compass's part of the report: the compass, the placements over time, the answers per item.

Registered in :data:`snap_bench.report.summary.INSTRUMENT_SECTIONS`; reads the compass entries of
analysis.json (``details``: coordinates, per system prompt, history) and the compass observations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from snap_bench.history.session_coverage import StoredCoverage
from snap_bench.history.session_subset import StoredSubset
from snap_bench.observations.observation import Observation
from snap_bench.report.charts import MINUS, RC_PARAMS, new_figure, short, to_svg
from snap_bench.report.figures import figure_html
from snap_bench.report.formatting import ANSWER_CODES, number, text
from snap_bench.report.palette import model_colour
from snap_bench.report.session_axis import session_order, set_session_axis
from snap_bench.report.tables import mapping

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

LIMIT = 10.0
ANSWER_ORDER = ("strongly agree", "agree", "neutral", "disagree", "strongly disagree", "no opinion")
UNSCORED_ORDER = tuple(ANSWER_CODES.values())
QUADRANTS = (
    (-5, 5, "authoritarian left"),
    (5, 5, "authoritarian right"),
    (-5, -5, "libertarian left"),
    (5, -5, "libertarian right"),
)


@dataclass(frozen=True)
class CompassPoint:
    """A placement with its interval on each axis (None where the axis has none)."""

    label: str
    economic: float
    social: float
    economic_interval: tuple[float, float] | None = None
    social_interval: tuple[float, float] | None = None
    model_index: int = 0
    small: bool = False
    model: str = ""


def compass_section(models: Mapping[str, Mapping[str, Any]], observations: Sequence[Observation]) -> str:
    points, prompt_points = _points(models)
    parts = ['<div class="snap-row">']
    if points:
        per_prompt = any(mapping(mapping(entry).get("details")).get("draw_per_prompt") for entry in models.values())
        drawn = points + (prompt_points if per_prompt else [])
        caption = (
            "Each model's placement (economic: left \N{MINUS SIGN}, right +; social: libertarian \N{MINUS SIGN}, "
            "authoritarian +) with its 95% interval (two-way bootstrap over items and runs)"
            + ("; small markers: the placement under each system prompt." if per_prompt else ".")
        )
        parts.append(figure_html(lambda: compass_chart("snap-compass", drawn), caption))
    else:
        parts.append("<p>No model has a placement on both axes.</p>")
    histories = {name: mapping(entry).get("details", {}).get("history") or [] for name, entry in models.items()}
    if any(histories.values()):
        parts.append(
            figure_html(
                lambda: history_chart("snap-compass-history", histories),
                "Each model's placement in every session recorded in the results store, oldest first; a hollow grey "
                "square is a session that did not measure the model's whole design, kept off the line.",
            )
        )
    parts.append("</div>")
    parts.append(_placements_table(models))
    parts.append(_answers_table(models, observations))
    return "".join(parts)


def _points(models: Mapping[str, Mapping[str, Any]]) -> tuple[list[CompassPoint], list[CompassPoint]]:
    points: list[CompassPoint] = []
    prompt_points: list[CompassPoint] = []
    for index, (name, entry) in enumerate(models.items()):
        details = mapping(mapping(entry).get("details"))
        coordinates = mapping(details.get("coordinates"))
        economic, social = mapping(coordinates.get("economic")), mapping(coordinates.get("social"))
        x, y = number(economic.get("value")), number(social.get("value"))
        if x is None or y is None:
            continue
        points.append(CompassPoint(name, x, y, _interval(economic), _interval(social), index, model=name))
        for prompt, axes in mapping(details.get("per_system_prompt")).items():
            px, py = number(mapping(axes).get("economic")), number(mapping(axes).get("social"))
            if px is not None and py is not None:
                point = CompassPoint(f"{name} {prompt}", px, py, model_index=index, small=True, model=name)
                prompt_points.append(point)
    return points, prompt_points


def _interval(metric: Mapping[str, Any]) -> tuple[float, float] | None:
    low, high = number(metric.get("ci_low")), number(metric.get("ci_high"))
    return None if low is None or high is None else (low, high)


def compass_chart(chart_id: str, points: Sequence[CompassPoint]) -> str:
    """The compass: economic on x, social on y, both [-10, 10], quadrants shaded and labelled."""
    import matplotlib
    from matplotlib.patches import Rectangle

    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(5.2, 4.6)
        axes = figure.add_subplot()
        axes.set_xlim(-LIMIT, LIMIT)
        axes.set_ylim(-LIMIT, LIMIT)
        axes.set_aspect("equal")
        shades = ((-LIMIT, 0, "#f4c7c3"), (0, 0, "#c6dcf5"), (-LIMIT, -LIMIT, "#cde8c8"), (0, -LIMIT, "#f3e4b8"))
        for x, y, colour in shades:
            axes.add_patch(Rectangle((x, y), LIMIT, LIMIT, color=colour, alpha=0.45, linewidth=0))
        axes.axhline(0, color="#555555", linewidth=0.8)
        axes.axvline(0, color="#555555", linewidth=0.8)
        for x, y, label in QUADRANTS:
            axes.text(x, y, label, ha="center", va="center", color="#555555", fontsize=7, alpha=0.9)
        for point in points:
            colour = model_colour(point.model) if point.model else f"C{point.model_index % 10}"
            if point.small:
                axes.plot(point.economic, point.social, marker="x", markersize=4, color=colour, linestyle="none")
                axes.annotate(point.label.rsplit(" ", 1)[-1], (point.economic, point.social), fontsize=6, color=colour)
                continue
            xerr = _error(point.economic, point.economic_interval)
            yerr = _error(point.social, point.social_interval)
            axes.errorbar(
                point.economic,
                point.social,
                xerr=xerr,
                yerr=yerr,
                marker="o",
                markersize=6,
                color=colour,
                capsize=3,
                linewidth=1.2,
                label=short(point.label),
            )
        axes.set_xlabel(f"economic: left ({MINUS}) to right (+)")
        axes.set_ylabel(f"social: libertarian ({MINUS}) to authoritarian (+)")
        if any(not point.small for point in points):
            axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
        return to_svg(figure, chart_id)


def _error(value: float, interval: tuple[float, float] | None) -> list[list[float]] | None:
    if interval is None:
        return None
    return [[max(value - interval[0], 0.0)], [max(interval[1] - value, 0.0)]]


def history_chart(chart_id: str, histories: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
    """Economic and social coordinate per stored session, one line per model."""
    return to_svg(history_figure(histories), chart_id)


def history_figure(histories: Mapping[str, Sequence[Mapping[str, Any]]]) -> Figure:
    """The chart as a figure: the sessions one step apart, dated by their tick labels (a date axis would
    stretch one session, or a few minutes apart, over years)."""
    import matplotlib

    sessions = session_order(
        str(row["recorded_at"]) for rows in histories.values() for row in rows if row.get("recorded_at")
    )
    place = {recorded_at: index for index, recorded_at in enumerate(sessions)}
    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(6.0, 3.6)
        economic_axes, social_axes = figure.subplots(2, 1, sharex=True)
        for name, rows in histories.items():
            # By place alone: two sessions stored in the same second share one, and their rows do not compare.
            stored = sorted(
                ((place[str(row["recorded_at"])], row) for row in rows if str(row.get("recorded_at")) in place),
                key=lambda placed: placed[0],
            )
            if not stored:
                continue
            # An incomplete session's placement is no step of the trend: drawn apart, labelled with its coverage;
            # nor is a subset's (two statements of the bank place the model on another question), labelled with
            # the design's conditions it asked.
            joined = [(index, row) for index, row in stored if not _coverage(row).incomplete and not _subset(row)]
            apart = [(index, row) for index, row in stored if _coverage(row).incomplete]
            narrowed = [(index, row) for index, row in stored if _subset(row) and not _coverage(row).incomplete]
            colour = model_colour(name)
            for axes, axis in ((economic_axes, "economic"), (social_axes, "social")):
                axes.plot(
                    [index for index, _ in joined],
                    [_or_nan(row.get(axis)) for _, row in joined],
                    marker="o",
                    markersize=3,
                    color=colour,
                    label=short(name) if axis == "economic" else None,
                )
                for index, row in apart:
                    _incomplete_placement(axes, index, _or_nan(row.get(axis)), _coverage(row).label())
                for index, row in narrowed:
                    _subset_placement(axes, index, _or_nan(row.get(axis)), colour, _subset(row))
        for axes, title in ((economic_axes, "economic"), (social_axes, "social")):
            axes.set_ylim(-LIMIT, LIMIT)
            axes.axhline(0, color="#999999", linewidth=0.6)
            axes.set_ylabel(title)
        set_session_axis(economic_axes, sessions, label=False)
        set_session_axis(social_axes, sessions)
        social_axes.set_xlabel("stored session")
        economic_axes.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    return figure


def _coverage(row: Mapping[str, Any]) -> StoredCoverage:
    return StoredCoverage.stored(row.get("complete"), row.get("conditions_answered"), row.get("conditions_designed"))


def _subset(row: Mapping[str, Any]) -> str:
    """``subset: 24/160``: the design's conditions a subset session asked / designed; '' for the whole design."""
    design = StoredSubset.stored(row.get("subset"))
    return f"subset: {design.short_label()}" if design.is_subset else ""


def _subset_placement(axes: Axes, index: int, value: float, colour: str, label: str) -> None:
    axes.scatter([index], [value], s=22, marker="D", facecolors="#ffffff", edgecolors=colour, zorder=3)
    axes.annotate(label, (index, value), xytext=(5, -9), textcoords="offset points", fontsize=6, color="#6e7781")


def _incomplete_placement(axes: Axes, index: int, value: float, label: str) -> None:
    axes.scatter([index], [value], s=22, marker="s", facecolors="#ffffff", edgecolors="#8c959f", zorder=3)
    axes.annotate(label, (index, value), xytext=(5, 3), textcoords="offset points", fontsize=6, color="#6e7781")


def _or_nan(value: object) -> float:
    figure = number(value)
    return math.nan if figure is None else figure


def _placements_table(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Coordinates overall, per run, per forced/unforced choice and per system prompt."""
    rows = []
    for name, entry in models.items():
        details = mapping(mapping(entry).get("details"))
        coordinates = mapping(details.get("coordinates"))
        cells = [f'<th scope="row">{text(name)}</th>']
        for axis in ("economic", "social"):
            metric = mapping(coordinates.get(axis))
            value, interval = number(metric.get("value")), _interval(metric)
            shown = "\N{EN DASH}" if value is None else f"{value:+.2f}"
            if interval is not None:
                shown += f" <small>[{interval[0]:+.2f}, {interval[1]:+.2f}]</small>"
            cells.append(f'<td class="snap-num">{shown}</td>')
        for key in ("per_choice", "per_system_prompt", "per_run"):
            levels = mapping(details.get(key))
            listed = "; ".join(
                f"{text(level)}: {_pair(mapping(axes))}" for level, axes in sorted(levels.items(), key=lambda kv: kv[0])
            )
            cells.append(f"<td>{listed or chr(0x2013)}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    head = (
        "<tr><th>model</th><th>economic</th><th>social</th><th>by choice</th>"
        "<th>by system prompt</th><th>by run</th></tr>"
    )
    return (
        '<table class="snap-table"><caption>Placements (economic, social) on [\N{MINUS SIGN}10, +10]</caption>'
        f"<thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _pair(axes: Mapping[str, Any]) -> str:
    values = [number(axes.get(axis)) for axis in ("economic", "social")]
    return "(" + ", ".join("\N{EN DASH}" if v is None else f"{v:+.1f}" for v in values) + ")"


def _answers_table(models: Mapping[str, Mapping[str, Any]], observations: Sequence[Observation]) -> str:
    """Per model and item: the statement, its axis and keying, and how often each answer was given."""
    statements = _statements(observations)
    parts = []
    for name, entry in models.items():
        items = mapping(mapping(mapping(entry).get("details")).get("items"))
        if not items:
            continue
        given = {label for values in items.values() for label in mapping(mapping(values).get("answers"))}
        labels = [label for label in (*ANSWER_ORDER, *UNSCORED_ORDER) if label in given]
        head = "".join(f"<th>{text(label)}</th>" for label in labels)
        body = []
        for item, values in sorted(items.items()):
            values = mapping(values)
            answers = mapping(values.get("answers"))
            coordinate = number(values.get("coordinate"))
            counts = "".join(f'<td class="snap-num">{int(answers.get(label, 0))}</td>' for label in labels)
            body.append(
                f'<tr><th scope="row">{text(item)}</th><td>{text(statements.get(item, ""))}</td>'
                f"<td>{text(values.get('axis', ''))}{' (reverse)' if values.get('reverse') else ''}</td>{counts}"
                f'<td class="snap-num">{"" if coordinate is None else f"{coordinate:+.2f}"}</td></tr>'
            )
        parts.append(
            f'<details class="snap-model"><summary>Answers per item: {text(name)}</summary>'
            '<table class="snap-table"><thead><tr><th>item</th><th>statement (P1)</th><th>axis</th>'
            f"{head}<th>coordinate</th></tr></thead><tbody>{''.join(body)}</tbody></table></details>"
        )
    return "".join(parts)


def _statements(observations: Sequence[Observation]) -> dict[str, str]:
    """Each item's first paraphrase as it was asked: the paragraph of the question that is the statement."""
    statements: dict[str, str] = {}
    for observation in observations:
        if observation.item in statements or observation.factors.get("paraphrase") != "P1" or not observation.messages:
            continue
        paragraphs = str(observation.messages[-1].get("content", "")).split("\n\n")
        if len(paragraphs) >= 3:
            statements[observation.item] = paragraphs[1].strip()
    return statements
