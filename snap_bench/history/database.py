"""The one data layer of the results store: SQLite (the standard library's sqlite3) or PostgreSQL (psycopg 3).

Both backends take the same SQL (``?`` placeholders, rewritten for psycopg) through a :class:`Store`: one
connection, opened on first use, its schema checked and brought to the current version
(:mod:`snap_bench.history.schema`) under the store's write lock. Every write is a transaction holding that
lock, so concurrent sessions are serialised: what a writer reads inside :meth:`Store.writing` (the latest
stored result) is still the latest when it commits. SQLite: ``BEGIN IMMEDIATE`` (the file's write lock,
waited for up to 30 s). PostgreSQL: a transaction-scoped advisory lock (``pg_advisory_xact_lock``), which
also covers creating the tables in an empty database; other sessions' reads are never blocked.

Every failure (unreachable, locked, unwritable, a schema too new) is a :class:`StoreError` whose message
names the store as given and holds no password.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Protocol

from snap_bench.history import schema
from snap_bench.history.address import PasswordNotSet, StoreAddress, store_address

# The advisory lock's key: any writer of a snap-bench store in this database holds it ("snaphist").
LOCK_KEY = int.from_bytes(b"snaphist", "big") >> 1
# Seconds a writer waits for another's lock before giving up (the store is then not updated, never the run lost).
LOCK_WAIT_S = 60
INSTALL_DRIVER = "pip install 'snap-bench[postgres]'"


class StoreError(Exception):
    """The store could not be reached, read or written; the message names it and holds no password."""


class SchemaTooNew(StoreError):
    """The store was written by a newer snap-bench: its schema version is above :data:`schema.CURRENT`."""


def postgres_driver_installed() -> bool:
    return importlib.util.find_spec("psycopg") is not None


class _Backend(Protocol):
    name: str

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def tables(self) -> set[str]: ...

    def close(self) -> None: ...


class _Sqlite:
    name = "sqlite"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit: the transactions are begun here, as BEGIN IMMEDIATE (the write lock from the start).
        self.connection = sqlite3.connect(path, timeout=30, isolation_level=None)

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.connection.execute(sql, tuple(parameters)).fetchall()

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.connection.executemany(sql, [tuple(row) for row in rows])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def tables(self) -> set[str]:
        return {name for (name,) in self.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def close(self) -> None:
        self.connection.close()


class _Postgres:
    name = "postgresql"

    def __init__(self, address: StoreAddress) -> None:
        import psycopg
        from psycopg.conninfo import make_conninfo

        conninfo, arguments = address.connection_arguments()
        self.connection = psycopg.connect(make_conninfo(conninfo, **arguments), autocommit=True)
        # Each statement sees what was committed before it began, so the read after taking the lock sees the
        # rows of the writer that held it last (a server defaulting to REPEATABLE READ would hide them).
        self.connection.isolation_level = psycopg.IsolationLevel.READ_COMMITTED

    @staticmethod
    def _sql(sql: str) -> str:
        return sql.replace("?", "%s")  # (no statement of the store holds a literal ? or %)

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self.connection.execute(self._sql(sql), tuple(parameters) or None)
        return cursor.fetchall() if cursor.description is not None else []

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.connection.cursor() as cursor:
            cursor.executemany(self._sql(sql), [tuple(row) for row in rows])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.connection.transaction():
            self.connection.execute(f"SET LOCAL lock_timeout = '{LOCK_WAIT_S}s'")
            self.connection.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            yield

    def tables(self) -> set[str]:
        rows = self.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
        )
        return {name for (name,) in rows}

    def close(self) -> None:
        self.connection.close()


class Store:
    """One results store, opened on first use and closed by ``with`` or :meth:`close`.

    ``session`` is the id of the session writing through it (stored with its rows). A store that could not
    be opened fails every later use at once with the same error (one timeout, one message per session).
    """

    def __init__(self, address: StoreAddress | Path | str, session: str = "") -> None:
        self.address = address if isinstance(address, StoreAddress) else store_address(address)
        self.session = session
        self._backend: _Backend | None = None
        self._failure: StoreError | None = None
        self._empty = False  # a store with no tables yet, opened to read: nothing to read, nothing created

    def __str__(self) -> str:
        return str(self.address)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self._backend is not None:
            backend, self._backend = self._backend, None
            with contextlib.suppress(Exception):  # closing a broken connection: nothing left to lose
                backend.close()

    def exists(self) -> bool:
        """False for a SQLite file not yet written (reading it must not create it); a URL is assumed to exist."""
        return self.address.path is None or self.address.path.is_file()

    def read(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query; [] from a store that holds nothing yet."""
        if not self.exists():
            return []
        with self._errors():
            backend = self._open(create=False)
            return [] if self._empty else backend.execute(sql, parameters)

    @contextmanager
    def writing(self) -> Iterator[_Writer]:
        """A transaction holding the store's write lock (created and brought to the current schema first)."""
        with self._errors():
            backend = self._open(create=True)
            with backend.transaction():
                yield _Writer(backend)

    def version(self) -> int:
        """The schema version of the store as it is (0: no tables yet)."""
        if not self.exists():
            return 0
        with self._errors():
            return _version(self._connect())

    # -- the connection and the schema ---------------------------------------------------------------

    def _connect(self) -> _Backend:
        if self._failure is not None:
            raise self._failure
        if self._backend is None:
            if self.address.path is not None:
                self._backend = _Sqlite(self.address.path)
            else:
                if not postgres_driver_installed():
                    raise StoreError(f"the PostgreSQL driver is not installed. Fix: {INSTALL_DRIVER}")
                self._backend = _Postgres(self.address)
        return self._backend

    def _open(self, create: bool) -> _Backend:
        backend = self._connect()
        if self._empty and not create:
            return backend
        version = _version(backend)
        _refuse_newer(version, self.address)
        if version == schema.CURRENT:
            self._empty = False
            return backend
        if version == 0 and not create:
            self._empty = True
            return backend
        with backend.transaction():
            version = _version(backend)  # again under the lock: another writer may have just upgraded it
            _refuse_newer(version, self.address)
            for step in range(version + 1, schema.CURRENT + 1):
                for statement in schema.statements(step, backend.name):
                    backend.execute(statement)
                if step > 2:
                    backend.execute(schema.set_version(step))
        self._empty = False
        return backend

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Any driver or file error as a StoreError naming the store, without a password; a failure to
        connect is remembered, so that the session's later uses fail at once."""
        errors: tuple[type[BaseException], ...] = (sqlite3.Error, OSError, PasswordNotSet)
        if self.address.is_postgres and postgres_driver_installed():
            import psycopg

            errors = (*errors, psycopg.Error)
        try:
            yield
        except StoreError:
            raise
        except errors as error:
            message = self.address.scrub(" ".join(str(error).split()) or type(error).__name__)
            failure = StoreError(f"{self.address}: {message}")
            if self._backend is None:  # never connected: the next use would only wait again
                self._failure = failure
            raise failure from None


