"""The results store: every session appends each model's compass placement, so it can be followed over time.

SQLite (standard library), one table. A row is one placement of one model in one session: the
overall coordinates with their intervals, or the coordinates of one run or one system prompt
(``scope`` and ``level`` say which). Each row carries the item-bank version and the session's
parameters as JSON, so placements from different banks or designs are never mixed up unknowingly.
Writes are one transaction per session; a locked or unwritable store is reported, never fatal.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS placements (
    id INTEGER PRIMARY KEY,
    recorded_at TEXT NOT NULL,
    model TEXT NOT NULL,
    instrument TEXT NOT NULL,
    item_bank_version TEXT NOT NULL,
    scope TEXT NOT NULL,
    level TEXT NOT NULL,
    economic REAL,
    economic_ci_low REAL,
    economic_ci_high REAL,
    social REAL,
    social_ci_low REAL,
    social_ci_high REAL,
    n_observations INTEGER NOT NULL,
    parameters TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS placements_by_model ON placements (model, instrument, scope, recorded_at);
"""
COLUMNS = (
    "recorded_at",
    "model",
    "instrument",
    "item_bank_version",
    "scope",
    "level",
    "economic",
    "economic_ci_low",
    "economic_ci_high",
    "social",
    "social_ci_low",
    "social_ci_high",
    "n_observations",
    "parameters",
)


@dataclass(frozen=True)
class Placement:
    """One row of the store."""

    recorded_at: str
    model: str
    instrument: str
    item_bank_version: str
    scope: str  # "overall", "run" or "system_prompt"
    level: str  # "" for overall, else the run number or the prompt's level
    economic: float | None
    economic_ci_low: float | None
    economic_ci_high: float | None
    social: float | None
    social_ci_low: float | None
    social_ci_high: float | None
    n_observations: int
    parameters: str

    def to_dict(self) -> dict[str, Any]:
        return {column: getattr(self, column) for column in COLUMNS}


def placements_of(
    model: str,
    instrument: str,
    version: str,
    recorded_at: str,
    n_observations: int,
    details: Mapping[str, Any],
    parameters: Mapping[str, Any],
) -> list[Placement]:
    """The rows one model's analysis adds: overall (with intervals), then per run and per system prompt."""
    encoded = json.dumps(parameters, sort_keys=True, default=str)
    coordinates = details.get("coordinates", {})

    def figure(axis: str, key: str) -> float | None:
        value = coordinates.get(axis, {}).get(key)
        return None if value is None else float(value)

    rows = [
        Placement(
            recorded_at,
            model,
            instrument,
            version,
            "overall",
            "",
            figure("economic", "value"),
            figure("economic", "ci_low"),
            figure("economic", "ci_high"),
            figure("social", "value"),
            figure("social", "ci_low"),
            figure("social", "ci_high"),
            n_observations,
            encoded,
        )
    ]
    for scope, key in (("run", "per_run"), ("system_prompt", "per_system_prompt")):
        for level, axes in sorted(details.get(key, {}).items()):
            rows.append(
                Placement(
                    recorded_at,
                    model,
                    instrument,
                    version,
                    scope,
                    str(level),
                    axes.get("economic"),
                    None,
                    None,
                    axes.get("social"),
                    None,
                    None,
                    n_observations,
                    encoded,
                )
            )
    return rows


def append(path: Path, placements: Iterable[Placement]) -> int:
    """Add the rows in one transaction (creating the store); how many were written."""
    rows = [tuple(getattr(p, column) for column in COLUMNS) for p in placements]
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, timeout=30)) as connection, connection:
        connection.executescript(SCHEMA)
        connection.executemany(
            f"INSERT INTO placements ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})", rows
        )
    return len(rows)


def overall_history(path: Path, model: str, instrument: str = "compass", limit: int = 200) -> list[Placement]:
    """A model's overall placements, oldest first (at most the newest ``limit``); [] without a store."""
    if not path.is_file():
        return []
    with closing(sqlite3.connect(path, timeout=30)) as connection:
        connection.executescript(SCHEMA)
        cursor = connection.execute(
            f"SELECT {', '.join(COLUMNS)} FROM placements WHERE model = ? AND instrument = ? AND scope = 'overall' "
            "ORDER BY recorded_at DESC, id DESC LIMIT ?",
            (model, instrument, limit),
        )
        rows = [Placement(*row) for row in cursor.fetchall()]
    return rows[::-1]
