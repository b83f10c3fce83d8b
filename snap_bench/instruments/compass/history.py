"""The results store: every session appends each model's compass placement, so it can be followed over time.

The table ``placements`` of the results store (SQLite or PostgreSQL, :mod:`snap_bench.history.database`,
which holds its schema). A row is one placement of one model in one session: the overall coordinates with
their intervals, or the coordinates of one run or one system prompt (``scope`` and ``level`` say which).
Each row carries the item-bank version and the session's parameters as JSON, so placements from different
banks or designs are never mixed up unknowingly, and the session's coverage of the model's design
(:mod:`snap_bench.history.session_coverage`), so an incomplete session's placement is never charted as an
ordinary one, and what of the design the session set out to ask (:mod:`snap_bench.history.session_subset`), so a
subset's placement is never charted as the whole design's. Every session adds its rows (the history chart has a step
per session), in one transaction under the store's write lock; an unreachable or unwritable store is
reported, never fatal.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from snap_bench.history.database import StoreLike, insert, opened
from snap_bench.history.schema import COLUMNS as TABLE_COLUMNS
from snap_bench.history.schema import COVERAGE_COLUMNS
from snap_bench.history.session_coverage import StoredCoverage
from snap_bench.history.session_subset import StoredSubset

# The placements table's columns, as the store's schema declares them; ``session`` is stored too, but is not
# part of what a placement says (left out of analysis.json's history).
STORED = TABLE_COLUMNS["placements"]
COLUMNS = tuple(column for column in STORED if column != "session")


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
    session: str = ""  # the id shared by one session's rows ('' before the store kept one)
    # The session's coverage of the model's design (None: not known, stored before the store kept it).
    complete: bool | None = None
    conditions_answered: int | None = None
    conditions_designed: int | None = None
    # What of the model's design the session set out to ask, as stored (StoredSubset.column: None not known).
    subset: str | None = None

    @property
    def coverage(self) -> StoredCoverage:
        return StoredCoverage(self.complete, self.conditions_answered, self.conditions_designed)

    @property
    def design(self) -> StoredSubset:
        return StoredSubset.stored(self.subset)

    def to_dict(self) -> dict[str, Any]:
        return {column: getattr(self, column) for column in COLUMNS}

    def values(self) -> tuple[Any, ...]:
        """The row as stored (the flag an integer)."""
        return (*(getattr(self, column) for column in STORED[:_COVERAGE_AT]), *self.coverage.columns(), self.subset)

    @classmethod
    def stored(cls, row: tuple[Any, ...]) -> Placement:
        """A row as a backend returns it, in :data:`STORED` order."""
        covered = StoredCoverage.stored(*row[_COVERAGE_AT:-1])
        return cls(*[*row[:_COVERAGE_AT], covered.complete, covered.answered, covered.designed, row[-1]])


# Where the coverage columns begin in a row (the subset column follows them).
_COVERAGE_AT = -len(COVERAGE_COLUMNS) - 1


def placements_of(
    model: str,
    instrument: str,
    version: str,
    recorded_at: str,
    n_observations: int,
    details: Mapping[str, Any],
    parameters: Mapping[str, Any],
    session: str = "",
    coverage: StoredCoverage | None = None,
    subset: StoredSubset | None = None,
) -> list[Placement]:
    """The rows one model's analysis adds: overall (with intervals), then per run and per system prompt, each
    with the session's coverage of the model and what of its design the session set out to ask."""
    covered = coverage or StoredCoverage()
    kept = (covered.complete, covered.answered, covered.designed, (subset or StoredSubset()).column())
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
            session,
            *kept,
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
                    session,
                    *kept,
                )
            )
    return rows


def append(store: StoreLike, placements: Iterable[Placement]) -> int:
    """Add the rows in one transaction (creating the store); how many were written."""
    rows = [p.values() for p in placements]
    with opened(store) as open_store, open_store.writing() as database:
        database.executemany(insert("placements", STORED), rows)
    return len(rows)


def overall_history(store: StoreLike, model: str, instrument: str = "compass", limit: int = 200) -> list[Placement]:
    """A model's overall placements, oldest first (at most the newest ``limit``); [] without a store."""
    with opened(store) as open_store:
        rows = open_store.read(
            f"SELECT {', '.join(STORED)} FROM placements WHERE model = ? AND instrument = ? AND scope = 'overall' "
            "ORDER BY recorded_at DESC, id DESC LIMIT ?",
            (model, instrument, limit),
        )
    return [Placement.stored(row) for row in rows][::-1]
