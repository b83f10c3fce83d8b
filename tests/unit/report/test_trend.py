"""The trend chart of the stored headline figures (the report's and ``snap-bench history --chart``'s)."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_hex

from snap_bench.analysis.design_subset import DesignSubset
from snap_bench.history.session_subset import StoredSubset
from snap_bench.history.store import Headline
from snap_bench.instruments import metric_catalogue
from snap_bench.report.palette import model_colour, register_models
from snap_bench.report.trend import (
    on_line,
    panels,
    series,
    subset_lines,
    trend_figure,
    trend_svg,
    write_trend_chart,
)

ONE = "2026-11-20T10:00:00+00:00"
TWO = "2026-11-20T10:04:00+00:00"  # minutes later: the same day, its own step
THREE = "2026-11-20T10:09:00+00:00"


def headline(when: str, model: str, metric: str, value: float, n: int = 100, instrument: str = "profile") -> Headline:
    return Headline(
        when, model, instrument, metric, value, value - 0.05, value + 0.05, n, 100, "PASS", 0.7, "0.1", "cfg", when
    )


def test_a_panel_per_instrument_and_figure_composite_first_temperatures_rising() -> None:
    rows = [headline(ONE, "model-a", m, 0.7) for m in ("unscored_rate", "dependability[t1]", "dependability[t0.5]")]
    rows.append(headline(ONE, "model-a", "consistency", 0.9, instrument="perturbation"))
    assert panels(rows) == [
        ("perturbation", "composite"),
        ("perturbation", "consistency"),
        ("profile", "composite"),
        ("profile", "dependability[t0.5]"),
        ("profile", "dependability[t1]"),
        ("profile", "unscored_rate"),
    ]


def test_each_model_is_a_line_in_its_colour_with_intervals_and_a_thin_point_hatched() -> None:
    register_models(["model-a", "model-b"])
    rows = [
        headline(ONE, "model-a", "icc2_1", 0.70),
        headline(TWO, "model-a", "icc2_1", 0.75),
        headline(ONE, "model-b", "icc2_1", 0.40, n=30),  # on 30 of 100: under half of its design
        headline(TWO, "model-b", "icc2_1", 0.45),
    ]
    figure = trend_figure(rows, metric_catalogue())
    composite, icc = (axes for axes in figure.axes if axes.get_visible())
    assert icc.get_title().startswith("profile")
    lines = {to_hex(line.get_color()): list(line.get_xdata()) for line in icc.get_lines() if len(line.get_xdata()) > 1}
    assert lines == {to_hex(model_colour("model-a")): [0, 1], to_hex(model_colour("model-b")): [0, 1]}
    assert len([c for c in icc.collections if isinstance(c, LineCollection)]) == 4  # an interval per point
    hatched = [c for c in icc.collections if isinstance(c, PathCollection) and c.get_hatch()]
    assert len(hatched) == 1
    assert to_hex(hatched[0].get_facecolor()[0]) == "#eaeef2"  # grey, not the model's colour
    assert "30/100" in [text.get_text() for text in icc.texts]
    assert composite.get_ylim() == (0.0, 1.0)
    legend = [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend == ["model-a", "model-b", "under half of its design"]


def test_one_stored_session_spans_one_step_not_years() -> None:
    figure = trend_figure([headline(ONE, "model-a", "icc2_1", 0.7)], metric_catalogue())
    for axes in figure.axes:
        assert axes.get_xlim() == (-0.5, 0.5)
        assert [label.get_text() for label in axes.get_xticklabels()] == ["2026-11-20"]


def test_the_history_command_writes_the_same_chart(tmp_path: Path) -> None:
    rows = [headline(ONE, "model-b", "icc2_1", 0.7), headline(TWO, "model-a", "icc2_1", 0.6, instrument="compass")]
    path = tmp_path / "trend.svg"
    write_trend_chart(rows, path, metric_catalogue())
    chart = path.read_text(encoding="utf-8")
    for title in ("compass · composite", "profile · composite", "model-a", "model-b", "2026-11-20", "10:04"):
        assert title in chart


def incomplete(row: Headline, answered: int = 648, designed: int = 1620) -> Headline:
    """The row as a session that measured only part of the model's design stores it."""
    return dataclasses.replace(
        row,
        verdict="INCOMPLETE",
        composite=None,
        complete=False,
        conditions_answered=answered,
        conditions_designed=designed,
    )


