"""--snap-concurrency (and models.yaml's concurrency): several requests in flight per model, each
condition still its own test, with the live path's guarantees: each condition asked once, recordings
written as answers arrive (a kill at any moment loses only what was in flight), Ctrl-C, Retry-After,
the request budget as a hard cap, and stops."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest

from snap_bench.observations.export import read_jsonl
from snap_bench.recordings.cassettes import CassetteState, examine
from tests.conftest import SLICE, SLICE_SIZE, WORKERS, BenchProject, with_terminal_signals
from tests.fake_openai_server import Failure, FakeOpenAIServer


def bodies(cassettes: Path) -> dict[str, str]:
    """Condition file name -> the request body recorded in it (every file must be a whole cassette)."""
    recorded = {}
    for path in sorted(cassettes.rglob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        recorded[path.name] = document["interactions"][-1]["request"]["body"]
    return recorded


def asked(fake_server: FakeOpenAIServer) -> list[str]:
    """Each request the server received, as the canonical JSON its cassette holds."""
    return [
        json.dumps(r, sort_keys=True, separators=(",", ":"), ensure_ascii=False) for r in fake_server.script.requests
    ]


@pytest.mark.parametrize("workers", WORKERS)
def test_every_condition_is_asked_once_with_up_to_n_in_flight(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    # The first requests are held until 4 are in flight at once: asking one at a time would never get there. The
    # fixed pace sends all 4 from the first request (the adaptive pace starts at one and grows to the ceiling as
    # answers come: tests/scenarios/test_rate_limit.py).
    fake_server.script.hold_until = 4
    result = bench.run("--model=fake-model", *SLICE, "--snap-concurrency=4", "--snap-pace=fixed", *workers)
    result.assert_outcomes(passed=SLICE_SIZE)
    assert fake_server.script.max_in_flight == 4
    assert sorted(asked(fake_server)) == sorted(bodies(bench.cassettes).values())
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert len(observations) == SLICE_SIZE
    assert not any(o.replayed for o in observations)
    assert all(o.score == 4 for o in observations)
    # Every recording replays: the second run sends nothing.
    bench.run("--model=fake-model", *SLICE, "--snap-concurrency=4", *workers).assert_outcomes(passed=SLICE_SIZE)
    assert len(fake_server.script.requests) == SLICE_SIZE
    assert all(o.replayed for o in read_jsonl(bench.out / "observations.jsonl"))


def test_concurrency_from_models_yaml_and_a_bad_value_named(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    models = bench.root / "config" / "models.yaml"
    models.write_text(
        models.read_text(encoding="utf-8").replace("    id: fake/model\n", "    id: fake/model\n    concurrency: 3\n")
    )
    fake_server.script.hold_until = 3
    bench.run("--model=fake-model", *SLICE, "--snap-pace=fixed").assert_outcomes(passed=SLICE_SIZE)
    assert fake_server.script.max_in_flight == 3
    models.write_text(models.read_text(encoding="utf-8").replace("concurrency: 3", "concurrency: 2.5"))
    result = bench.run("--model=fake-model", *SLICE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*models.yaml*concurrency*whole number*"])


@pytest.mark.parametrize("workers", WORKERS)
def test_the_request_budget_stays_a_hard_cap_with_many_in_flight(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    fake_server.script.failures = deque([Failure(503, retry_after="0")] * 200)
    limit = 5
    # The fixed pace: 8 in flight from the first request (the adaptive window grows only with answers, and there
    # are none here).
    many = ("--snap-concurrency=8", "--snap-pace=fixed")
    result = bench.run("--model=fake-model", *SLICE, *many, f"--snap-max-requests={limit}", *workers)
    assert len(fake_server.script.requests) <= limit
    result.assert_outcomes(skipped=SLICE_SIZE)


def test_retry_after_is_honoured_and_the_attempts_are_recorded_in_order(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.failures = deque([Failure(429, retry_after="0"), Failure(503, retry_after="0")])
    bench.run("--model=fake-model", *SLICE, "--snap-concurrency=4").assert_outcomes(passed=SLICE_SIZE)
    assert len(fake_server.script.requests) == SLICE_SIZE + 2
    codes = sorted(
        [i["response"]["status"]["code"] for i in json.loads(path.read_text(encoding="utf-8"))["interactions"]]
        for path in bench.cassettes.rglob("*.json")
    )
    # Each failed attempt sits before the answer that followed it, in its condition's own recording.
    assert codes.count([200]) == SLICE_SIZE - 2 or codes.count([200]) == SLICE_SIZE - 1
    assert all(attempts[-1] == 200 and all(code != 200 for code in attempts[:-1]) for attempts in codes)
    assert sum(len(attempts) for attempts in codes) == SLICE_SIZE + 2
    for path in bench.cassettes.rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert "authorization" not in text.lower()
        assert "sk-fake" not in text


def test_a_refused_key_stops_the_model_with_many_in_flight(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    fake_server.script.failures = deque([Failure(401)] * 200)
    result = bench.run("--model=fake-model", *SLICE, "--snap-concurrency=4", "--snap-max-attempts=1")
    # Two hopeless conditions stop the model; at most the other requests already in flight went out.
    assert len(fake_server.script.requests) <= 2 + 4
    assert result.parseoutcomes().get("unscored", 0) == SLICE_SIZE
    result.stdout.fnmatch_lines(["*fake-model stopped at*"])
    assert not list(bench.cassettes.rglob("*.json"))


def _spawn(bench: BenchProject, *args: str) -> subprocess.Popen[bytes]:
    """The benchmark run as a process group of its own (so a signal reaches its workers too)."""
    command = [sys.executable, "-m", "pytest", "benchmarks", "-p", "no:cacheprovider", "--snap-no-analysis", *args]
    return subprocess.Popen(
        command,
        cwd=bench.root,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=with_terminal_signals,
    )


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("at_request", [1, 5, 11])
def test_kill_9_at_any_request_loses_only_what_was_in_flight_and_resumes_without_re_asking(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...], at_request: int
) -> None:
    concurrency = 4
    process: list[subprocess.Popen[bytes]] = []

    def kill(number: int) -> None:
        if number == at_request:
            os.killpg(process[0].pid, signal.SIGKILL)

    fake_server.script.on_request = kill
    process.append(_spawn(bench, "--model=fake-model", *SLICE, f"--snap-concurrency={concurrency}", *workers))
    assert process[0].wait(timeout=120) == -signal.SIGKILL
    answered_before_kill = fake_server.script.answered
    recorded = bodies(bench.cassettes)  # every file left behind is a whole cassette
    assert answered_before_kill - len(recorded) <= concurrency  # nothing paid lost beyond the requests in flight
    for path in bench.cassettes.rglob("*.json"):
        assert examine(path, "POST", f"{path_uri(bench)}", path_body(path))[0] is CassetteState.MATCHES
    first_run = len(fake_server.script.requests)
    kept = {path: path.read_bytes() for path in bench.cassettes.rglob("*.json")}
    fake_server.script.on_request = None
    bench.run("--model=fake-model", *SLICE, f"--snap-concurrency={concurrency}", *workers).assert_outcomes(
        passed=SLICE_SIZE
    )
    # Runs of a condition send the same body, so count: each missing condition asked once. A request the killed
    # run had already sent may reach the server only after the kill (it sat in the listen queue), so up to one
    # per request in flight, `concurrency` per process, is counted here too; whatever the moment of the kill.
    asked, missing = len(fake_server.script.requests) - first_run, SLICE_SIZE - len(recorded)
    processes = 2 if workers else 1
    assert missing <= asked <= missing + concurrency * processes
    # Nothing recorded was asked again: a recording that matched is replayed, never rewritten.
    assert all(path.read_bytes() == content for path, content in kept.items())
    after = bodies(bench.cassettes)
    assert len(after) == SLICE_SIZE
    assert all(after[name] == body for name, body in recorded.items())


def path_uri(bench: BenchProject) -> str:
    models = (bench.root / "config" / "models.yaml").read_text(encoding="utf-8")
    base_url = next(line.split(": ", 1)[1] for line in models.splitlines() if "base_url" in line)
    return f"{base_url}/chat/completions"


def path_body(path: Path) -> bytes:
    document = json.loads(path.read_text(encoding="utf-8"))
    body: str = document["interactions"][-1]["request"]["body"]
    return body.encode("utf-8")


def test_ctrl_c_stops_asking_keeps_whole_recordings_and_resumes(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    process: list[subprocess.Popen[bytes]] = []

    def interrupt(number: int) -> None:
        if number == 6:
            os.killpg(process[0].pid, signal.SIGINT)
        if number >= 6:
            process[0].wait(timeout=60)  # no answer from the 6th request on: the session must stop by itself

    fake_server.script.on_request = interrupt
    process.append(_spawn(bench, "--model=fake-model", *SLICE, "--snap-concurrency=4"))
    assert process[0].wait(timeout=120) == pytest.ExitCode.INTERRUPTED
    recorded = bodies(bench.cassettes)
    assert len(recorded) <= 5
    assert not list(bench.cassettes.rglob("*.tmp"))
    first_run = len(fake_server.script.requests)
    fake_server.script.on_request = None
    bench.run("--model=fake-model", *SLICE, "--snap-concurrency=4").assert_outcomes(passed=SLICE_SIZE)
    # Each missing condition asked once. A request the interrupted run had sent may reach the server only after it
    # ended (it sat in the listen queue), counted here with the new run: at most one per slot in flight.
    asked, missing = len(fake_server.script.requests) - first_run, SLICE_SIZE - len(recorded)
    assert missing <= asked <= missing + 4


def test_concurrency_option_value_is_checked(bench: BenchProject) -> None:
    result = bench.run("--model=fake-model", "--snap-concurrency=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--snap-concurrency*0*whole number*"])
