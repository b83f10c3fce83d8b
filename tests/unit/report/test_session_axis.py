"""The x axis of the charts over stored sessions: a step per session, never a date axis autoscaled over years."""

from __future__ import annotations

from snap_bench.report.charts import new_figure
from snap_bench.report.session_axis import MOST_LABELS, session_labels, session_order, set_session_axis


def test_the_labels_are_as_short_as_still_tells_the_sessions_apart() -> None:
    assert session_labels(["2026-11-20T10:00:00+00:00", "2026-11-22T10:00:00+00:00"]) == ["2026-11-20", "2026-11-22"]
    assert session_labels(["2026-11-20T10:00:00+00:00", "2026-11-20T10:03:00+00:00"]) == [
        "2026-11-20 10:00",
        "2026-11-20 10:03",
    ]
    assert session_labels(["2026-11-20T10:00:01+00:00", "2026-11-20T10:00:09+00:00"]) == [
        "2026-11-20 10:00:01",
        "2026-11-20 10:00:09",
    ]
    assert session_labels(["hand-edited"]) == ["hand-edited"]


def test_one_session_spans_one_step_labelled_with_its_date() -> None:
    axes = new_figure(3, 2).add_subplot()
    set_session_axis(axes, ["2026-11-20T10:00:00+00:00"])
    assert axes.get_xlim() == (-0.5, 0.5)
    assert [label.get_text() for label in axes.get_xticklabels()] == ["2026-11-20"]


def test_many_sessions_label_at_most_a_few_the_newest_always() -> None:
    sessions = session_order(f"2026-11-{day:02d}T10:00:00+00:00" for day in range(1, 21))
    axes = new_figure(3, 2).add_subplot()
    set_session_axis(axes, sessions)
    assert axes.get_xlim() == (-0.5, 19.5)
    labels = [label.get_text() for label in axes.get_xticklabels()]
    assert len(labels) <= MOST_LABELS
    assert labels[-1] == "2026-11-20"
