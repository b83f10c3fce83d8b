"""--snap-concurrency under pytest, in processes of their own: xdist's workers share the session's claims (each
condition asked once, with up to n in flight), a kill -9 of the whole process group loses only what was in
flight, and Ctrl-C ends the session without waiting for the answers in flight. The session's own behaviour,
in-process: tests/session/test_concurrency.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from snap_bench.observations.export import read_jsonl
from snap_bench.recordings.cassettes import CassetteState, examine
from tests.conftest import SLICE, SLICE_SIZE, BenchProject, spawn_benchmarks
from tests.fake_openai_server import FakeOpenAIServer
from tests.session.asking_checks import asked, bodies, outcomes

XDIST = ("-n", "2")


def test_every_condition_is_asked_once_across_workers_with_up_to_n_in_flight(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    # The first requests are held until 4 are in flight at once. The fixed pace sends all 4 from the first request.
    fake_server.script.hold_until = 4
    result = bench.run("--model=fake-model", *SLICE, "--snap-concurrency=4", "--snap-pace=fixed", *XDIST)
    result.assert_outcomes(passed=SLICE_SIZE)
    assert fake_server.script.max_in_flight == 4
    # The workers' claims: no condition asked by both.
    assert sorted(asked(fake_server)) == sorted(bodies(bench.cassettes).values())
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert len(observations) == SLICE_SIZE
    assert not any(o.replayed for o in observations)
    assert all(o.score == 4 for o in observations)
    # Every recording replays (the session in-process): nothing more is sent.
    assert outcomes(bench.session("--model=fake-model", *SLICE, "--snap-concurrency=4")) == {"passed": SLICE_SIZE}
    assert len(fake_server.script.requests) == SLICE_SIZE


def path_uri(bench: BenchProject) -> str:
    models = (bench.root / "config" / "models.yaml").read_text(encoding="utf-8")
    base_url = next(line.split(": ", 1)[1] for line in models.splitlines() if "base_url" in line)
    return f"{base_url}/chat/completions"


def path_body(path: Path) -> bytes:
    document = json.loads(path.read_text(encoding="utf-8"))
    body: str = document["interactions"][-1]["request"]["body"]
    return body.encode("utf-8")


def test_kill_9_mid_run_loses_only_what_was_in_flight_and_resumes_without_re_asking(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    concurrency, at_request, processes = 4, 5, 2
    process: list[subprocess.Popen[bytes]] = []
    killed: list[int] = []

    def kill(number: int) -> None:
        if number >= at_request and not killed:  # once, even where two requests arrive with the same count
            killed.append(number)
            os.killpg(process[0].pid, signal.SIGKILL)

    fake_server.script.on_request = kill
    process.append(spawn_benchmarks(bench, "--model=fake-model", *SLICE, f"--snap-concurrency={concurrency}", *XDIST))
    assert process[0].wait(timeout=120) == -signal.SIGKILL
    answered_before_kill = fake_server.script.answered
    recorded = bodies(bench.cassettes)  # every file left behind is a whole cassette
    assert answered_before_kill - len(recorded) <= concurrency  # nothing paid lost beyond the requests in flight
    for path in bench.cassettes.rglob("*.json"):
        assert examine(path, "POST", f"{path_uri(bench)}", path_body(path))[0] is CassetteState.MATCHES
    first_run = len(fake_server.script.requests)
    kept = {path: path.read_bytes() for path in bench.cassettes.rglob("*.json")}
    fake_server.script.on_request = None
    # The resumed session, in-process: what the killed one left is all it reads.
    result = bench.session("--model=fake-model", *SLICE, f"--snap-concurrency={concurrency}")
    assert outcomes(result) == {"passed": SLICE_SIZE}
    # Runs of a condition send the same body, so count: each missing condition asked once. A request the killed
    # run had already sent may reach the server only after the kill (it sat in the listen queue), so up to one
    # per request in flight, `concurrency` per process, is counted here too; whatever the moment of the kill.
    asked_again, missing = len(fake_server.script.requests) - first_run, SLICE_SIZE - len(recorded)
    assert missing <= asked_again <= missing + concurrency * processes
    # Nothing recorded was asked again: a recording that matched is replayed, never rewritten.
    assert all(path.read_bytes() == content for path, content in kept.items())
    after = bodies(bench.cassettes)
    assert len(after) == SLICE_SIZE
    assert all(after[name] == body for name, body in recorded.items())


def test_ctrl_c_stops_asking_keeps_whole_recordings_and_resumes(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    process: list[subprocess.Popen[bytes]] = []
    sent: list[int] = []

    def interrupt(number: int) -> None:
        if number >= 6 and not sent:  # once, even where two requests arrive with the same count
            sent.append(number)
            os.killpg(process[0].pid, signal.SIGINT)
        if number >= 6:
            process[0].wait(timeout=60)  # no answer from the 6th request on: the session must stop by itself

    fake_server.script.on_request = interrupt
    process.append(spawn_benchmarks(bench, "--model=fake-model", *SLICE, "--snap-concurrency=4"))
    assert process[0].wait(timeout=120) == pytest.ExitCode.INTERRUPTED
    recorded = bodies(bench.cassettes)
    assert len(recorded) <= 5
    assert not list(bench.cassettes.rglob("*.tmp"))
    first_run = len(fake_server.script.requests)
    fake_server.script.on_request = None
    # The resumed session, in-process.
    assert outcomes(bench.session("--model=fake-model", *SLICE, "--snap-concurrency=4")) == {"passed": SLICE_SIZE}
    # Each missing condition asked once. A request the interrupted run had sent may reach the server only after it
    # ended (it sat in the listen queue), counted here with the new run: at most one per slot in flight.
    asked_again, missing = len(fake_server.script.requests) - first_run, SLICE_SIZE - len(recorded)
    assert missing <= asked_again <= missing + 4
