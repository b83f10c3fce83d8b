"""The results store of compass placements (SQLite)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from snap_bench.instruments.compass.history import append, overall_history, placements_of

DETAILS = {
    "coordinates": {
        "economic": {"value": -2.5, "ci_low": -4.0, "ci_high": -1.0},
        "social": {"value": 1.25, "ci_low": 0.5, "ci_high": 2.0},
    },
    "per_run": {"1": {"economic": -2.0, "social": 1.0}, "2": {"economic": -3.0, "social": 1.5}},
    "per_system_prompt": {"NEU": {"economic": -2.5, "social": None}},
}


def test_a_session_adds_its_overall_run_and_prompt_placements(tmp_path: Path) -> None:
    rows = placements_of("model-a", "compass", "abc123", "2026-11-22T08:00:00+00:00", 96, DETAILS, {"runs": 2})
    assert [(row.scope, row.level) for row in rows] == [
        ("overall", ""),
        ("run", "1"),
        ("run", "2"),
        ("system_prompt", "NEU"),
    ]
    assert (rows[0].economic, rows[0].economic_ci_low, rows[0].social_ci_high) == (-2.5, -4.0, 2.0)
    assert rows[3].social is None
    assert json.loads(rows[0].parameters) == {"runs": 2}
    store = tmp_path / "deep" / "history.sqlite"
    assert append(store, rows) == 4
    with sqlite3.connect(store) as connection:
        assert connection.execute("SELECT COUNT(*) FROM placements").fetchone() == (4,)


def test_the_history_is_oldest_first_per_model_and_bounded(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    for hour in (9, 7, 8):  # appended out of order
        when = f"2026-11-22T0{hour}:00:00+00:00"
        append(store, placements_of("model-a", "compass", "v1", when, 10, DETAILS, {}))
        append(store, placements_of("model-b", "compass", "v1", when, 10, DETAILS, {}))
    history = overall_history(store, "model-a")
    assert [row.recorded_at[11:13] for row in history] == ["07", "08", "09"]
    assert all(row.model == "model-a" and row.scope == "overall" for row in history)
    assert [row.recorded_at[11:13] for row in overall_history(store, "model-a", limit=2)] == ["08", "09"]
    assert overall_history(tmp_path / "missing.sqlite", "model-a") == []
