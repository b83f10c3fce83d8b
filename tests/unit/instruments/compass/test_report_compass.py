"""The compass's part of the report, from a hand-built analysis document (no model involved)."""

from __future__ import annotations

import html
from typing import Any

import pytest

from snap_bench.analysis.design_subset import DesignSubset
from snap_bench.history.session_subset import StoredSubset
from snap_bench.instruments.compass.report import compass_section, history_figure
from snap_bench.observations.observation import Observation
from snap_bench.report import summary_html
from tests.conftest import shipped_instruments
from tests.unit.report.fake_data import XSS_PAYLOADS
from tests.unit.report.test_report_summary import Elements, only_own_scripts, svg_elements


def compass_entry(economic: float, social: float, name: str = "fake-compass") -> dict[str, Any]:
    return {
        "instrument": "compass",
        "verdict": "BORDERLINE",
        "composite": 0.7,
        "rank": 1,
        "metrics": {
            "coordinate_sd_max": {"value": 1.4, "ci_low": 1.1, "ci_high": 1.9, "n": 16, "status": "acceptable"},
            "economic": {"value": economic, "ci_low": economic - 1, "ci_high": economic + 1, "n": 100},
        },
        "details": {
            "coordinates": {
                "economic": {"value": economic, "ci_low": economic - 1, "ci_high": economic + 1},
                "social": {"value": social, "ci_low": social - 2, "ci_high": social + 2},
            },
            "per_system_prompt": {"NEU": {"economic": economic + 0.5, "social": social}},
            "per_choice": {"forced": {"economic": economic, "social": social}},
            "per_run": {"1": {"economic": economic, "social": social}},
            "items": {
                "E01": {"axis": "economic", "reverse": True, "answers": {"agree": 3, "invalid": 1}, "coordinate": 2.5}
            },
            "history": [
                {"recorded_at": "2026-11-20T10:00:00+00:00", "economic": economic - 1, "social": social},
                {"recorded_at": "2026-11-22T10:00:00+00:00", "economic": economic, "social": social},
            ],
            "draw_per_prompt": False,
        },
    }


def test_the_compass_chart_places_each_model_and_its_history() -> None:
    markup = compass_section({"fake-left": compass_entry(-4.0, 3.0), "fake-right": compass_entry(6.0, -2.0)}, [])
    charts = svg_elements(markup)
    assert {"snap-compass", "snap-compass-history"} <= set(charts)
    for quadrant in ("authoritarian left", "authoritarian right", "libertarian left", "libertarian right"):
        assert quadrant in charts["snap-compass"]
    assert "fake-left" in charts["snap-compass"]
    assert "fake-right" in charts["snap-compass"]
    assert "\N{MINUS SIGN}4.00" not in markup
    assert "-4.00 <small>[-5.00, -3.00]</small>" in markup
    assert "E01" in markup
    assert "economic (reverse)" in markup


def test_one_stored_session_spans_one_step_not_years() -> None:
    one = {"fake-left": [{"recorded_at": "2026-11-20T10:00:00+00:00", "economic": 1.0, "social": 2.0}]}
    figure = history_figure(one)
    for axes in figure.axes:
        assert axes.get_xlim() == (-0.5, 0.5)
    assert [label.get_text() for label in figure.axes[-1].get_xticklabels()] == ["2026-11-20"]


def test_two_sessions_stored_in_the_same_second_are_drawn_not_compared() -> None:
    # Timestamps have a second's resolution: two replays in a row (in-process, or a CI matrix) can share one, and
    # ordering their rows then compared two dicts (the chart was "not drawn": TypeError).
    when = "2026-11-20T10:00:00+00:00"
    rows = [
        {"recorded_at": when, "economic": 1.0, "social": 2.0},
        {"recorded_at": when, "economic": 3.0, "social": 0.0},
    ]
    figure = history_figure({"fake-left": rows})
    assert [label.get_text() for label in figure.axes[-1].get_xticklabels()] == ["2026-11-20"]


