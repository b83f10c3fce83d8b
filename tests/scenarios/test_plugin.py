"""The plugin end to end through pytester, against the fake server, plain and under xdist (-n 2)."""

from __future__ import annotations

import csv
import html
import json
import re
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from snap_bench.observations.export import read_jsonl
from snap_bench.recordings.cassettes import leaked_secrets
from snap_bench.report.conditions import embedded_conditions, rows_of
from tests.conftest import FAKE_KEY, SLICE, SLICE_SIZE, WORKERS, BenchProject, with_terminal_signals
from tests.fake_openai_server import Failure, FakeOpenAIServer


def comparable(path: Path) -> list[tuple[Any, ...]]:
    """Observations without what legitimately differs between recording and replay."""
    return sorted(
        (o.model, o.condition_id, o.raw_answer, o.score, o.keyed_score, o.code, json.dumps(o.messages))
        for o in read_jsonl(path)
    )


@pytest.mark.parametrize("workers", WORKERS)
def test_records_then_replays_offline_with_identical_observations(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = lambda request: (
        "5" if "C1" in json.dumps(request) or "nurse" in json.dumps(request) else "2"
    )
    recorded = bench.run("--model=fake-model", *SLICE, *workers)
    recorded.assert_outcomes(passed=SLICE_SIZE)
    assert len(fake_server.script.requests) == SLICE_SIZE
    assert fake_server.script.authorizations[0] == f"Bearer {FAKE_KEY}"
    cassettes = sorted((bench.cassettes / "fake-model" / "profile").glob("*.json"))
    assert len(cassettes) == SLICE_SIZE
    first_run = comparable(bench.out / "observations.jsonl")
    assert len(first_run) == SLICE_SIZE

    # Offline: no key, and the server is gone, so any request that escaped replay would fail.
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    fake_server.__exit__(None, None, None)
    replayed = bench.run("--model=fake-model", *SLICE, *workers)
    replayed.assert_outcomes(passed=SLICE_SIZE)
    assert comparable(bench.out / "observations.jsonl") == first_run
    assert all(o.replayed for o in read_jsonl(bench.out / "observations.jsonl"))
    assert {o.score for o in read_jsonl(bench.out / "observations.jsonl")} == {2, 5}


def test_cassettes_hold_no_key_and_no_authorization_header(bench: BenchProject) -> None:
    bench.run("--model=fake-model", *SLICE).assert_outcomes(passed=SLICE_SIZE)
    for cassette in (bench.cassettes / "fake-model").rglob("*.json"):
        text = cassette.read_text(encoding="utf-8")
        assert FAKE_KEY not in text
        assert "authorization" not in text.lower()
    assert leaked_secrets(bench.cassettes) == []


def test_without_a_model_the_recorded_models_replay(bench: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    bench.run("--model=fake-model", *SLICE).assert_outcomes(passed=SLICE_SIZE)
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run(*SLICE)
    result.assert_outcomes(passed=SLICE_SIZE)
    result.stdout.fnmatch_lines(["*fake-model: n=18 valid=100.0%*replayed=18*"])


def test_resume_asks_only_for_what_is_missing(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    bench.run(
        "--model=fake-model", "--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1"
    ).assert_outcomes(passed=6)
    assert len(fake_server.script.requests) == 6
    bench.run("--model=fake-model", *SLICE).assert_outcomes(passed=SLICE_SIZE)
    assert len(fake_server.script.requests) == SLICE_SIZE  # only runs 2 and 3 were asked


@pytest.mark.parametrize("workers", WORKERS)
def test_stale_cassette_is_reported_not_replayed(
    bench: BenchProject, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    bench.run("--model=fake-model", *SLICE).assert_outcomes(passed=SLICE_SIZE)
    prompt = bench.own("prompts/system/NEU.txt")
    prompt.write_text("You are a different assistant now.\n", encoding="utf-8")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=fake-model", *SLICE, *workers)
    result.assert_outcomes(failed=SLICE_SIZE)
    result.stdout.fnmatch_lines(["*stale recording*request body differs*--snap-record-mode=all*"])


def test_missing_cassette_without_credentials_names_the_fix(
    bench: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench.run("--model=fake-model", *SLICE).assert_outcomes(passed=SLICE_SIZE)
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=fake-model", "--snap-items=M02", "--snap-prompts=NEU", "--snap-temperatures=0")
    result.assert_outcomes(failed=SLICE_SIZE)
    result.stdout.fnmatch_lines(["*no recording for fake-model M02-P1-NEU-t0-C0-r1*set FAKE_OPENAI_KEY*"])


def test_model_without_recordings_or_key_is_a_usage_error(bench: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    bench.run("--model=fake-model", *SLICE).assert_outcomes(passed=SLICE_SIZE)
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=other-model", *SLICE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no recordings*other-model*set FAKE_OPENAI_KEY*Models with recordings: fake-model*"])
    assert "Traceback" not in result.stderr.str()


@pytest.mark.parametrize("workers", WORKERS)
def test_unknown_model_is_a_usage_error_listing_known_models(bench: BenchProject, workers: tuple[str, ...]) -> None:
    result = bench.run("--model=gpt-7", *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # the project's models.yaml names the file; the project's models are listed beside the packaged ones
    models = bench.root / "config" / "models.yaml"
    result.stderr.fnmatch_lines([f"*{models}: models: unknown model 'gpt-7'*use one of: *fake-model*gpt-5.2*"])
    assert "other-model" in result.stderr.str()
    assert "Traceback" not in result.stderr.str()


@pytest.mark.parametrize(
    ("file", "old", "new", "expected"),
    [
        (
            "profile.yaml",
            "temperatures: [0.0, 0.5, 1.0]",
            "temperatures: [0.0, 0.5, 3.5]",
            "*profile.yaml: temperatures[[]2[]]: 3.5 is not a temperature. Fix: use a number from 0 to 2*",
        ),
        ("profile.yaml", "runs: 3", "runs: [3", "*profile.yaml: malformed YAML at line*"),
        (
            "profile.yaml",
            "      P3: Doing something degrading",
            "      P4: Doing something degrading",
            "*profile.yaml: items[[]4[]].paraphrases: missing paraphrase P3. "
            "Fix: give every item the paraphrases P1, P2, P3*",
        ),
        (
            "profile.yaml",
            "id: P05",
            "id: P04",
            "*profile.yaml: items[[]11[]].id: duplicate item id 'P04'*",
        ),
        (
            "profile.yaml",
            "contexts: [C0]",
            "contexts: [C0, C9]",
            "*profile.yaml: items[[]7[]].contexts[[]1[]]: unknown context 'C9'. Fix: use one of: C0, C1*",
        ),
        (
            "compass.yaml",
            "construct: social",
            "construct: cultural",
            "*compass.yaml: items[[]S01[]].construct: 'cultural' is not an axis. Fix: use economic or social*",
        ),
    ],
)
def test_bad_config_is_a_usage_error_naming_file_key_and_fix(
    bench: BenchProject, file: str, old: str, new: str, expected: str
) -> None:
    path = bench.own(file)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    result = bench.run("--model=fake-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])
    assert f"{path}: " in result.stderr.str()  # the project's own file, where the mistake is
    assert "Traceback" not in result.stderr.str()


@pytest.mark.parametrize("workers", WORKERS)
def test_refusal_is_unscored_not_failed_and_recorded_with_its_code(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = lambda request: "As an AI, I don't have personal opinions."
    result = bench.run("--model=fake-model", *SLICE, "--snap-show-unscored", "--junitxml=junit.xml", *workers)
    result.assert_outcomes(passed=0, failed=0)
    assert result.parseoutcomes()["unscored"] == SLICE_SIZE
    assert result.ret == pytest.ExitCode.OK  # nothing judged (--snap-no-analysis): unscored answers alone fail nothing
    result.stdout.fnmatch_lines(
        ["unscored answers (18):", "  fake-model M01-P1-NEU-t0-C0-r1: code -1 (*) answer \"As an AI, I don't have*"]
    )
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert len(observations) == SLICE_SIZE
    assert {o.code for o in observations} == {-1}
    junit = (bench.root / "junit.xml").read_text(encoding="utf-8")
    assert junit.count('<property name="snap_outcome" value="unscored"') == SLICE_SIZE
    assert junit.count('<property name="answer_code" value="-1"') == SLICE_SIZE
    report = (bench.out / "report.html").read_text(encoding="utf-8")
    assert f">{SLICE_SIZE} Unscored,<" in report  # pytest-html's count line, as the terminal counts them
    # each condition is a row of the report's conditions table, marked unscored
    table = embedded_conditions(report)
    assert table is not None
    assert [row["outcome"] for row in rows_of(table)] == ["unscored"] * SLICE_SIZE


def test_outage_becomes_an_api_error_and_the_next_run_asks_again(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    # Every attempt of the first condition fails; the others succeed after one 429 with Retry-After.
    fake_server.script.failures = deque([Failure(503, retry_after="0")] * 2 + [Failure(429, retry_after="0")])
    result = bench.run(
        "--model=fake-model",
        "--snap-items=M01",
        "--snap-prompts=NEU",
        "--snap-temperatures=0",
        "--snap-runs=1",
        "--snap-max-attempts=2",
        "--snap-show-unscored",
        "-p",
        "no:randomly",
    )
    result.assert_outcomes(passed=5, failed=0)
    assert result.parseoutcomes()["unscored"] == 1
    result.stdout.fnmatch_lines(["*code -3 (gave up after 2 attempts: HTTP 503*"])
    errored = [o for o in read_jsonl(bench.out / "observations.jsonl") if o.code == -3]
    assert len(errored) == 1
    assert not (bench.cassettes / "fake-model" / "profile" / f"{errored[0].condition_id}.json").exists()
    before = len(fake_server.script.requests)
    bench.run(
        "--model=fake-model", "--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1"
    ).assert_outcomes(passed=6)
    assert len(fake_server.script.requests) == before + 1


def test_dry_run_counts_conditions_without_key_or_recordings(
    bench: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=fake-model,other-model", "--snap-dry-run")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "*instrument profile (version *): 14 items*",
            "*fake-model: 2,268 conditions; *output tokens per answer <= 24, expected ~16 (assumed for reasoning "
            "effort none: no recordings of it); cost <= $* worst case, ~$* expected (price from models.yaml)",
            "*other-model: 2,268 conditions; *no price in models.yaml*",
            "per model:",
            "  fake-model: 2,268 conditions; cost <= $* worst case, ~$* expected",
            "total: 4536 conditions for 2 model(s); cost <= $* (no price for other-model: not counted)",
            "worst case: every answer writes its whole output budget*",
        ]
    )
    assert dry_run_total(result) == sum(dry_run_per_model(result).values())
    assert dry_run_per_model(result) == {"fake-model": 2268, "other-model": 2268}
    result.stdout.fnmatch_lines(["collected 4536 items"])  # the plan is what pytest collected
    assert not bench.cassettes.exists()


def dry_run_per_model(result: pytest.RunResult) -> dict[str, int]:
    """model -> its conditions, from the dry run's lines under "per model:"."""
    block = result.stdout.str().split("\nper model:\n", 1)[1].split("\ntotal: ", 1)[0]
    found = re.findall(r"^  (\S+): ([\d,]+) conditions;", block, re.M)
    return {name: int(count.replace(",", "")) for name, count in found}


def dry_run_total(result: pytest.RunResult) -> int:
    match = re.search(r"^total: (\d+) conditions", result.stdout.str(), re.M)
    assert match is not None
    return int(match.group(1))


def test_collect_only_lists_readable_ids_without_key(bench: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=fake-model", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "benchmarks/test_profile.py::test_likert[[]fake-model-M01-P1-NEU-t0-C0-r1[]]",
            "benchmarks/test_profile.py::test_likert[[]fake-model-P05-P3-ABS-t1-C0-r3[]]",
            "2268 tests collected*",
        ]
    )


@pytest.mark.parametrize("workers", WORKERS)
def test_every_observation_reaches_the_controller(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    args = ("--model=fake-model,other-model", "--snap-items=M01,P01", "--snap-prompts=NEU,DIR", "--snap-temperatures=0")
    bench.run(*args, *workers).assert_outcomes(passed=2 * (36 + 18))
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert len({(o.model, o.condition_id) for o in observations}) == 2 * (36 + 18)
    csv_rows = (bench.out / "observations.csv").read_text(encoding="utf-8").strip().splitlines()
    assert len(csv_rows) == 1 + 2 * (36 + 18)
    # One order however the workers finished: the one the analysis reads (its sums, and the REML
    # optimiser's path, follow the order of the rows, so a replay's figures would depend on scheduling).
    keys = [(row["model"], row["instrument"], row["condition_id"]) for row in csv.DictReader(csv_rows)]
    assert keys == sorted(keys)


def test_request_budget_stops_asking_cleanly_and_replay_goes_on(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    result = bench.run("--model=fake-model", *SLICE, "--snap-max-requests=5", "-n", "2")
    result.assert_outcomes(passed=5, skipped=SLICE_SIZE - 5)
    assert len(fake_server.script.requests) == 5
    result = bench.run("--model=fake-model", *SLICE, "--snap-max-requests=5", "-rs")
    result.assert_outcomes(passed=10, skipped=SLICE_SIZE - 10)
    result.stdout.fnmatch_lines(["*request budget reached (5 of 5 requests)*was not asked. Run again to continue.*"])
    assert len(fake_server.script.requests) == 10


def test_rate_limit_is_shared_by_all_workers(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    import time

    started = time.monotonic()
    bench.run("--model=fake-model", *SLICE, "--snap-rate-limit=600", "-n", "2").assert_outcomes(passed=SLICE_SIZE)
    elapsed = time.monotonic() - started
    # 600 per minute = one start every 0.1 s for both workers together: 18 requests need >= 1.7 s.
    assert elapsed >= 1.7
    assert len(fake_server.script.requests) == SLICE_SIZE


@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGINT"])
@pytest.mark.parametrize("workers", WORKERS)
def test_interrupted_session_loses_at_most_what_was_in_flight(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...], signal_name: str
) -> None:
    """kill -9 of the whole session, or Ctrl-C (SIGINT to the process group, as a terminal sends it)."""
    import contextlib
    import os
    import signal
    import subprocess
    import sys
    import time

    process: list[subprocess.Popen[bytes]] = []

    def hold(number: int) -> None:
        # From the 6th request on, nothing is answered until the session is gone: however slowly this test
        # gets to send the signal on a busy machine, the session cannot have finished before it.
        if number > 5:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process[0].wait(timeout=60)

    fake_server.script.on_request = hold
    folder = bench.cassettes / "fake-model" / "profile"
    command = [sys.executable, "-m", "pytest", "benchmarks", "-p", "no:cacheprovider", "--model=fake-model", *SLICE]
    process.append(
        subprocess.Popen(
            [*command, *workers, "--snap-no-analysis"],
            cwd=bench.root,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=with_terminal_signals,
        )
    )
    deadline = time.monotonic() + 60
    while len(list(folder.glob("*.json"))) < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process[0].pid, getattr(signal, signal_name))
    try:
        process[0].wait(timeout=120)  # Ctrl-C must end the session, not be absorbed by the HTTP client
    finally:
        with contextlib.suppress(ProcessLookupError):  # nothing of a session that did not end is left running
            os.killpg(process[0].pid, signal.SIGKILL)
    recorded = {path: path.read_bytes() for path in folder.glob("*.json")}
    kept = len(recorded)
    assert 5 <= kept < SLICE_SIZE
    asked_before = len(fake_server.script.requests)
    processes = 2 if workers else 1

    fake_server.script.on_request = None
    bench.run("--model=fake-model", *SLICE, *workers).assert_outcomes(passed=SLICE_SIZE)
    # Only the missing ones are asked. A request the killed run had already sent may reach the server only
    # after the kill (it sat in the listen queue, counted here with the new run): at most one per process.
    asked, missing = len(fake_server.script.requests) - asked_before, SLICE_SIZE - kept
    assert missing <= asked <= missing + processes
    assert len(fake_server.script.requests) - SLICE_SIZE <= processes  # paid and lost: what was in flight
    # ... and what was recorded before the interruption replays untouched, never asked again.
    assert all(path.read_bytes() == content for path, content in recorded.items())
    for cassette in folder.glob("*.json"):
        json.loads(cassette.read_text(encoding="utf-8"))  # atomic writes: nothing half-written
    # A writer killed mid-write leaves its temporary file (at most one per writing process); the next
    # session, the one that just ran, removes it.
    assert not list(folder.glob("*.tmp"))


def test_leftover_temporary_files_are_removed_unless_their_writer_lives(bench: BenchProject) -> None:
    import os
    import subprocess
    import sys

    bench.run("--model=fake-model", *SLICE).assert_outcomes(passed=SLICE_SIZE)
    folder = bench.cassettes / "fake-model" / "profile"
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = folder / f".M01-P1-NEU-t0-C0-r1.json.{int(finished.stdout)}.abc123.tmp"
    unnamed = folder / ".M01-P1-NEU-t0-C0-r2.json.abc123.tmp"
    live = folder / f".M01-P1-NEU-t0-C0-r3.json.{os.getpid()}.abc123.tmp"
    # ... and beside the state the processes share (budget, rate limit, stops), rewritten whole
    state = bench.root / "reports" / ".state"
    state.mkdir(parents=True, exist_ok=True)
    dead_state = state / f".stops.json.{int(finished.stdout)}.abc123.tmp"
    for path in (dead, unnamed, live, dead_state):
        path.write_text('{"interactions": [', encoding="utf-8")  # what a killed writer leaves: half a file
    bench.run("--model=fake-model", *SLICE, "-n", "2").assert_outcomes(passed=SLICE_SIZE)
    assert not dead_state.exists()
    assert not dead.exists()
    assert not unnamed.exists()
    assert live.exists()  # a session running now (this one) may still be writing it


def test_malformed_cassette_is_named_not_a_traceback(bench: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    bench.run("--model=fake-model", *SLICE).assert_outcomes(passed=SLICE_SIZE)
    broken = bench.cassettes / "fake-model" / "profile" / "M01-P1-NEU-t0-C0-r1.json"
    broken.write_text('{"interactions": [', encoding="utf-8")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=fake-model", *SLICE)
    result.assert_outcomes(passed=SLICE_SIZE - 1, failed=1)
    result.stdout.fnmatch_lines(["*M01-P1-NEU-t0-C0-r1.json: unreadable cassette (JSONDecodeError*Delete the file*"])
    assert "Traceback" not in result.stdout.str()


def test_pilot_mode_runs_the_pilot_models(bench: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    models = bench.root / "config" / "models.yaml"
    models.write_text(models.read_text(encoding="utf-8") + "pilot: [other-model]\n", encoding="utf-8")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--snap-mode=pilot", "--snap-dry-run")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*other-model: 2,268 conditions*", "total: 2268 conditions for 1 model(s)*"])
    assert dry_run_total(result) == sum(dry_run_per_model(result).values())
    assert "fake-model" not in result.stdout.str()


def report_rows(report: Path) -> dict[str, list[dict[str, Any]]]:
    """pytest-html's per-test data, as the report's script reads it from the data container."""
    blob = re.search(r'id="data-container" data-jsonblob="([^"]*)"', report.read_text(encoding="utf-8"))
    assert blob is not None, "no data container in the report"
    tests: dict[str, list[dict[str, Any]]] = json.loads(html.unescape(blob.group(1)))["tests"]
    return tests


@pytest.mark.parametrize("workers", WORKERS)
def test_conditions_leave_pytest_htmls_table_for_the_reports_own_and_are_still_counted(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = lambda request: "4 & more"
    bench.run("--model=fake-model", *SLICE, *workers).assert_outcomes(passed=SLICE_SIZE)
    report = bench.out / "report.html"
    rows = report_rows(report)
    assert not [node for node in rows if "test_likert[" in node]  # pytest-html would draw each one on opening
    text = report.read_text(encoding="utf-8")
    assert f">{SLICE_SIZE} Passed,<" in text  # ... but counts each one, as the terminal does
    assert "<th>Links</th>" not in text
    data = re.search(r'<script type="application/gzip\+base64" id="snap-conditions-data">(.*?)</script>', text, re.S)
    assert data is not None
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", data.group(1))  # base64: no markup or entity inside the script
    table = embedded_conditions(text)
    assert table is not None
    assert table["columns"][:3] == ["model", "instrument", "item"]
    assert {"paraphrase", "system_prompt", "temperature", "context", "score", "code", "reason"} <= set(table["columns"])
    rows = rows_of(table)
    assert len(rows) == SLICE_SIZE
    assert {row["answer"] for row in rows} == {"4 & more"}
    assert [role for role, _ in rows[0]["messages"]][-1] == "user"  # the full prompt, message by message
