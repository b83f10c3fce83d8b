"""The report's history section: the stored trend of the report's models, from a real store (from a session:
tests/session/test_trend_section.py)."""

from __future__ import annotations

import dataclasses
import html
from pathlib import Path

from snap_bench.analysis.design_subset import DesignSubset
from snap_bench.history.session_subset import StoredSubset
from snap_bench.history.store import Headline, append_new, read_headlines
from snap_bench.instruments import metric_catalogue
from snap_bench.report.trend_section import StoredTrend, stored_trend, trend_section
from tests.unit.report.fake_data import XSS_PAYLOADS
from tests.unit.report.test_report_summary import Elements, svg_elements

EARLIER, LATER = "2026-11-20T10:00:00+00:00", "2026-11-23T10:00:00+00:00"


def headlines(when: str, model: str, value: float, instrument: str = "profile") -> list[Headline]:
    return [
        Headline(
            when,
            model,
            instrument,
            metric,
            value,
            value - 0.1,
            value + 0.1,
            90,
            100,
            "PASS",
            value,
            "0.1",
            "c",
            f"{when}{model}{value}",
        )
        for metric in ("dependability[t0]", "unscored_rate")
    ]


def chart_text(markup: str) -> str:
    """The trend chart's SVG (its labels stay text)."""
    charts = svg_elements(markup)
    assert set(charts) == {"snap-trend-chart"}
    return charts["snap-trend-chart"]


def test_two_sessions_of_two_models_are_charted_and_a_model_not_in_the_report_is_not(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    for when, value in ((EARLIER, 0.6), (LATER, 0.7)):
        for model in ("model-a", "model-b", "model-gone"):
            append_new(store, headlines(when, model, value))
    trend = stored_trend(store, ["model-a", "model-b"], ["profile"])
    assert {r.model for r in trend.rows} == {"model-a", "model-b"}
    # every stored row handed over: the section itself keeps to the report's models
    markup = trend_section(StoredTrend(str(store), read_headlines(store)), ["model-a", "model-b"], metric_catalogue())
    chart = chart_text(markup)
    assert "model-a" in chart
    assert "model-b" in chart
    assert "model-gone" not in markup
    assert "2026-11-20" in chart
    assert "2026-11-23" in chart
    assert "model-a: 2 stored sessions, 2026-11-20 to 2026-11-23" in markup
    assert "model-b: 2 stored sessions" in markup


def test_an_incomplete_session_is_named_beside_the_chart_and_labelled_in_it(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    stale = "2026-11-21T10:00:00+00:00"
    append_new(store, headlines(EARLIER, "model-a", 0.6))
    partial = {"complete": False, "conditions_answered": 648, "conditions_designed": 1620}
    append_new(store, [dataclasses.replace(row, **partial) for row in headlines(stale, "model-a", 0.1)])
    append_new(store, headlines(LATER, "model-a", 0.6))
    markup = trend_section(stored_trend(store, ["model-a"], ["profile"]), ["model-a"], metric_catalogue())
    assert (
        "model-a: 3 stored sessions, 2026-11-20 to 2026-11-23 (charted above; 1 incomplete (648/1620 conditions), "
        "drawn off the line)." in markup
    )
    chart = chart_text(markup)
    assert "648/1620" in chart
    assert "incomplete session (measured/designed)" in chart


def test_a_subset_session_is_named_beside_the_chart_and_labelled_in_it(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    narrowed = "2026-11-21T10:00:00+00:00"
    append_new(store, headlines(EARLIER, "model-a", 0.6))
    two_items = StoredSubset.of(DesignSubset(("items M01,M02 of 25",), 120, 1620)).column()
    append_new(store, [dataclasses.replace(row, subset=two_items) for row in headlines(narrowed, "model-a", 0.9)])
    append_new(store, headlines(LATER, "model-a", 0.6))
    markup = trend_section(stored_trend(store, ["model-a"], ["profile"]), ["model-a"], metric_catalogue())
    assert (
        "model-a: 3 stored sessions, 2026-11-20 to 2026-11-23 (charted above; 1 subset(s) of the design "
        "(profile: items M01,M02 of 25; 120 of 1620 conditions), drawn off the line)." in markup
    )
    assert "incomplete (" not in markup
    chart = chart_text(markup)
    assert "120/1620" in chart
    assert "subset of the design (asked/designed)" in chart


def test_a_model_with_only_this_session_is_one_line_not_an_empty_chart(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    append_new(store, headlines(EARLIER, "model-a", 0.6))
    append_new(store, headlines(LATER, "model-a", 0.7))
    append_new(store, headlines(LATER, "model-new", 0.5))
    markup = trend_section(
        stored_trend(store, ["model-a", "model-new"], ["profile"]), ["model-a", "model-new"], metric_catalogue()
    )
    assert "model-new" not in chart_text(markup)
    assert "model-new: the store holds one session of this model (2026-11-23" in markup

    alone = trend_section(stored_trend(store, ["model-new"], ["profile"]), ["model-new"], metric_catalogue())
    assert svg_elements(alone) == {}
    assert alone.count("<li>") == 1
    assert "model-new: the store holds one session" in alone


def test_an_unreadable_store_is_said_and_loses_no_report(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    store.write_text("not a database", encoding="utf-8")
    markup = trend_section(stored_trend(store, ["model-a"], ["profile"]), ["model-a"], metric_catalogue())
    assert "could not be read" in markup
    assert svg_elements(markup) == {}


def test_stored_model_names_stay_text(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    for payload in XSS_PAYLOADS:
        append_new(store, headlines(EARLIER, payload, 0.6))
        append_new(store, headlines(LATER, payload, 0.7))
    markup = trend_section(stored_trend(store, XSS_PAYLOADS, ["profile"]), XSS_PAYLOADS, metric_catalogue())
    elements = Elements(markup)
    assert not elements.named("script")
    assert not elements.named("img")
    assert [attrs.get("id") for attrs in elements.named("svg")] == ["snap-trend-chart"]
    assert [(tag, name) for tag, attrs in elements.tags for name in attrs if name.lower().startswith("on")] == []
    for payload in XSS_PAYLOADS:
        assert html.escape(payload, quote=True) in markup  # shown, as text
