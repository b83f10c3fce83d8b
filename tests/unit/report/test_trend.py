"""The trend chart of the stored headline figures (the report's and ``snap-bench history --chart``'s)."""

from __future__ import annotations

from pathlib import Path

from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_hex

from snap_bench.history.store import Headline
from snap_bench.report.palette import model_colour, register_models
from snap_bench.report.trend import panels, trend_figure, write_trend_chart

ONE = "2026-11-20T10:00:00+00:00"
TWO = "2026-11-20T10:04:00+00:00"  # minutes later: the same day, its own step


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
    figure = trend_figure(rows)
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
    figure = trend_figure([headline(ONE, "model-a", "icc2_1", 0.7)])
    for axes in figure.axes:
        assert axes.get_xlim() == (-0.5, 0.5)
        assert [label.get_text() for label in axes.get_xticklabels()] == ["2026-11-20"]


def test_the_history_command_writes_the_same_chart(tmp_path: Path) -> None:
    rows = [headline(ONE, "model-b", "icc2_1", 0.7), headline(TWO, "model-a", "icc2_1", 0.6, instrument="compass")]
    path = tmp_path / "trend.svg"
    write_trend_chart(rows, path)
    chart = path.read_text(encoding="utf-8")
    for title in ("compass · composite", "profile · composite", "model-a", "model-b", "2026-11-20 10:04"):
        assert title in chart
