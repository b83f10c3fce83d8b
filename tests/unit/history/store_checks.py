"""What every backend of the results store must do, written once: the SQLite tests run it on a file, the
PostgreSQL tests on a real server (tests/slow/test_history_postgres.py)."""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from snap_bench.analysis.coverage import Coverage
from snap_bench.analysis.design_subset import DesignSubset
from snap_bench.analysis.metric_tables import Metric
from snap_bench.history import schema
from snap_bench.history.copy import copy_store
from snap_bench.history.database import SchemaTooNew, Store, StoreLike
from snap_bench.history.session_coverage import StoredCoverage
from snap_bench.history.session_subset import StoredSubset
from snap_bench.history.store import Headline, append_new, headlines_of, read_headlines
from snap_bench.instruments.compass.history import Placement, append, overall_history, placements_of
from snap_bench.judging.checks import CheckRecord, threshold_record
from snap_bench.judging.verdicts import Check, Threshold

# Runs SQL on the backend directly, as another program would (``?`` placeholders); returns the rows.
Raw = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
WRITERS = 8
RULE = Threshold("higher", 0.6, 0.7)
METRICS = ("dependability[t0]", "unscored_rate", "contradiction_rate")
DETAILS = {
    "coordinates": {
        "economic": {"value": -2.5, "ci_low": -4.0, "ci_high": -1.0},
        "social": {"value": 1.25, "ci_low": 0.5, "ci_high": 2.0},
    },
    "per_run": {"1": {"economic": -2.0, "social": 1.0}},
}


def record(model: str, metric: str, value: float) -> CheckRecord:
    check = Check(model, metric, RULE.status(value), value, Metric(value, value - 0.05, value + 0.05, 90, 10), RULE, "")
    return threshold_record(f"{model}-{metric}", "profile", check, gated=True)


def session(
    model: str,
    when: str,
    value: float = 0.7,
    session_id: str = "",
    coverage: Coverage | None = None,
    subsets: dict[tuple[str, str], DesignSubset] | None = None,
) -> list[Headline]:
    """One session's headline rows of one model (profile): a figure per metric."""
    checks = [record(model, metric, value) for metric in METRICS]
    verdict = "PASS" if coverage is None or coverage.complete else "INCOMPLETE"
    judged = {(model, "profile"): (verdict, value)}
    covered = {model: coverage} if coverage else None
    return headlines_of(checks, judged, when, "0.2.0+abc", "cfg", session_id, covered, subsets)


def placements(
    model: str,
    when: str,
    session_id: str = "",
    coverage: StoredCoverage | None = None,
    subset: StoredSubset | None = None,
) -> list[Placement]:
    return placements_of(model, "compass", "bank1", when, 48, DETAILS, {"runs": 1}, session_id, coverage, subset)


# The version-1, -2 and -3 columns of each table (a store written by an older snap-bench).
V1_COLUMNS = {table: columns[: columns.index("session")] for table, columns in schema.COLUMNS.items()}
V2_COLUMNS = {table: (*columns, "session") for table, columns in V1_COLUMNS.items()}
V3_COLUMNS = {table: (*columns, *schema.COVERAGE_COLUMNS) for table, columns in V2_COLUMNS.items()}


def insert_old(raw: Raw, table: str, row: Headline | Placement, columns: Sequence[str]) -> None:
    """Insert ``row`` as an older snap-bench would have: only the columns its schema had."""
    raw(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        [dict(zip(schema.COLUMNS[table], row.values(), strict=True))[column] for column in columns],
    )  # (as stored: PostgreSQL takes no Python bool into the INTEGER coverage columns)


def when(minute: int) -> str:
    return f"2026-11-24T10:{minute:02d}:00+00:00"


def race(store: StoreLike, write: Callable[[Store, int], int]) -> list[int]:
    """``WRITERS`` writers, each on its own connection, released at once; what each wrote."""
    barrier = threading.Barrier(WRITERS)

    def writer(index: int) -> int:
        with Store(str(store), session=f"writer-{index}") as own:
            own.version()  # connected: the race is on the transactions, not on connecting
            barrier.wait(timeout=30)
            return write(own, index)

    with ThreadPoolExecutor(WRITERS) as pool:
        return list(pool.map(writer, range(WRITERS)))


def check_concurrent_writers(store: StoreLike) -> None:
    """Identical results written at once store one set; different ones all land; every placement lands."""
    identical = race(store, lambda own, i: append_new(own, session("model-a", when(i), session_id=own.session)))
    assert sorted(identical) == [0] * (WRITERS - 1) + [len(METRICS)]
    rows = read_headlines(store, ["model-a"])
    assert len(rows) == len(METRICS)
    assert len({r.session for r in rows}) == 1

    different = race(store, lambda own, i: append_new(own, session(f"model-{i}", when(i), session_id=own.session)))
    assert different == [len(METRICS)] * WRITERS
    stored = Counter(r.model for r in read_headlines(store))
    assert stored == {"model-a": len(METRICS), **{f"model-{i}": len(METRICS) for i in range(WRITERS)}}

    compass = race(store, lambda own, i: append(own, placements("model-c", when(i), own.session)))
    assert compass == [2] * WRITERS  # overall and one run, per session
    assert len(overall_history(store, "model-c")) == WRITERS