def stale_replay() -> list[Headline]:
    """A contradiction rate of 0.083 twice, between them a stale replay's 0.000 on 648 of 1620 conditions."""
    return [
        headline(ONE, "model-a", "contradiction_rate", 0.083),
        incomplete(headline(TWO, "model-a", "contradiction_rate", 0.0)),
        headline(THREE, "model-a", "contradiction_rate", 0.083),
    ]


def test_an_incomplete_session_is_a_point_off_the_line_labelled_with_its_coverage() -> None:
    rows = stale_replay()
    points = series(rows, [ONE, TWO, THREE], "profile", "contradiction_rate")["model-a"]
    assert [(p.session, p.incomplete) for p in points] == [(0, False), (1, True), (2, False)]
    assert [p.session for p in on_line(points)] == [0, 2]  # the line passes the stale 0.000 by
    assert points[1].covered.label() == "incomplete: 648/1620 conditions"
    # its composite is None (an INCOMPLETE verdict has none): no composite point for that session at all
    assert [p.session for p in series(rows, [ONE, TWO, THREE], "profile", "composite")["model-a"]] == [0, 2]

    register_models(["model-a"])
    figure = trend_figure(rows, metric_catalogue())
    _, rate = (axes for axes in figure.axes if axes.get_visible())
    drawn = [list(line.get_xdata()) for line in rate.get_lines() if line.get_linestyle() == "-"]
    assert drawn == [[0, 2]]  # (an interval's caps are lines too, without a line style)
    squares = [
        c for c in rate.collections if isinstance(c, PathCollection) and to_hex(c.get_facecolor()[0]) == "#ffffff"
    ]
    assert len(squares) == 1
    assert list(squares[0].get_offsets()[0]) == [1.0, 0.0]
    assert to_hex(squares[0].get_edgecolor()[0]) == "#8c959f"  # grey, not the model's colour
    assert [text.get_text() for text in rate.texts] == ["648/1620"]  # conditions measured / designed
    legend = [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend[-1] == "incomplete session (measured/designed)"


def test_the_rendered_chart_carries_the_incomplete_label_and_legend() -> None:
    chart = trend_svg("snap-trend-chart", stale_replay(), metric_catalogue())
    assert "648/1620" in chart
    assert "incomplete session (measured/designed)" in chart
    complete_only = trend_svg("snap-trend-chart", [stale_replay()[0], stale_replay()[2]], metric_catalogue())
    assert "incomplete" not in complete_only


def test_a_row_stored_before_coverage_was_kept_is_drawn_as_before() -> None:
    rows = [headline(ONE, "model-a", "icc2_1", 0.7), headline(TWO, "model-a", "icc2_1", 0.6)]
    assert all(r.complete is None for r in rows)
    figure = trend_figure(rows, metric_catalogue())
    _, icc = (axes for axes in figure.axes if axes.get_visible())
    assert [list(line.get_xdata()) for line in icc.get_lines() if line.get_linestyle() == "-"] == [[0, 1]]
    assert list(icc.texts) == []


def test_thirty_sessions_of_one_day_keep_their_date_labels_apart() -> None:
    times = [f"2026-11-20T{9 + minute // 60:02d}:{minute % 60:02d}:00+00:00" for minute in range(0, 30 * 7, 7)]
    rows = [headline(when, "model-a", "icc2_1", 0.7 + index / 100) for index, when in enumerate(times)]
    figure = trend_figure(rows, metric_catalogue())
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)  # laid out as saved: the labels' boxes are where they are drawn
    for axes in (a for a in figure.axes if a.get_visible()):
        labels = [label for label in axes.get_xticklabels() if label.get_text()]
        texts = [label.get_text() for label in labels]
        assert texts[0] == f"2026-11-20\n{texts[0][-5:]}"  # the day said once, over the first time
        assert texts[-1] == "12:23"  # the newest session is always labelled
        assert len(labels) >= 2
        boxes = [label.get_window_extent(renderer) for label in labels]
        for left, right in itertools.pairwise(boxes):
            assert left.x1 < right.x0, (left, right)  # side by side, apart
        panel = axes.get_window_extent(renderer)
        assert boxes[0].x0 >= panel.x0 - boxes[0].width / 2  # not pushed over the neighbouring panel


