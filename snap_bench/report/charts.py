"""The report's charts, drawn by matplotlib and returned as inline SVG markup.

Figures are built with ``matplotlib.figure.Figure``, never pyplot: no backend is selected, no global
figure registry keeps them alive, and the host process's matplotlib state is untouched (the rc
settings apply inside ``rc_context`` only). Text stays text (``svg.fonttype: none``) so a chart is a
few kilobytes and its labels are searchable; ``text.parse_math`` is off because labels carry model
names and item texts, where a ``$`` must stay a dollar sign.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from snap_bench.report.palette import model_colour

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.projections.polar import PolarAxes
    from matplotlib.typing import RcKeyType

# Shared by every chart; svg.hashsalt stays None, so clip-path and marker ids are random per chart and
# the many SVGs inlined in one page never resolve each other's ids.
RC_PARAMS: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",
    "text.parse_math": False,
    "font.size": 8,
    "font.family": "sans-serif",
    # DejaVu Sans (bundled with matplotlib) sets the layout; the browser substitutes Arial or Helvetica,
    # which are narrower, so labels never outgrow the space laid out for them. A short list also
    # keeps the font-family attribute repeated on every text element small.
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"],
    "axes.titlesize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
# How matplotlib's SVG names the font on every label (from font.sans-serif above).
FONT_FAMILY = "font-family: 'DejaVu Sans', 'Arial', 'Helvetica', sans-serif; "
# The longest model or item name drawn into a chart; the tables next to it carry the full text.
LABEL_CHARACTERS = 32
SCORE_COLOURS = ("#4c72b0", "#9ec3e6")
UNSCORED_COLOURS = {"refusal": "#c44e52", "invalid": "#dd8452", "API error": "#8c8c8c"}
EFFECT_COLOURS = ("#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd", "#da8bc3")
RESIDUAL_COLOUR = "#d0d0d0"
NO_VALUE = "\N{EN DASH}"
MINUS = "\N{MINUS SIGN}"
HEATMAP_STEPS = 8
# The heatmap's grid in inches; a tick label's width is estimated at font size 8 (DejaVu Sans averages
# about 0.55 em a character, a little more than Arial or Helvetica in the reader's browser).
CELL_WIDTH, CELL_HEIGHT, PANEL_GAP, CHARACTER_INCHES = 0.5, 0.28, 0.3, 0.065


def short(label: str) -> str:
    return label if len(label) <= LABEL_CHARACTERS else label[: LABEL_CHARACTERS - 1] + "…"


def to_svg(figure: Figure, chart_id: str) -> str:
    """The figure as an ``<svg>`` element for inlining: no XML prolog or DOCTYPE, which HTML does not allow."""
    import matplotlib

    buffer = io.StringIO()
    # No date in the metadata: the same data give the same chart bytes (apart from the random ids).
    style: dict[RcKeyType, Any] = {**RC_PARAMS, "svg.id": chart_id}
    with matplotlib.rc_context(style):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    markup = buffer.getvalue()
    return compact_svg(markup[markup.index("<svg") :].strip())


def compact_svg(markup: str) -> str:
    """matplotlib's SVG in fewer bytes, drawn the same: no indentation between its elements or line breaks
    inside a path, coordinates to a hundredth of a point (matplotlib writes six decimals), no identity
    rotation or empty group, and the labels' font said once. A third of the charts' bytes at ten models
    (2.6 MB to 1.6 MB); the text inside an element is kept as it is."""
    markup = re.sub(r">\s+<", "><", markup)
    # an unrotated label's rotate(-0 x y), and the empty groups matplotlib leaves for tick marks not drawn
    markup = re.sub(r' transform="rotate\(-?0 [^)]*\)"', "", markup)
    markup = re.sub(r'<g id="[^"]*"/>', "", markup)
    # the font, written on every label, said once for the chart's labels
    chart = re.search(r'<svg[^>]*\bid="([^"]+)"', markup)
    if chart is not None and "<defs>" in markup:
        family = FONT_FAMILY.strip("; ")
        markup = markup.replace(FONT_FAMILY, "").replace(
            "<defs>", f"<defs><style>#{chart.group(1)} text{{{family}}}</style>", 1
        )
    return re.sub(r' (d|x|y|x1|x2|y1|y2|cx|cy|points)="([^"]*)"', _shorter_coordinates, markup)


def _shorter_coordinates(match: re.Match[str]) -> str:
    value = re.sub(r"\s*\n\s*", " ", re.sub(r"(\d\.\d\d)\d+", r"\1", match.group(2))).strip()
    return f' {match.group(1)}="{value}"'


def new_figure(width: float, height: float) -> Figure:
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    with matplotlib.rc_context(RC_PARAMS):
        # Constrained layout keeps long tick labels and outside legends inside the canvas; the pads
        # (inches) leave a little more room than its default, for the browser's own text rendering.
        return Figure(figsize=(width, height), layout=ConstrainedLayoutEngine(w_pad=0.08, h_pad=0.06))


def radar_chart(
    chart_id: str,
    spokes: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    targets: Sequence[float | None],
) -> str:
    """One polygon per model on [0, 1] spokes; a gap in a polygon is an undefined metric."""
    import matplotlib
    import numpy as np

    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(6.4, 4.0)
        axes = cast("PolarAxes", figure.add_subplot(projection="polar"))
        angles = np.linspace(0, 2 * math.pi, len(spokes), endpoint=False).tolist()
        closed = [*angles, angles[0]]
        axes.set_theta_offset(math.pi / 2)
        axes.set_theta_direction(-1)
        axes.set_xticks(angles, [short(spoke) for spoke in spokes])
        axes.set_ylim(0, 1)
        axes.set_yticks([0.25, 0.5, 0.75, 1.0], ["0.25", "0.5", "0.75", "1"], fontsize=6, color="#666666")
        if any(target is not None for target in targets):
            ring = [math.nan if target is None else target for target in targets]
            axes.plot(closed, [*ring, ring[0]], color="#333333", linestyle="--", linewidth=1, label="target")
        for name, values in series:
            points = [math.nan if value is None else min(max(value, 0.0), 1.0) for value in values]
            colour = model_colour(name)
            axes.plot(
                closed, [*points, points[0]], color=colour, linewidth=1.4, marker="o", markersize=3, label=short(name)
            )
            if not any(math.isnan(point) for point in points):
                axes.fill(closed, [*points, points[0]], color=colour, alpha=0.08)
        axes.legend(loc="center left", bbox_to_anchor=(1.12, 0.5), frameon=False)
        return to_svg(figure, chart_id)


@dataclass(frozen=True)
class HeatmapPanel:
    """Mean keyed score per item (rows) and level of one factor (columns); None where no answer scored."""

    title: str
    rows: list[str]
    columns: list[str]
    means: list[list[float | None]]


def heatmap_chart(chart_id: str, panels: Sequence[HeatmapPanel], low: float, high: float) -> str:
    """The panels side by side on one colour scale, each cell annotated with its mean.

    Laid out by hand in inches rather than by constrained layout: the grid is regular, and measuring
    every label for the layout doubled the time of the chart drawn once per model.
    """
    import matplotlib
    import numpy as np
    from matplotlib.figure import Figure

    shared_rows = all(panel.rows == panels[0].rows for panel in panels)
    label_width = 0.15 + CHARACTER_INCHES * max((len(short(row)) for panel in panels for row in panel.rows), default=1)
    n_rows = max(len(panel.rows) for panel in panels)
    cells_height = CELL_HEIGHT * n_rows
    lefts = []
    position = label_width
    for index, panel in enumerate(panels):
        if index and not shared_rows:
            position += label_width
        lefts.append(position)
        position += CELL_WIDTH * len(panel.columns) + PANEL_GAP
    colourbar_left = position
    # levels are short (NEU, t0.5); longer ones are turned 45 degrees and given the room they need
    longest_level = max((len(short(column)) for panel in panels for column in panel.columns), default=1)
    rotate = longest_level * CHARACTER_INCHES > CELL_WIDTH
    level_height = 0.2 + (0.72 * CHARACTER_INCHES * longest_level if rotate else 0.15)
    width, height = colourbar_left + 0.8, cells_height + level_height + 0.3
    bottom = level_height / height
    with matplotlib.rc_context(RC_PARAMS):
        figure = Figure(figsize=(width, height))
        # Eight colour steps (half a point on a 5-point scale): the cells carry their exact means as text,
        # and a colour bar of fewer than 50 steps stays vector (matplotlib rasterises longer ones).
        colours = matplotlib.colormaps["RdYlBu"].resampled(HEATMAP_STEPS).with_extremes(bad="#eeeeee")
        middle = (low + high) / 2
        image = None
        for index, (left, panel) in enumerate(zip(lefts, panels, strict=True)):
            axes = figure.add_axes(
                (left / width, bottom, CELL_WIDTH * len(panel.columns) / width, CELL_HEIGHT * len(panel.rows) / height)
            )
            values = np.array([[math.nan if v is None else v for v in row] for row in panel.means], dtype=float)
            # pcolormesh, not imshow: imshow would be embedded in the SVG as a PNG
            image = axes.pcolormesh(
                np.ma.masked_invalid(values), cmap=colours, vmin=low, vmax=high, edgecolors="white", linewidth=0.5
            )
            axes.set_xticks(
                [column + 0.5 for column in range(len(panel.columns))],
                [short(c) for c in panel.columns],
                rotation=45 if rotate else 0,
                ha="right" if rotate else "center",
                rotation_mode="anchor",
            )
            axes.set_yticks(
                [row + 0.5 for row in range(len(panel.rows))],
                [short(row) for row in panel.rows] if index == 0 or not shared_rows else [],
            )
            axes.invert_yaxis()  # first item on top, as in a table
            axes.tick_params(length=0)
            axes.set_title(panel.title)
            for spine in axes.spines.values():
                spine.set_visible(False)
            for (row, column), value in np.ndenumerate(values):
                label = NO_VALUE if math.isnan(value) else f"{value:.1f}"
                dark = not math.isnan(value) and abs(value - middle) > 0.3 * (high - low)
                colour = "white" if dark else "black"
                axes.text(column + 0.5, row + 0.5, label, ha="center", va="center", fontsize=7, color=colour)
        if image is not None:
            colourbar = figure.add_axes((colourbar_left / width, bottom, 0.12 / width, cells_height / height))
            figure.colorbar(
                image, cax=colourbar, label="mean keyed score", ticks=range(math.ceil(low), math.floor(high) + 1)
            )
        return to_svg(figure, chart_id)


def effects_chart(chart_id: str, rows: Sequence[tuple[str, Mapping[str, float]]], factors: Sequence[str]) -> str:
    """eta^2 per factor and the residual, stacked to 1 per model: where the variance of the scores comes from."""
    import matplotlib

    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(7.0, max(0.3 * len(rows) + 0.8, 0.16 * len(factors) + 0.6))
        axes = figure.add_subplot()
        # positions, not names, on the y axis: two long names cut to the same label must stay two bars
        positions = list(range(len(rows)))
        lefts = [0.0] * len(rows)
        for index, factor in enumerate(factors):
            widths = [max(float(effects.get(factor, 0.0)), 0.0) for _, effects in rows]
            colour = RESIDUAL_COLOUR if factor == "residual" else EFFECT_COLOURS[index % len(EFFECT_COLOURS)]
            bars = axes.barh(positions, widths, left=lefts, color=colour, label=short(factor), height=0.6)
            # values are written only where they fit inside the bar
            labels = [f"{width:.2f}" if width >= 0.08 else "" for width in widths]
            axes.bar_label(bars, labels=labels, label_type="center", fontsize=6)
            lefts = [left + width for left, width in zip(lefts, widths, strict=True)]
        axes.set_yticks(positions, [short(name) for name, _ in rows])
        axes.set_xlim(0, max(1.0, *lefts))
        axes.invert_yaxis()
        axes.set_xlabel("share of score variance (η²); the parts and the residual sum to 1")
        axes.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        return to_svg(figure, chart_id)


def distribution_chart(
    chart_id: str,
    scores: Sequence[int],
    raw: Sequence[int],
    keyed: Sequence[int],
    unscored: Mapping[str, int],
    total: int,
) -> str:
    """Share of all answers per score (raw as given, keyed as analysed) and the unscored share by reason."""
    import matplotlib

    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(4.6, 2.5)
        axes = figure.add_subplot()
        denominator = max(total, 1)
        positions = list(range(len(scores)))
        axes.bar(
            [p - 0.2 for p in positions],
            [100 * c / denominator for c in raw],
            0.4,
            color=SCORE_COLOURS[0],
            label="raw score",
        )
        axes.bar(
            [p + 0.2 for p in positions],
            [100 * c / denominator for c in keyed],
            0.4,
            color=SCORE_COLOURS[1],
            label="keyed score",
        )
        bottom = 0.0
        for reason, count in unscored.items():
            share = 100 * count / denominator
            axes.bar(
                [len(scores) + 0.3],
                [share],
                0.6,
                bottom=bottom,
                color=UNSCORED_COLOURS.get(reason, "#8c8c8c"),
                label=reason,
            )
            bottom += share
        axes.set_xticks([*positions, len(scores) + 0.3], [str(score) for score in scores] + ["unscored"])
        axes.set_ylabel("% of answers")
        axes.legend(fontsize=6, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return to_svg(figure, chart_id)


@dataclass(frozen=True)
class BaselineRow:
    label: str
    difference: float
    ci_low: float | None
    ci_high: float | None
    margin: float
    better: str
    regressed: bool


def baseline_chart(chart_id: str, rows: Sequence[BaselineRow]) -> str:
    """One strip per comparison on its own scale (a CV margin is 2 points, a correlation's 0.05)."""
    import matplotlib

    with matplotlib.rc_context(RC_PARAMS):
        figure = new_figure(6.4, 0.62 * len(rows) + 0.7)
        all_axes = figure.subplots(len(rows), 1, squeeze=False)[:, 0]
        for axes, row in zip(all_axes, rows, strict=True):
            _baseline_strip(axes, row)
        all_axes[-1].set_xlabel(f"new {MINUS} baseline, with 95% interval; dashed: the non-inferiority margin")
        return to_svg(figure, chart_id)


def _baseline_strip(axes: Axes, row: BaselineRow) -> None:
    limit = -row.margin if row.better == "higher" else row.margin
    low = row.ci_low if row.ci_low is not None else row.difference
    high = row.ci_high if row.ci_high is not None else row.difference
    span = [low, high, 0.0, limit, row.difference]
    pad = 0.15 * (max(span) - min(span) or 1.0)
    left, right = min(span) - pad, max(span) + pad
    # the side of the margin where the new model counts as non-inferior
    if row.better == "higher":
        axes.axvspan(limit, right, color="#e6f4ea", zorder=0)
    else:
        axes.axvspan(left, limit, color="#e6f4ea", zorder=0)
    axes.axvline(0, color="#999999", linewidth=0.8)
    axes.axvline(limit, color="#c44e52", linestyle="--", linewidth=1)
    colour = "#c44e52" if row.regressed else "#2e7d32"
    axes.errorbar(
        [row.difference], [0], xerr=[[row.difference - low], [high - row.difference]], fmt="o", color=colour, capsize=3
    )
    axes.set_xlim(left, right)
    axes.set_yticks([0], [short(row.label)])
    axes.tick_params(axis="y", length=0)
    axes.spines["left"].set_visible(False)
