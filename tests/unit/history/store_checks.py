"""What every backend of the results store must do, written once: the SQLite tests run it on a file, the
PostgreSQL tests on a real server (tests/scenarios/test_history_postgres.py)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from snap_bench.analysis.metric_tables import Metric
from snap_bench.history import schema
from snap_bench.history.copy import copy_store
from snap_bench.history.database import SchemaTooNew, Store, StoreLike
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


def session(model: str, when: str, value: float = 0.7, session_id: str = "") -> list[Headline]:
    """One session's headline rows of one model (profile): a figure per metric."""
    checks = [record(model, metric, value) for metric in METRICS]
    return headlines_of(checks, {(model, "profile"): ("PASS", value)}, when, "0.2.0+abc", "cfg", session_id)


def placements(model: str, when: str, session_id: str = "") -> list[Placement]:
    return placements_of(model, "compass", "bank1", when, 48, DETAILS, {"runs": 1}, session_id)


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
    raw(
        "INSERT INTO headlines (recorded_at, model, instrument, metric, value, ci_low, ci_high, n, n_designed, "
        "verdict, composite, code_version, config_digest, result_digest) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [getattr(old, column) for column in schema.COLUMNS["headlines"][:-1]],
    )
    old_placement = placements("model-old", when(1))[0]
    raw(
        "INSERT INTO placements (recorded_at, model, instrument, item_bank_version, scope, level, economic, "
        "economic_ci_low, economic_ci_high, social, social_ci_low, social_ci_high, n_observations, parameters) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [getattr(old_placement, column) for column in schema.COLUMNS["placements"][:-1]],
    )
    with Store(str(store)) as opened:
        assert opened.version() == 1
    assert read_headlines(store) == [old]  # read: upgraded first, the row kept as it was (session '')
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
    """Two sessions of two models, with compass placements."""
    for minute, value in ((1, 0.6), (2, 0.7)):
        for model in ("model-a", "model-b"):
            append_new(store, session(model, when(minute), value, f"s{minute}"))
            append(store, placements(model, when(minute), f"s{minute}"))


def contents(store: StoreLike) -> tuple[Counter[Headline], Counter[Placement]]:
    headlines = Counter(read_headlines(store))
    compass = Counter(p for model in ("model-a", "model-b", "model-z") for p in overall_history(store, model))
    return headlines, compass


def check_copy(source: StoreLike, target: StoreLike) -> None:
    """Copied once, then again (nothing added); a row only the target has is copied back."""
    fill(source)
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
