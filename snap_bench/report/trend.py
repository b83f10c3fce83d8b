"""The trend chart of the stored headline figures, drawn alike for ``snap-bench history --chart`` and the report.

A panel per instrument and figure (the composite first, then each judged metric on its own scale), a line
per model in its report colour, each point with its stored 95% interval; a point resting on under half of
its design is hollow, grey and hatched, with used/designed beside it, as in the rest of the report. A point of
a session that did not measure the model's whole design is not an ordinary point: the line passes it by, and
it is drawn as a hollow grey square with its conditions measured / designed beside it (``648/1620``: the panels
are narrow; the legend says what the square is). A point of a session that set out to ask only part of the
design (``--snap-items``, ...: :mod:`snap_bench.analysis.design_subset`) is no step of the whole design's trend
either: the line passes it by, and it is drawn as a hollow diamond in the model's colour with the design's
conditions asked / designed beside it; the points of one same subset are joined by a dotted line of their own,
as they measure the same part of the design.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snap_bench.analysis.coverage import THIN_COVERAGE
from snap_bench.analysis.metric_specs import MetricCatalogue
from snap_bench.history.session_coverage import StoredCoverage
from snap_bench.history.session_subset import StoredSubset
from snap_bench.history.store import Headline
from snap_bench.report.charts import RC_PARAMS, new_figure, short, to_svg
from snap_bench.report.formatting import metric_label
from snap_bench.report.palette import model_colour, register_models
from snap_bench.report.session_axis import session_order, set_session_axis

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

COMPOSITE = "composite"
# Panels per row: an instrument with more figures continues on the next row.
COLUMNS = 5
PANEL_WIDTH, PANEL_HEIGHT = 2.3, 1.9
THIN_FACE, THIN_EDGE = "#eaeef2", "#8c959f"
INCOMPLETE_FACE = "#ffffff"
# A legend entry's marker and padding, and one character of its label at 8 points (inches).
LEGEND_MARKER, LEGEND_CHARACTER = 0.45, 0.067
# A flat trend keeps at least this span on its y axis, so run-to-run noise is not blown up to the height.
MIN_SPAN = 0.1


@dataclass(frozen=True)
class TrendPoint:
    """One model's figure in one stored session."""

    session: int  # the session's place on the axis
    value: float
    ci_low: float | None
    ci_high: float | None
    n: int
    n_designed: int
    covered: StoredCoverage = field(default_factory=StoredCoverage)  # the session's coverage of the model's design
    design: StoredSubset = field(default_factory=StoredSubset)  # what of the design the session set out to ask

    @property
    def thin(self) -> bool:
        return self.n_designed > 0 and self.n / self.n_designed < THIN_COVERAGE

    @property
    def incomplete(self) -> bool:
        return self.covered.incomplete

    @property
    def subset(self) -> bool:
        return self.design.is_subset


def on_line(points: Sequence[TrendPoint]) -> list[TrendPoint]:
    """The points the model's line joins: an incomplete session's figure is no step of the trend (a stale
    replay missing recordings would otherwise show as a sudden drop), nor is a subset's (two items of 25
    answer another question than the whole design)."""
    return [p for p in points if not p.incomplete and not p.subset]


def subset_lines(points: Sequence[TrendPoint]) -> list[list[TrendPoint]]:
    """The complete subset points, by the part of the design they asked (the same items, levels and runs): each
    group, of two points or more, a trend of its own."""
    groups: dict[str, list[TrendPoint]] = {}
    for point in points:
        if point.subset and not point.incomplete:
            groups.setdefault(point.design.label(), []).append(point)
    return [group for _, group in sorted(groups.items()) if len(group) > 1]


def panels(rows: Sequence[Headline]) -> list[tuple[str, str]]:
    """(instrument, figure) per panel: per instrument the composite, then its metrics, temperatures rising."""
    found: list[tuple[str, str]] = []
    for instrument in sorted({r.instrument for r in rows}):
        metrics = {r.metric for r in rows if r.instrument == instrument} - {COMPOSITE}
        found += [(instrument, COMPOSITE), *((instrument, m) for m in sorted(metrics, key=_metric_order))]
    return found


