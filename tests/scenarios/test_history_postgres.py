"""The results history in a real PostgreSQL server on loopback (Debian's postgresql package, started for this
module by tests/postgres_server.py), and the store's failures through the plugin.

Without the server binaries these tests fail, naming the install command; they never skip.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from snap_bench.cli import main
from snap_bench.history.database import Store, StoreError
from snap_bench.history.store import read_headlines
from tests.conftest import FAKE_KEY, BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.postgres_server import PostgresServer, ServerMissing, free_port
from tests.session.test_compass_instrument import right_libertarian
from tests.unit.history.store_checks import (
    check_concurrent_writers,
    check_copy,
    check_incomplete_round_trip,
    check_migration,
    check_subset_round_trip,
    check_upgrade_from_version_2,
    check_upgrade_from_version_3,
)

# One item of the profile and one per compass axis: 18 + 24 conditions per model.
SELECTION = ("--snap-items=M01,E01,S01", "--snap-prompts=NEU", "--snap-temperatures=0")
INSTRUMENTS = ("profile", "compass")


class Cluster:
    """The module's server, or why it could not be started (each test then fails with it)."""

    def __init__(self, server: PostgresServer | None, problem: str = "") -> None:
        self.server = server
        self.problem = problem

    def database(self, name: str) -> str:
        """A new database for one test; its URL (no password: PGPASSWORD is set for the test)."""
        if self.server is None:
            pytest.fail(self.problem, pytrace=False)
        return self.server.create_database(name)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        yield Cluster(None, "the PostgreSQL driver is not installed. Fix: pip install -e '.[postgres]'")
        return
    try:
        server = PostgresServer(tmp_path_factory.mktemp("postgres")).start()
    except ServerMissing as missing:
        yield Cluster(None, str(missing))
        return
    try:
        yield Cluster(server)
    finally:
        server.stop()