def check_migration(store: StoreLike, backend: str, raw: Raw) -> None:
    """A store written before the schema had a version is upgraded in place; a newer one is refused."""
    for statement in schema.statements(1, backend):
        raw(statement, ())
    old = session("model-old", when(1))[0]
    insert_old(raw, "headlines", old, V1_COLUMNS["headlines"])
    old_placement = placements("model-old", when(1))[0]
    insert_old(raw, "placements", old_placement, V1_COLUMNS["placements"])
    with Store(str(store)) as opened:
        assert opened.version() == 1
    # read: upgraded first, the row kept as it was (session '', coverage unknown)
    assert read_headlines(store) == [old]
    assert old.coverage == StoredCoverage()
    with Store(str(store)) as opened:
        assert opened.version() == schema.CURRENT
    assert overall_history(store, "model-old") == [old_placement]
    assert append_new(store, session("model-old", when(2), 0.8, "new-session")) == len(METRICS)
    assert [r.session for r in read_headlines(store)] == ["", *["new-session"] * len(METRICS)]

    raw(f"UPDATE {schema.VERSION_TABLE} SET version = ?", (schema.CURRENT + 1,))
    with pytest.raises(SchemaTooNew, match=r"newer snap-bench .* Fix: upgrade snap-bench"):
        read_headlines(store)
    with pytest.raises(SchemaTooNew):
        append_new(store, session("model-old", when(3), 0.9))
    assert raw("SELECT COUNT(*) FROM headlines", ()) == [(1 + len(METRICS),)]


def fill(store: StoreLike) -> None:
    """Two sessions of two models, with compass placements; model-b's second session incomplete."""
    for minute, value in ((1, 0.6), (2, 0.7)):
        for model in ("model-a", "model-b"):
            covered = Coverage(model, 20, 12 if (model, minute) == ("model-b", 2) else 20, {})
            append_new(store, session(model, when(minute), value, f"s{minute}", covered))
            append(store, placements(model, when(minute), f"s{minute}", StoredCoverage.of(covered)))


def contents(store: StoreLike) -> tuple[Counter[Headline], Counter[Placement]]:
    headlines = Counter(read_headlines(store))
    compass = Counter(p for model in ("model-a", "model-b", "model-z") for p in overall_history(store, model))
    return headlines, compass


def check_copy(source: StoreLike, target: StoreLike) -> None:
    """Copied once, then again (nothing added); a row only the target has is copied back."""
    fill(source)
    assert {r.coverage.label() for r in read_headlines(source)} == {"", "incomplete: 12/20 conditions"}
    first = copy_store(source, target)
    assert [(c.table, c.added, c.present) for c in first] == [("headlines", 12, 0), ("placements", 8, 0)]
    assert contents(target) == contents(source)
    again = copy_store(source, target)
    assert [(c.table, c.added, c.present) for c in again] == [("headlines", 0, 12), ("placements", 0, 8)]
    append_new(target, session("model-z", when(5), 0.5, "only-there"))
    back = copy_store(target, source)
    assert [(c.table, c.added) for c in back] == [("headlines", len(METRICS)), ("placements", 0)]
    assert contents(target) == contents(source)
    # the newest stored result of model-a is the same in both: a replay of it adds nothing to either
    assert append_new(target, session("model-a", when(9), 0.7, "replay")) == 0


def check_upgrade_from_version_2(store: StoreLike, backend: str, raw: Raw) -> None:
    """A store of version 2 gains the coverage columns: its rows are kept, unknown, but those its own verdicts
    show incomplete (and the compass placements of that session and model), which are marked incomplete."""
    for version in (1, 2):
        for statement in schema.statements(version, backend):
            raw(statement, ())
    complete = session("model-a", when(1), 0.7, "s1")
    stale = [
        dataclasses.replace(row, verdict="INCOMPLETE", composite=None) for row in session("model-a", when(2), 0.0, "s2")
    ]
    for row in (*complete, *stale):
        insert_old(raw, "headlines", row, V2_COLUMNS["headlines"])
    compass = [*placements("model-a", when(1), "s1"), *placements("model-a", when(2), "s2")]
    compass += placements("model-b", when(2), "s2")  # another model of the incomplete session: complete for all we know
    for placement in compass:
        insert_old(raw, "placements", placement, V2_COLUMNS["placements"])
    with Store(str(store)) as opened:
        assert opened.version() == 2
    stored = read_headlines(store)
    with Store(str(store)) as opened:
        assert opened.version() == schema.CURRENT == 4
    assert [dataclasses.replace(row, complete=None) for row in stored] == [*complete, *stale]  # kept
    assert [row.complete for row in stored] == [None] * len(METRICS) + [False] * len(METRICS)
    assert {row.coverage.label() for row in stored} == {"", "incomplete: coverage unknown"}
    assert [p.complete for p in overall_history(store, "model-a")] == [None, False]
    assert [p.complete for p in overall_history(store, "model-b")] == [None]