def _metric_order(name: str) -> tuple[str, float, str]:
    """``x[t0]`` before ``x[t0.5]`` before ``x[t1]`` (as text, ``t0.5`` would sort first)."""
    family, _, level = name.partition("[")
    level = level.rstrip("]")
    try:
        return family, float(level.removeprefix("t")), level
    except ValueError:
        return family, math.inf, level


def series(
    rows: Sequence[Headline], sessions: Sequence[str], instrument: str, figure: str
) -> dict[str, list[TrendPoint]]:
    """Each model's points in one panel, oldest first; the composite is the session's, without an interval."""
    place = {recorded_at: index for index, recorded_at in enumerate(sessions)}
    points: dict[str, dict[int, TrendPoint]] = {}
    for row in rows:
        if row.instrument != instrument or row.recorded_at not in place:
            continue
        own = points.setdefault(row.model, {})
        index = place[row.recorded_at]
        if figure == COMPOSITE:
            if row.composite is not None and index not in own:
                own[index] = TrendPoint(index, row.composite, None, None, 0, 0, row.coverage, row.design)
        elif row.metric == figure and row.value is not None and math.isfinite(row.value):
            own[index] = TrendPoint(
                index, row.value, row.ci_low, row.ci_high, row.n, row.n_designed, row.coverage, row.design
            )
    return {model: [own[i] for i in sorted(own)] for model, own in sorted(points.items()) if own}


def trend_figure(rows: Sequence[Headline], catalogue: MetricCatalogue) -> Figure:
    """The chart as a matplotlib figure (not pyplot's: nothing global is touched)."""
    import matplotlib
    from matplotlib.lines import Line2D

    sessions = session_order(r.recorded_at for r in rows)
    laid_out = panels(rows)
    instruments = sorted({instrument for instrument, _ in laid_out})
    grid: list[list[tuple[str, str]]] = []
    for instrument in instruments:
        own = [panel for panel in laid_out if panel[0] == instrument]
        grid += [own[start : start + COLUMNS] for start in range(0, len(own), COLUMNS)]
    columns = max((len(line) for line in grid), default=1)
    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(PANEL_WIDTH * columns, PANEL_HEIGHT * max(len(grid), 1) + 0.4)
        all_axes = figure.subplots(max(len(grid), 1), columns, squeeze=False)
        for line, axes_row in zip(grid, all_axes, strict=False):
            for index, axes in enumerate(axes_row):
                if index >= len(line):
                    axes.set_visible(False)
                    continue
                instrument, name = line[index]
                _panel(axes, series(rows, sessions, instrument, name), name, len(sessions))
                axes.set_title(_title(instrument, name, catalogue), fontsize=8)
                set_session_axis(axes, sessions)
        models = sorted({r.model for r in rows})
        handles: list[Any] = [Line2D([], [], color=model_colour(m), marker="o", label=short(m)) for m in models]
        handles.append(
            Line2D(
                [],
                [],
                linestyle="none",
                marker="o",
                markerfacecolor=THIN_FACE,
                markeredgecolor=THIN_EDGE,
                label="under half of its design",
            )
        )
        if any(r.coverage.incomplete for r in rows):
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker="s",
                    markerfacecolor=INCOMPLETE_FACE,
                    markeredgecolor=THIN_EDGE,
                    label="incomplete session (measured/designed)",
                )
            )
        if any(r.design.is_subset for r in rows):
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle=":",
                    color=THIN_EDGE,
                    marker="D",
                    markerfacecolor=INCOMPLETE_FACE,
                    markeredgecolor=THIN_EDGE,
                    label="subset of the design (asked/designed)",
                )
            )
        figure.legend(
            handles=handles, loc="outside lower center", ncols=_legend_columns(handles, columns), frameon=False
        )
    return figure