class Databases:
    """A test's own database, made when the test asks for it: a server that could not start fails the test
    itself (not its setup), naming the fix."""

    def __init__(self, cluster: Cluster, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self.cluster, self.name, self.monkeypatch = cluster, name, monkeypatch

    def new(self) -> str:
        url = self.cluster.database(self.name)
        assert self.cluster.server is not None
        self.monkeypatch.setenv("PGPASSWORD", self.cluster.server.password)  # as a CI job's secret would be
        return url


@pytest.fixture
def postgres(cluster: Cluster, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Databases:
    return Databases(cluster, request.node.name.lower().replace("[", "_").replace("]", "")[:60], monkeypatch)


def raw_postgres(url: str) -> Any:
    def run(sql: str, parameters: Sequence[Any]) -> list[tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(url, autocommit=True) as connection:
            cursor = connection.execute(sql.replace("?", "%s"), tuple(parameters) or None)
            return cursor.fetchall() if cursor.description is not None else []

    return run


def answer(request: dict[str, Any]) -> str:
    """The compass's statements placed right-libertarian, anything else (the profile's items) answered 4."""
    said = right_libertarian(request)
    return "4" if said.startswith("I do not know") else said


def start_session(bench: BenchProject, model: str, out: str, *args: str) -> subprocess.Popen[str]:
    """``pytest benchmarks`` in its own process, started now (its output read by :func:`finish`)."""
    return subprocess.Popen(
        [
            *(sys.executable, "-m", "pytest", "benchmarks", "-p", "no:cacheprovider"),
            *(f"--model={model}", *SELECTION, *args, f"--snap-out={out}"),
        ],
        cwd=bench.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    output, _ = process.communicate(timeout=600)
    return process.returncode, output


def test_sessions_writing_at_once_keep_one_set_per_identical_result_and_every_different_one(
    pytester: pytest.Pytester,
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    postgres: Databases,
    cluster: Cluster,
) -> None:
    database = postgres.new()
    assert cluster.server is not None
    password = cluster.server.password
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    fake_server.script.answer = answer
    bench = BenchProject(pytester, fake_server.base_url, instruments=INSTRUMENTS)
    # Recorded first (into the default SQLite store), so that the sessions below replay: the same answers give
    # the same figures, and the PostgreSQL store holds none of them yet.
    recorded = bench.run("--model=fake-model", "--model=other-model", *SELECTION, gate=True)
    asked = len(fake_server.script.requests)
    expected = {(r.model, r.instrument): r for r in read_headlines(bench.out / "history.sqlite")}
    assert {key for key in expected} == {(m, i) for m in ("fake-model", "other-model") for i in INSTRUMENTS}

    history = f"--snap-history={database}"
    sessions = {
        "replay-1": start_session(bench, "fake-model", "reports-1", history, "--snap-record-mode=none"),
        "replay-2": start_session(bench, "fake-model", "reports-2", history, "--snap-record-mode=none"),
        "other": start_session(bench, "other-model", "reports-3", history, "--snap-record-mode=none"),
    }
    results = {name: finish(process) for name, process in sessions.items()}
    assert len(fake_server.script.requests) == asked  # every session replayed
    for name, (status, output) in results.items():
        assert status == recorded.ret, f"{name}:\n{output}"
        assert "results store" not in output, output
        assert password not in output

    stored = raw_postgres(database)(
        "SELECT model, instrument, COUNT(DISTINCT session), COUNT(*) FROM headlines GROUP BY model, instrument", ()
    )
    per_key = {(model, instrument): (sessions_, rows) for model, instrument, sessions_, rows in stored}
    metrics = {
        key: len([r for r in read_headlines(bench.out / "history.sqlite") if (r.model, r.instrument) == key])
        for key in expected
    }
    # The two identical replays: one set of headline rows per model and instrument; the other model's too.
    assert per_key == {key: (1, metrics[key]) for key in expected}
    # The compass keeps a placement per session: both replays' (a step each in its history chart).
    placements = raw_postgres(database)(
        "SELECT model, COUNT(DISTINCT session) FROM placements WHERE scope = 'overall' GROUP BY model ORDER BY model",
        (),
    )
    assert placements == [("fake-model", 2), ("other-model", 1)]
    for out in ("reports-1", "reports-2", "reports-3"):
        analysis = (bench.root / out / "analysis.json").read_text(encoding="utf-8")
        assert database in analysis  # where the history is kept, as given: no password in it

    # `snap-bench history --store URL` prints the trend from PostgreSQL.
    chart = bench.root / "trend.svg"
    shown = subprocess.run(
        [sys.executable, "-m", "snap_bench.cli", "history", "--store", database, "--chart", str(chart)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    for model in ("fake-model", "other-model"):
        for instrument in INSTRUMENTS:
            assert f"{model} · {instrument} (1 session(s))" in shown.stdout
    assert chart.read_text(encoding="utf-8").lstrip().startswith("<?xml")

    # The password is in no file the sessions wrote and in no output.
    written = [path for folder in bench.root.glob("reports*") for path in folder.rglob("*") if path.is_file()]
    assert len(written) > 10
    assert not [path for path in written if password.encode() in path.read_bytes()]
    assert password not in shown.stdout + shown.stderr + recorded.stdout.str() + recorded.stderr.str()


def test_writers_at_once_on_postgresql_lose_nothing_and_duplicate_nothing(postgres: Databases) -> None:
    check_concurrent_writers(postgres.new())


def test_a_postgresql_store_of_the_version_before_is_upgraded_in_place_and_a_newer_one_refused(
    postgres: Databases,
) -> None:
    database = postgres.new()
    check_migration(database, "postgresql", raw_postgres(database))


def test_a_postgresql_store_of_version_2_keeps_its_rows_and_marks_those_judged_incomplete(
    postgres: Databases,
) -> None:
    database = postgres.new()
    check_upgrade_from_version_2(database, "postgresql", raw_postgres(database))


def test_an_incomplete_session_is_stored_in_postgresql_with_its_coverage(postgres: Databases) -> None:
    check_incomplete_round_trip(postgres.new())


def test_a_postgresql_store_of_version_3_keeps_its_rows_their_design_not_known(postgres: Databases) -> None:
    database = postgres.new()
    check_upgrade_from_version_3(database, "postgresql", raw_postgres(database))


def test_a_subset_session_is_stored_in_postgresql_as_a_subset(postgres: Databases) -> None:
    check_subset_round_trip(postgres.new())


def test_a_sqlite_history_is_copied_into_postgresql_and_back_idempotently(
    postgres: Databases, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = postgres.new()
    check_copy(tmp_path / "history.sqlite", database)
    assert main(["history", "--copy", str(tmp_path / "history.sqlite"), database]) == 0
    out = capsys.readouterr().out
    assert f"into {database}" in out
    assert "headlines: 0 row(s) added, 15 already there" in out


def test_a_wrong_password_is_an_error_that_does_not_repeat_it(
    postgres: Databases, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    database = postgres.new()
    monkeypatch.setenv("PGPASSWORD", "wrong-password-123")
    with pytest.raises(StoreError, match="password authentication failed") as error:
        Store(database).version()
    assert "wrong-password-123" not in str(error.value)
    assert main(["history", "--store", f"{database}?password_env=SNAP_TEST_UNSET_VARIABLE"]) == 2
    assert "SNAP_TEST_UNSET_VARIABLE" in capsys.readouterr().err


def test_an_unreachable_store_is_one_warning_and_the_results_are_intact(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    monkeypatch.setenv("PGPASSWORD", "never-shown-456")
    fake_server.script.answer = answer
    bench = BenchProject(pytester, fake_server.base_url, instruments=INSTRUMENTS)
    first = bench.run("--model=fake-model", *SELECTION, gate=True)  # the default store: SQLite
    before = bench.analysis()["instruments"]
    unreachable = f"postgresql://snap@127.0.0.1:{free_port()}/history"  # nothing listens there
    result = bench.run("--model=fake-model", *SELECTION, f"--snap-history={unreachable}", gate=True)
    assert result.ret == first.ret  # the exit status follows the checks, as with a store that works
    warnings = [line for line in result.stdout.lines if "results store" in line]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("warning: results store not updated: postgresql://snap@127.0.0.1:")
    after = bench.analysis()["instruments"]
    for instrument in INSTRUMENTS:
        assert (
            after[instrument]["models"]["fake-model"]["metrics"]
            == before[instrument]["models"]["fake-model"]["metrics"]
        )
    assert "history_error" in after["compass"]["models"]["fake-model"]["details"]
    assert "no history to show" in (bench.out / "report.html").read_text(encoding="utf-8")
    assert "never-shown-456" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("postgress://snap@db:5432/history", "*did you mean postgresql://? Fix:*"),
        ("postgresql://snap:hunter2-secret@db:5432/history", "*carries a password*Fix: remove it from the URL*"),
    ],
)
def test_a_misspelt_or_secret_bearing_url_is_a_usage_error(bench: BenchProject, value: str, said: str) -> None:
    result = bench.run("--model=fake-model", f"--snap-history={value}", gate=True)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([said])
    assert "hunter2-secret" not in result.stdout.str() + result.stderr.str()
