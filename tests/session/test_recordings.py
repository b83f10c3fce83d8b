"""A session's recordings, in-process (run_session) against the fake server: recorded then replayed offline,
resumed, stale or missing or malformed ones named, an outage, the request budget and the rate limit, and what
writers killed mid-write left behind. pytest's part of these (xdist, Ctrl-C, kill -9, the HTML and JUnit) is
tests/contract/test_plugin.py's."""

from __future__ import annotations

import csv
import json
import time
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from snap_bench.observations.export import read_jsonl
from snap_bench.recordings.cassettes import leaked_secrets
from tests.conftest import FAKE_KEY, SLICE, SLICE_SIZE, BenchProject
from tests.fake_openai_server import Failure, FakeOpenAIServer

ONE_RUN = ("--model=fake-model", "--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")


def comparable(path: Path) -> list[tuple[Any, ...]]:
    """Observations without what legitimately differs between recording and replay."""
    return sorted(
        (o.model, o.condition_id, o.raw_answer, o.score, o.keyed_score, o.code, json.dumps(o.messages))
        for o in read_jsonl(path)
    )


def test_records_then_replays_offline_with_identical_observations(
    project: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_server.script.answer = lambda request: (
        "5" if "C1" in json.dumps(request) or "nurse" in json.dumps(request) else "2"
    )
    recorded = project.session("--model=fake-model", *SLICE)
    assert (recorded.exit_status, len(recorded.observations)) == (0, SLICE_SIZE)
    assert len(fake_server.script.requests) == SLICE_SIZE
    assert fake_server.script.authorizations[0] == f"Bearer {FAKE_KEY}"
    cassettes = sorted((project.cassettes / "fake-model" / "profile").glob("*.json"))
    assert len(cassettes) == SLICE_SIZE
    first_run = comparable(project.out / "observations.jsonl")
    assert len(first_run) == SLICE_SIZE

    # Offline: no key, and the server is gone, so any request that escaped replay would fail.
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    fake_server.__exit__(None, None, None)
    replayed = project.session("--model=fake-model", *SLICE)
    assert (replayed.exit_status, len(replayed.observations)) == (0, SLICE_SIZE)
    assert comparable(project.out / "observations.jsonl") == first_run
    assert all(o.replayed for o in read_jsonl(project.out / "observations.jsonl"))
    assert {o.score for o in read_jsonl(project.out / "observations.jsonl")} == {2, 5}


def test_cassettes_hold_no_key_and_no_authorization_header(project: BenchProject) -> None:
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    for cassette in (project.cassettes / "fake-model").rglob("*.json"):
        text = cassette.read_text(encoding="utf-8")
        assert FAKE_KEY not in text
        assert "authorization" not in text.lower()
    assert leaked_secrets(project.cassettes) == []


def test_without_a_model_the_recorded_models_replay(project: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = project.session(*SLICE)
    assert (result.exit_status, len(result.observations)) == (0, SLICE_SIZE)
    assert any(
        line.startswith("fake-model: n=18 valid=100.0%") and line.endswith("replayed=18") for line in result.summary
    ), result.summary


def test_resume_asks_only_for_what_is_missing(project: BenchProject, fake_server: FakeOpenAIServer) -> None:
    assert len(project.session(*ONE_RUN).observations) == 6
    assert len(fake_server.script.requests) == 6
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    assert len(fake_server.script.requests) == SLICE_SIZE  # only runs 2 and 3 were asked


def test_stale_cassette_is_reported_not_replayed(project: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    prompt = project.own("prompts/system/NEU.txt")
    prompt.write_text("You are a different assistant now.\n", encoding="utf-8")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = project.session("--model=fake-model", *SLICE)
    problems = list(result.not_measured.values())
    assert result.observations == ()
    assert result.exit_status == 6  # every condition failed: could not measure
    assert result.reason.startswith(f"could not measure: {SLICE_SIZE} no recording")
    assert len(problems) == SLICE_SIZE
    assert all("stale recording" in p and "request body differs" in p for p in problems), problems[:2]
    assert all("--snap-record-mode=all" in p for p in problems)


def test_missing_cassette_without_credentials_names_the_fix(
    project: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = project.session("--model=fake-model", "--snap-items=M02", "--snap-prompts=NEU", "--snap-temperatures=0")
    problems = list(result.not_measured.values())
    assert (result.observations, result.exit_status) == ((), 6)
    assert len(problems) == SLICE_SIZE
    assert any("no recording for fake-model M02-P1-NEU-t0-C0-r1" in p and "set FAKE_OPENAI_KEY" in p for p in problems)


def test_refusal_is_unscored_not_failed_and_recorded_with_its_code(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.answer = lambda request: "As an AI, I don't have personal opinions."
    result = project.session("--model=fake-model", *SLICE, "--snap-show-unscored")
    assert result.exit_status == 0  # nothing judged (--snap-no-analysis): unscored answers alone fail nothing
    start = result.summary.index("unscored answers (18):")
    assert result.summary[start + 1].startswith("  fake-model M01-P1-NEU-t0-C0-r1: code -1 (")
    assert "answer \"As an AI, I don't have" in result.summary[start + 1]
    observations = read_jsonl(project.out / "observations.jsonl")
    assert len(observations) == SLICE_SIZE
    assert {o.code for o in observations} == {-1}


def test_outage_becomes_an_api_error_and_the_next_run_asks_again(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    # Every attempt of the first condition fails; the others succeed after one 429 with Retry-After.
    fake_server.script.failures = deque([Failure(503, retry_after="0")] * 2 + [Failure(429, retry_after="0")])
    result = project.session(*ONE_RUN, "--snap-max-attempts=2", "--snap-show-unscored")
    assert result.exit_status == 0
    assert len(result.observations) == 6
    errored = [o for o in read_jsonl(project.out / "observations.jsonl") if o.code == -3]
    assert len(errored) == 1
    assert [o.code for o in result.observations].count(None) == 5
    assert any("code -3 (gave up after 2 attempts: HTTP 503" in line for line in result.summary), result.summary
    assert not (project.cassettes / "fake-model" / "profile" / f"{errored[0].condition_id}.json").exists()
    before = len(fake_server.script.requests)
    again = project.session(*ONE_RUN)
    assert [o.code for o in again.observations] == [None] * 6
    assert len(fake_server.script.requests) == before + 1


def test_every_observation_is_written_in_one_order(project: BenchProject) -> None:
    """Plain; under xdist (the workers' reports reaching the controller) in tests/contract/test_plugin.py."""
    args = ("--model=fake-model,other-model", "--snap-items=M01,P01", "--snap-prompts=NEU,DIR", "--snap-temperatures=0")
    assert len(project.session(*args).observations) == 2 * (36 + 18)
    observations = read_jsonl(project.out / "observations.jsonl")
    assert len({(o.model, o.condition_id) for o in observations}) == 2 * (36 + 18)
    csv_rows = (project.out / "observations.csv").read_text(encoding="utf-8").strip().splitlines()
    assert len(csv_rows) == 1 + 2 * (36 + 18)
    keys = [(row["model"], row["instrument"], row["condition_id"]) for row in csv.DictReader(csv_rows)]
    assert keys == sorted(keys)


def test_request_budget_stops_asking_cleanly_and_replay_goes_on(
    project: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One process here; the budget's state file shared by processes is tests/unit/asking's."""
    first = project.session("--model=fake-model", *SLICE, "--snap-max-requests=5")
    assert len(first.observations) == 5
    assert len(fake_server.script.requests) == 5
    second = project.session("--model=fake-model", *SLICE, "--snap-max-requests=5")
    problems = list(second.not_measured.values())
    assert len(second.observations) == 10  # 5 replayed, 5 asked
    assert len(fake_server.script.requests) == 10
    assert len(problems) == SLICE_SIZE - 10
    assert all("request budget reached (5 of 5 requests)" in p for p in problems), problems[:2]
    assert all(p.endswith("was not asked. Run again to continue.") for p in problems)


def test_rate_limit_paces_the_requests(project: BenchProject, fake_server: FakeOpenAIServer) -> None:
    """One process; that the workers share one pace through the session's state file is
    tests/unit/asking/test_pacing.py::test_processes_share_one_pace_through_the_state_file."""
    started = time.monotonic()
    result = project.session("--model=fake-model", *SLICE, "--snap-rate-limit=600")
    elapsed = time.monotonic() - started
    assert len(result.observations) == SLICE_SIZE
    # 600 per minute = one start every 0.1 s: 18 requests need >= 1.7 s (a lower bound: no busy machine breaks it).
    assert elapsed >= 1.7
    assert len(fake_server.script.requests) == SLICE_SIZE


def test_leftover_temporary_files_are_removed_unless_their_writer_lives(project: BenchProject) -> None:
    import os

    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    folder = project.cassettes / "fake-model" / "profile"
    # A pid no process can have (above the kernel's largest): a writer that is gone.
    dead_pid = int(Path("/proc/sys/kernel/pid_max").read_text(encoding="utf-8")) + 1
    dead = folder / f".M01-P1-NEU-t0-C0-r1.json.{dead_pid}.abc123.tmp"
    unnamed = folder / ".M01-P1-NEU-t0-C0-r2.json.abc123.tmp"
    live = folder / f".M01-P1-NEU-t0-C0-r3.json.{os.getpid()}.abc123.tmp"
    # ... and beside the state the processes share (budget, rate limit, stops), rewritten whole
    state = project.root / "reports" / ".state"
    state.mkdir(parents=True, exist_ok=True)
    dead_state = state / f".stops.json.{dead_pid}.abc123.tmp"
    for path in (dead, unnamed, live, dead_state):
        path.write_text('{"interactions": [', encoding="utf-8")  # what a killed writer leaves: half a file
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    assert not dead_state.exists()
    assert not dead.exists()
    assert not unnamed.exists()
    assert live.exists()  # a session running now (this one) may still be writing it


def test_malformed_cassette_is_named_not_a_traceback(project: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    broken = project.cassettes / "fake-model" / "profile" / "M01-P1-NEU-t0-C0-r1.json"
    broken.write_text('{"interactions": [', encoding="utf-8")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = project.session("--model=fake-model", *SLICE)
    problems = list(result.not_measured.values())
    assert len(result.observations) == SLICE_SIZE - 1
    assert result.exit_status == 6
    assert len(problems) == 1
    assert problems[0].startswith(f"{broken}: unreadable cassette (JSONDecodeError")
    assert "Delete the file" in problems[0]