def _legend_columns(handles: Sequence[Any], columns: int) -> int:
    """As many entries in a row as fit the figure's width (a wider row is cut off at both sides), at most 5."""
    widest = max(len(handle.get_label()) for handle in handles)
    entry = LEGEND_MARKER + widest * LEGEND_CHARACTER
    return max(1, min(5, len(handles), int(PANEL_WIDTH * columns // entry)))


def _title(instrument: str, name: str, catalogue: MetricCatalogue) -> str:
    """Two lines at most: a panel is narrow, and the level (``t0.5``) ends the label."""
    return "\n".join(
        textwrap.wrap(f"{instrument} · {metric_label(name, catalogue)}", 30, max_lines=2, placeholder=" …")
    )


def _panel(axes: Axes, by_model: dict[str, list[TrendPoint]], name: str, sessions: int) -> None:
    for model, points in by_model.items():
        colour = model_colour(model)
        joined = on_line(points)
        axes.plot([p.session for p in joined], [p.value for p in joined], color=colour, linewidth=1.2, zorder=2)
        for group in subset_lines(points):
            axes.plot([p.session for p in group], [p.value for p in group], color=colour, linewidth=0.9, linestyle=":")
        for p in points:
            edge = THIN_EDGE if p.thin or p.incomplete else colour
            if p.ci_low is not None and p.ci_high is not None:
                below, above = max(p.value - p.ci_low, 0.0), max(p.ci_high - p.value, 0.0)
                axes.errorbar([p.session], [p.value], yerr=[[below], [above]], fmt="none", ecolor=edge, capsize=2)
            if p.incomplete:
                _incomplete_point(axes, p, right_half=p.session > (sessions - 1) / 2)
            elif p.subset:
                _subset_point(axes, p, colour, right_half=p.session > (sessions - 1) / 2)
            elif p.thin:
                axes.scatter(
                    [p.session], [p.value], s=36, facecolors=THIN_FACE, edgecolors=THIN_EDGE, hatch="////", zorder=3
                )
                axes.annotate(
                    f"{p.n}/{p.n_designed}",
                    (p.session, p.value),
                    xytext=(4, 3),
                    textcoords="offset points",
                    fontsize=6,
                    color="#6e7781",
                )
            else:
                axes.scatter([p.session], [p.value], s=16, color=colour, zorder=3)
    if name == COMPOSITE:
        axes.set_ylim(0, 1)
        return
    low, high = axes.get_ylim()
    if high - low < MIN_SPAN:
        middle = (low + high) / 2
        axes.set_ylim(middle - MIN_SPAN / 2, middle + MIN_SPAN / 2)


def _incomplete_point(axes: Axes, point: TrendPoint, *, right_half: bool) -> None:
    """A hollow grey square with its coverage beside it, towards the middle (a panel is narrow)."""
    axes.scatter(
        [point.session], [point.value], s=30, marker="s", facecolors=INCOMPLETE_FACE, edgecolors=THIN_EDGE, zorder=3
    )
    axes.annotate(
        point.covered.short_label(),
        (point.session, point.value),
        xytext=(-5 if right_half else 5, 4),
        textcoords="offset points",
        ha="right" if right_half else "left",
        fontsize=5.5,
        color="#6e7781",
        zorder=4,
    )


def _subset_point(axes: Axes, point: TrendPoint, colour: str, *, right_half: bool) -> None:
    """A hollow diamond in the model's colour with the design's conditions asked / designed beside it."""
    axes.scatter(
        [point.session], [point.value], s=30, marker="D", facecolors=INCOMPLETE_FACE, edgecolors=colour, zorder=3
    )
    axes.annotate(
        point.design.short_label(),
        (point.session, point.value),
        xytext=(-5 if right_half else 5, -8),
        textcoords="offset points",
        ha="right" if right_half else "left",
        fontsize=5.5,
        color="#6e7781",
        zorder=4,
    )


def trend_svg(chart_id: str, rows: Sequence[Headline], catalogue: MetricCatalogue) -> str:
    """The chart as inline SVG for the report."""
    return to_svg(trend_figure(rows, catalogue), chart_id)


def write_trend_chart(rows: Sequence[Headline], path: Path, catalogue: MetricCatalogue) -> None:
    """The chart as a file, its format from the suffix (.svg, .png, .pdf).

    Outside a report nothing has fixed the models' colours yet: fixed here from every model drawn, so a
    model first met in a later panel cannot shift the colours of those already drawn.
    """
    import matplotlib

    register_models({r.model for r in rows})
    with matplotlib.rc_context(RC_PARAMS):
        trend_figure(rows, catalogue).savefig(path)