def test_sessions_minutes_apart_are_a_step_each_and_models_of_one_session_share_it() -> None:
    times = ["2026-11-20T10:00:00+00:00", "2026-11-20T10:02:00+00:00", "2026-11-20T10:05:00+00:00"]
    histories = {
        "fake-left": [{"recorded_at": when, "economic": -4.0, "social": 3.0} for when in times],
        "fake-right": [{"recorded_at": times[-1], "economic": 6.0, "social": -2.0}],  # first seen in the last one
    }
    figure = history_figure(histories)
    economic = figure.axes[0]
    assert economic.get_xlim() == (-0.5, 2.5)
    assert [list(line.get_xdata()) for line in economic.get_lines() if line.get_marker() == "o"] == [[0, 1, 2], [2]]
    # the day once, over the first time
    assert [label.get_text() for label in figure.axes[-1].get_xticklabels()] == ["2026-11-20\n10:00", "10:02", "10:05"]


def test_an_incomplete_session_is_kept_off_the_line_and_labelled() -> None:
    times = ["2026-11-20T10:00:00+00:00", "2026-11-21T10:00:00+00:00", "2026-11-22T10:00:00+00:00"]
    rows = [{"recorded_at": when, "economic": -4.0, "social": 3.0, "complete": True} for when in times]
    rows[1].update(economic=2.0, complete=False, conditions_answered=12, conditions_designed=48)
    figure = history_figure({"fake-left": rows})
    for axes in figure.axes:
        assert [list(line.get_xdata()) for line in axes.get_lines() if line.get_marker() == "o"] == [[0, 2]]
        assert [text.get_text() for text in axes.texts] == ["incomplete: 12/48 conditions"]
        (square,) = [c for c in axes.collections if len(c.get_offsets())]
        assert [list(offset) for offset in square.get_offsets()] == [[1.0, 2.0 if axes is figure.axes[0] else 3.0]]


def test_a_subset_sessions_placement_is_kept_off_the_line_and_labelled() -> None:
    times = ["2026-11-20T10:00:00+00:00", "2026-11-21T10:00:00+00:00", "2026-11-22T10:00:00+00:00"]
    rows = [{"recorded_at": when, "economic": -4.0, "social": 3.0, "complete": True, "subset": ""} for when in times]
    two_statements = StoredSubset.of(DesignSubset(("items E01,S01 of 62",), 24, 744)).column()
    rows[1].update(economic=2.0, subset=two_statements)
    figure = history_figure({"fake-left": rows})
    for axes in figure.axes:
        assert [list(line.get_xdata()) for line in axes.get_lines() if line.get_marker() == "o"] == [[0, 2]]
        assert [text.get_text() for text in axes.texts] == ["subset: 24/744"]
        (diamond,) = [c for c in axes.collections if len(c.get_offsets())]
        assert [list(offset) for offset in diamond.get_offsets()] == [[1.0, 2.0 if axes is figure.axes[0] else 3.0]]


def test_a_model_without_a_placement_is_said_not_drawn() -> None:
    entry = compass_entry(1.0, 1.0)
    entry["details"]["coordinates"]["social"] = {"value": None, "undefined": "no scored answer on this axis"}
    markup = compass_section({"fake-mute": entry}, [])
    assert "No model has a placement on both axes." in markup


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_untrusted_text_in_the_compass_section_stays_text(payload: str) -> None:
    entry = compass_entry(1.0, -1.0)
    entry["details"]["items"] = {payload: {"axis": payload, "answers": {payload: 1}, "coordinate": 0.0}}
    entry["details"]["per_system_prompt"] = {payload: {"economic": 1.0, "social": 1.0}}
    observation = Observation(
        "fake-compass",
        "compass",
        "E01-P1-NEU-t0-forced-r1",
        "E01-P1-NEU-t0-forced",
        payload,
        {"paraphrase": "P1"},
        0.0,
        1,
        [{"role": "user", "content": f"Q\n\n{payload}\n\nAnswer"}],
        payload,
        1,
        1.0,
        None,
        "",
        "economic",
    )
    document = {"session": {}, "models": {}, "instruments": {"compass": {"models": {payload: entry}}}}
    markup = summary_html(document, [observation], {"compass": {}}, shipped_instruments())
    elements = Elements(markup)  # the tags and attributes a browser's parser finds
    assert only_own_scripts(markup)
    assert not elements.named("img")
    assert [(tag, name) for tag, attrs in elements.tags for name in attrs if name.lower().startswith("on")] == []
    assert all(str(attrs.get("id", "")).startswith("snap-") for attrs in elements.named("svg"))
    assert html.escape(payload, quote=True) in markup  # shown, as text
