"""Where the results store is: a path or a postgresql:// URL, never with a password in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.history.address import PasswordNotSet, StoreAddress, StoreAddressError, redacted, store_address

SECRET = "hunter2-do-not-print"


def test_a_path_is_a_sqlite_file_relative_to_its_base(tmp_path: Path) -> None:
    assert store_address("reports/history.sqlite", tmp_path) == StoreAddress(path=tmp_path / "reports/history.sqlite")
    assert store_address(tmp_path / "h.sqlite").path == tmp_path / "h.sqlite"
    assert store_address("runs:2.sqlite", tmp_path).path == tmp_path / "runs:2.sqlite"  # a colon in a file name


@pytest.mark.parametrize("url", ["postgresql://snap@db:5432/history", "postgres://snap@localhost/history"])
def test_a_postgresql_url_is_kept_as_given(url: str) -> None:
    address = store_address(url)
    assert address.is_postgres
    assert str(address) == url


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        ("postgress://snap@db/history", "did you mean postgresql://?"),
        ("postgresq://snap@db/history", "did you mean postgresql://?"),
        ("sqlite:///reports/history.sqlite", "give the SQLite file's path itself"),
        ("postgresql+psycopg://snap@db/history", "drop the driver suffix"),
        ("mysql://snap@db/history", "write postgresql://USER@HOST:PORT/DATABASE"),
        ("postgresql:snap@db/history", "write it as postgresql://USER@HOST:PORT/DATABASE"),
    ],
)
def test_a_misspelt_scheme_is_a_usage_error_naming_the_fix(value: str, fix: str) -> None:
    with pytest.raises(StoreAddressError, match="Fix") as error:
        store_address(value)
    assert fix in str(error.value)
    assert str(error.value).startswith("--snap-history: ")


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://snap:{SECRET}@db:5432/history",
        f"postgress://snap:{SECRET}@db:5432/history",  # a typo too: the password is still not shown
        f"postgresql://snap@db:5432/history?password={SECRET}&sslmode=require",
    ],
)
def test_a_password_in_the_url_is_refused_without_being_repeated(url: str) -> None:
    with pytest.raises(StoreAddressError) as error:
        store_address(url, source="ini snap_history")
    assert SECRET not in str(error.value)
    assert "***" in str(error.value)
    assert "Fix" in str(error.value)


def test_the_password_comes_from_the_variable_the_url_names(monkeypatch: pytest.MonkeyPatch) -> None:
    address = store_address("postgresql://snap@db:5432/history?sslmode=require&password_env=SNAP_DB_PASSWORD")
    monkeypatch.delenv("SNAP_DB_PASSWORD", raising=False)
    with pytest.raises(PasswordNotSet, match="SNAP_DB_PASSWORD"):
        address.connection_arguments()
    monkeypatch.setenv("SNAP_DB_PASSWORD", SECRET)
    conninfo, arguments = address.connection_arguments()
    assert conninfo == "postgresql://snap@db:5432/history?sslmode=require"  # libpq never sees password_env
    assert arguments["password"] == SECRET
    assert arguments["connect_timeout"] == "10"
    assert address.scrub(f"failed for {SECRET}") == "failed for ***"
    assert SECRET not in str(address)
    with pytest.raises(StoreAddressError, match="must name an environment variable"):
        store_address("postgresql://snap@db/history?password_env=not-a-name")


def test_a_url_setting_its_own_connect_timeout_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", SECRET)
    address = store_address("postgresql://snap@db/history?connect_timeout=3")
    _, arguments = address.connection_arguments()
    assert "connect_timeout" not in arguments
    assert "password" not in arguments  # libpq reads PGPASSWORD itself
    assert address.scrub(SECRET) == "***"


def test_redaction() -> None:
    assert redacted(f"postgresql://snap:{SECRET}@db/x?password={SECRET}") == "postgresql://snap:***@db/x?password=***"
