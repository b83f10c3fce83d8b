"""The results store's data layer on SQLite: the schema's version and its upgrade, concurrent writers, the copy
(the same checks run on a real PostgreSQL server in tests/slow/test_history_postgres.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from snap_bench.history import schema
from snap_bench.history.database import Store, StoreError
from snap_bench.history.store import COLUMNS, append_new, read_headlines
from snap_bench.instruments.compass.history import STORED
from tests.unit.history.store_checks import (
    check_concurrent_writers,
    check_copy,
    check_incomplete_round_trip,
    check_migration,
    check_subset_round_trip,
    check_upgrade_from_version_2,
    check_upgrade_from_version_3,
    session,
    when,
)


def raw_sqlite(path: Path) -> Any:
    def run(sql: str, parameters: Sequence[Any]) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(path)) as connection, connection:
            return connection.execute(sql, tuple(parameters)).fetchall()

    return run


def test_the_columns_the_code_writes_are_the_schemas() -> None:
    assert schema.COLUMNS == {"headlines": COLUMNS, "placements": STORED}


def test_a_new_store_carries_the_current_version(tmp_path: Path) -> None:
    store = tmp_path / "deep" / "history.sqlite"
    assert read_headlines(store) == []
    assert not store.exists()  # reading a store that is not there creates nothing
    append_new(store, session("model-a", when(1)))
    assert raw_sqlite(store)(f"SELECT version FROM {schema.VERSION_TABLE}", ()) == [(schema.CURRENT,)]
    assert Store(store).version() == schema.CURRENT


def test_a_store_of_the_version_before_is_upgraded_in_place_and_a_newer_one_refused(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    check_migration(store, "sqlite", raw_sqlite(store))


def test_a_store_of_version_2_keeps_its_rows_and_marks_those_judged_incomplete(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    check_upgrade_from_version_2(store, "sqlite", raw_sqlite(store))


def test_an_incomplete_session_is_stored_with_its_coverage(tmp_path: Path) -> None:
    check_incomplete_round_trip(tmp_path / "history.sqlite")


def test_a_store_of_version_3_keeps_its_rows_their_design_not_known(tmp_path: Path) -> None:
    store = tmp_path / "history.sqlite"
    check_upgrade_from_version_3(store, "sqlite", raw_sqlite(store))


def test_a_subset_session_is_stored_as_a_subset_with_what_it_left_out(tmp_path: Path) -> None:
    check_subset_round_trip(tmp_path / "history.sqlite")


def test_writers_at_once_lose_nothing_and_duplicate_nothing(tmp_path: Path) -> None:
    check_concurrent_writers(tmp_path / "history.sqlite")


def test_a_copy_adds_what_the_target_lacks_once(tmp_path: Path) -> None:
    check_copy(tmp_path / "a.sqlite", tmp_path / "b.sqlite")


def test_an_unwritable_store_is_a_store_error_and_fails_at_once_after(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store's folder should be", encoding="utf-8")
    store = Store(blocker / "history.sqlite", session="x")
    with pytest.raises(StoreError, match=r"not-a-folder/history\.sqlite: ") as first:
        append_new(store, session("model-a", when(1)))
    with pytest.raises(StoreError) as again:  # not tried again: the same error
        append_new(store, session("model-b", when(1)))
    assert again.value is first.value
    assert read_headlines(store) == []  # nothing there to read


def test_a_postgresql_store_without_its_driver_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("snap_bench.history.database.postgres_driver_installed", lambda: False)
    with pytest.raises(StoreError, match=r"driver is not installed\. Fix: pip install 'snap-bench\[postgres\]'"):
        Store("postgresql://snap@127.0.0.1:1/history").version()