FOUR = "2026-11-20T10:14:00+00:00"
TWO_ITEMS = DesignSubset(("items M01,M02 of 25",), 120, 1620)


def subset(row: Headline, part: DesignSubset = TWO_ITEMS) -> Headline:
    """The row as a session that set out to ask only part of the design (``--snap-items=M01,M02``) stores it."""
    return dataclasses.replace(row, complete=True, subset=StoredSubset.of(part).column())


def narrowed_runs() -> list[Headline]:
    """The whole design at 0.70 and 0.72; between them two runs of two items (0.95, 0.97), off its scale."""
    return [
        headline(ONE, "model-a", "icc2_1", 0.70),
        subset(headline(TWO, "model-a", "icc2_1", 0.95)),
        subset(headline(THREE, "model-a", "icc2_1", 0.97)),
        headline(FOUR, "model-a", "icc2_1", 0.72),
    ]


def test_a_subset_session_is_a_point_off_the_line_labelled_with_the_conditions_it_asked() -> None:
    rows = narrowed_runs()
    points = series(rows, [ONE, TWO, THREE, FOUR], "profile", "icc2_1")["model-a"]
    assert [(p.session, p.subset, p.incomplete) for p in points] == [
        (0, False, False),
        (1, True, False),
        (2, True, False),
        (3, False, False),
    ]
    assert [p.session for p in on_line(points)] == [0, 3]  # the whole design's trend passes the subset by
    assert [[p.session for p in group] for group in subset_lines(points)] == [[1, 2]]  # the same two items
    assert points[1].design.label() == "subset: items M01,M02 of 25; 120 of 1620 conditions"

    register_models(["model-a"])
    figure = trend_figure(rows, metric_catalogue())
    _, icc = (axes for axes in figure.axes if axes.get_visible())
    assert [list(line.get_xdata()) for line in icc.get_lines() if line.get_linestyle() == "-"] == [[0, 3]]
    assert [list(line.get_xdata()) for line in icc.get_lines() if line.get_linestyle() == ":"] == [[1, 2]]
    hollow = [c for c in icc.collections if isinstance(c, PathCollection) and to_hex(c.get_facecolor()[0]) == "#ffffff"]
    assert [list(c.get_offsets()[0]) for c in hollow] == [[1.0, 0.95], [2.0, 0.97]]
    assert {to_hex(c.get_edgecolor()[0]) for c in hollow} == {to_hex(model_colour("model-a"))}
    assert [text.get_text() for text in icc.texts] == ["120/1620", "120/1620"]  # asked / designed
    legend = [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend[-1] == "subset of the design (asked/designed)"


def test_subsets_of_different_parts_of_the_design_are_not_joined() -> None:
    rows = narrowed_runs()
    rows[2] = subset(rows[2], DesignSubset(("temperature t0 of 3",), 540, 1620))
    points = series(rows, [ONE, TWO, THREE, FOUR], "profile", "icc2_1")["model-a"]
    assert subset_lines(points) == []


def test_an_incomplete_subset_is_drawn_as_incomplete() -> None:
    rows = [headline(ONE, "model-a", "icc2_1", 0.7), incomplete(subset(headline(TWO, "model-a", "icc2_1", 0.1)))]
    points = series(rows, [ONE, TWO], "profile", "icc2_1")["model-a"]
    assert [(p.subset, p.incomplete) for p in points] == [(False, False), (True, True)]
    assert subset_lines(points) == []
    register_models(["model-a"])
    _, icc = (axes for axes in trend_figure(rows, metric_catalogue()).axes if axes.get_visible())
    assert [text.get_text() for text in icc.texts] == ["648/1620"]  # measured / designed, as incomplete ones are


def test_the_rendered_chart_carries_the_subset_legend_only_with_a_subset() -> None:
    chart = trend_svg("snap-trend-chart", narrowed_runs(), metric_catalogue())
    assert "subset of the design (asked/designed)" in chart
    whole = [row for row in narrowed_runs() if not row.design.is_subset]
    assert "subset" not in trend_svg("snap-trend-chart", whole, metric_catalogue())