def check_incomplete_round_trip(store: StoreLike) -> None:
    """An incomplete session is stored with its coverage and read back as it was written; a complete one too."""
    measured = Coverage("model-a", 18, 18, {})
    stale = Coverage("model-a", 1620, 648, {"no recording": 972})
    rows = [*session("model-a", when(1), 0.083, "s1", measured), *session("model-a", when(2), 0.0, "s2", stale)]
    assert append_new(store, rows) == 2 * len(METRICS)
    stored = read_headlines(store)
    assert stored == rows
    assert [(r.complete, r.conditions_answered, r.conditions_designed) for r in stored] == [
        *[(True, 18, 18)] * len(METRICS),
        *[(False, 648, 1620)] * len(METRICS),
    ]
    assert stored[-1].coverage.label() == "incomplete: 648/1620 conditions"
    assert stored[-1].verdict == "INCOMPLETE"
    append(store, placements("model-a", when(1), "s1", StoredCoverage.of(measured)))
    append(store, placements("model-a", when(2), "s2", StoredCoverage.of(stale)))
    history = overall_history(store, "model-a")
    assert [(p.complete, p.conditions_answered, p.conditions_designed) for p in history] == [
        (True, 18, 18),
        (False, 648, 1620),
    ]
    assert history == [
        placements("model-a", when(minute), f"s{minute}", StoredCoverage.of(c))[0]
        for minute, c in ((1, measured), (2, stale))
    ]


# Two items of 25, as ``--snap-items=M01,M02`` asks of the profile.
TWO_ITEMS = DesignSubset(("items M01,M02 of 25",), 120, 1620)


def check_subset_round_trip(store: StoreLike) -> None:
    """A session that asked a subset of the design is stored as one, with what it left out, and read back as it
    was written; a session that asked the whole design is stored as whole. Its figures, equal to the whole
    design's before it, are no replay of them: stored."""
    whole = session("model-a", when(1), 0.7, "s1", subsets={})
    narrowed = session("model-a", when(2), 0.7, "s2", subsets={("model-a", "profile"): TWO_ITEMS})
    assert append_new(store, whole) == len(METRICS)
    assert append_new(store, narrowed) == len(METRICS)
    stored = read_headlines(store)
    assert stored == [*whole, *narrowed]
    assert [(r.design.known, r.design.subset) for r in stored] == [
        *[(True, None)] * len(METRICS),
        *[(True, TWO_ITEMS)] * len(METRICS),
    ]
    assert stored[-1].design.label() == "subset: items M01,M02 of 25; 120 of 1620 conditions"
    assert stored[-1].coverage == StoredCoverage()  # a subset is not an incomplete session
    append(store, placements("model-a", when(1), "s1", subset=StoredSubset.of(None)))
    append(store, placements("model-a", when(2), "s2", subset=StoredSubset.of(TWO_ITEMS)))
    history = overall_history(store, "model-a")
    assert [p.design for p in history] == [StoredSubset(True), StoredSubset(True, TWO_ITEMS)]


def check_upgrade_from_version_3(store: StoreLike, backend: str, raw: Raw) -> None:
    """A store of version 3 gains the subset column: its rows are kept, their design not known (drawn as before)."""
    for version in (1, 2, 3):
        for statement in schema.statements(version, backend):
            raw(statement, ())
        if version > 2:
            raw(schema.set_version(version), ())
    old = session("model-a", when(1), 0.7, "s1", Coverage("model-a", 20, 20, {}))
    for row in old:
        insert_old(raw, "headlines", row, V3_COLUMNS["headlines"])
    old_placement = placements("model-a", when(1), "s1", StoredCoverage(True, 20, 20))[0]
    insert_old(raw, "placements", old_placement, V3_COLUMNS["placements"])
    with Store(str(store)) as opened:
        assert opened.version() == 3
    assert read_headlines(store) == old  # kept, with their coverage; the subset NULL
    with Store(str(store)) as opened:
        assert opened.version() == schema.CURRENT == 4
    assert {row.design for row in read_headlines(store)} == {StoredSubset()}  # not known
    assert overall_history(store, "model-a") == [old_placement]
    narrowed = session("model-a", when(2), 0.7, "s2", subsets={("model-a", "profile"): TWO_ITEMS})
    assert append_new(store, narrowed) == len(METRICS)
    assert [row.design.is_subset for row in read_headlines(store)] == [False] * len(METRICS) + [True] * len(METRICS)