class _Writer:
    """What a write transaction may do."""

    def __init__(self, backend: _Backend) -> None:
        self._backend = backend

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._backend.execute(sql, parameters)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._backend.executemany(sql, rows)


def _version(backend: _Backend) -> int:
    tables = backend.tables()
    if schema.VERSION_TABLE in tables:
        row = backend.execute(f"SELECT MAX(version) FROM {schema.VERSION_TABLE}")
        return int(row[0][0]) if row and row[0][0] is not None else 1
    return 1 if tables & {"headlines", "placements"} else 0


def _refuse_newer(version: int, address: StoreAddress) -> None:
    if version > schema.CURRENT:
        raise SchemaTooNew(
            f"{address} was written by a newer snap-bench (store schema version {version}; this one knows up to "
            f"{schema.CURRENT}) and is left as it is. Fix: upgrade snap-bench (pip install -U snap-bench) where "
            "it writes to this store, or give --snap-history another store"
        )


# What the store's functions accept: an open Store (used as it is) or an address (opened for the call).
StoreLike = Store | StoreAddress | Path | str


def opened(store: StoreLike) -> AbstractContextManager[Store]:
    """``store`` itself if it is an open :class:`Store` (left open), else a Store opened for the ``with`` block."""
    if isinstance(store, Store):
        return nullcontext(store)
    return Store(store)


def insert(table: str, columns: Sequence[str]) -> str:
    """The INSERT statement of ``columns`` into ``table`` (``?`` placeholders)."""
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
