"""The live path under injected faults: `pytest benchmarks` against a loopback server that fails at random.

A throw-away project (the real config and benchmark module) asks a loopback OpenAI-compatible server
(the project's fake, tests/fake_openai_server.py) whose replies fail at a given rate with a mix of
faults: 429 with Retry-After, 5xx, dropped connections, stalls past the timeout, a malformed 200 (an
HTML page) and a 200 with no choices. For each rate it prints the conditions scored, recorded as -3
and errored, the requests per condition (mean and most), and the keys found in everything the run
wrote. Then a run is killed (kill -9 of its process group) once it has been paid some answers and run
again: the answers paid before the kill that the second run asked for again are the ones lost.

Targets: 0 errored, 0 lost, 0 keys, every condition scored or -3 within --snap-max-attempts requests.

It also reports the longest silence: the longest time no request reached the server while the run was
asking (a stall: every condition waiting on one retry, or a wait nobody chose).

``--mix flaky`` draws instead from a flaky provider's faults (a 429 with Retry-After 1 that is no rate limit of
the key, 500, 502, a malformed 200, no choices, an answer after 30 s, a reset) under the default timeout, and
``--paces adaptive,fixed`` runs each rate under both --snap-pace values: the adaptive pace must be no slower than
the fixed one there. ``--max-seconds`` ends a run that takes longer (its process group killed) and reports how
many conditions it had recorded.

    .venv/bin/python -m bench.faults [--items M01] [--runs 3] [--rates 0.2,0.5] [--seed 7] [--concurrency 32]
    .venv/bin/python -m bench.faults --mix flaky --runs 2 --rates 0,0.2,0.5 --paces adaptive,fixed --no-kill
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fake_openai_server import Failure, FakeOpenAIServer, FakeScript

REPO = Path(__file__).resolve().parent.parent
# A fake key shaped like a provider's: the server sees it in every request; nothing written may hold it.
FAKE_KEY = "sk-or-v1-" + "fa17be9c" * 8
KEY_VARIABLE = "FAULT_BENCH_KEY"
MAX_ATTEMPTS = 5
TIMEOUT_S = 2
STALL_S = 3.0
SLOW_ANSWER_S = 30.0
MIXES = ("mixed", "flaky")


def fault_mix(mix: str = "mixed") -> list[Failure]:
    """The faults drawn from, equally likely: ``mixed`` with stalls past the bench's 2 s timeout; ``flaky`` a
    provider whose upstream fails now and then (its 429 is not the key's rate limit: no rate-limit headers)."""
    if mix == "flaky":
        return [
            Failure(429, retry_after="1"),
            Failure(500),
            Failure(502),
            Failure(200, body="<html>Bad gateway</html>"),
            Failure(200, body='{"id": "x", "object": "chat.completion", "choices": []}'),
            Failure(200, delay_s=SLOW_ANSWER_S, slow_answer=True),
            Failure(drop_connection=True),
        ]
    return [
        Failure(429, retry_after="0.5"),
        Failure(500),
        Failure(503),
        Failure(drop_connection=True),
        Failure(503, delay_s=STALL_S),  # the client times out first
        Failure(200, body="<html>Bad gateway</html>"),
        Failure(200, body='{"id": "x", "object": "chat.completion", "choices": []}'),
    ]


def sticky_mix() -> list[Failure]:
    """The faults of a condition that fails every time it is asked: a 500, or a 429 without Retry-After."""
    return [Failure(500), Failure(429)]


class RandomFaults:
    """Stands in for FakeScript.failures: each request fails with probability ``rate``; or, ``sticky``, a
    ``rate`` share of the conditions fail every time they are asked (by a hash of the request body).

    The handler asks ``if failures:`` then ``failures.popleft()`` in the same thread; the draw is kept
    per thread between the two (and the request's body, noted by the ledger as it arrives).
    """

    def __init__(self, rate: float, seed: int, *, sticky: bool = False, mix: str = "mixed") -> None:
        self.rate = rate
        self.sticky = sticky
        self.mix = fault_mix(mix)
        self._seed = seed
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._drawn = threading.local()
        self.injected: Counter[str] = Counter()

    def note_body(self, key: str) -> None:
        self._drawn.body = key

    def __bool__(self) -> bool:
        if self.sticky:
            draw = random.Random(f"{self._seed}:{getattr(self._drawn, 'body', '')}")
            fails = draw.random() < self.rate
            failure = draw.choice(sticky_mix()) if fails else None
        else:
            with self._lock:
                fails = self._rng.random() < self.rate
                failure = self._rng.choice(self.mix) if fails else None
        self._drawn.failure = failure
        return fails

    def popleft(self) -> Failure:
        failure: Failure = self._drawn.failure
        kind = "stall" if failure.delay_s else "reset" if failure.drop_connection else str(failure.status)
        if failure.slow_answer:
            kind = f"{failure.delay_s:.0f} s answer"
        if failure.body is not None:
            kind = "malformed 200" if failure.body.startswith("<") else "empty choices"
        with self._lock:
            self.injected[kind] += 1
        return failure

    def clear(self) -> None:
        """FakeScript's interface; nothing is queued."""


@dataclass
class Ledger:
    """What the server saw: every request's body key, and the bodies it answered with a 200."""

    asked: list[str] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of each request's arrival
    lock: threading.Lock = field(default_factory=threading.Lock)


def body_key(request: dict[str, Any]) -> str:
    return json.dumps(request, sort_keys=True)


def fault_server(
    rate: float, seed: int, ledger: Ledger, *, sticky: bool = False, mix: str = "mixed"
) -> FakeOpenAIServer:
    script = FakeScript()
    faults = RandomFaults(rate, seed, sticky=sticky, mix=mix)
    script.failures = faults  # type: ignore[assignment]

    def answer(request: dict[str, Any]) -> str:
        with ledger.lock:
            ledger.answered.append(body_key(request))
        return "4"

    script.answer = answer
    server = FakeOpenAIServer(script)
    original = script.requests

    class CountingList(list[dict[str, Any]]):
        def append(self, request: dict[str, Any]) -> None:
            with ledger.lock:
                ledger.asked.append(body_key(request))
                ledger.arrivals.append(time.monotonic())
            faults.note_body(body_key(request))  # the same handler thread then draws its fault
            super().append(request)

    script.requests = CountingList(original)
    return server


def make_project(root: Path, base_url: str) -> None:
    (root / "config").mkdir()  # its models.yaml adds the fault model to the packaged ones
    (root / "benchmarks").mkdir()
    shutil.copy(REPO / "benchmarks" / "test_profile.py", root / "benchmarks" / "test_profile.py")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (root / "config" / "models.yaml").write_text(
        f"defaults:\n  base_url: {base_url}\n  api_key_env: {KEY_VARIABLE}\n"
        "models:\n  fault-model:\n    id: fake/fault-model\n",
        encoding="utf-8",
    )


def longest_silence(arrivals: list[float]) -> float:
    """The longest time between two requests reaching the server."""
    ordered = sorted(arrivals)
    return max((later - earlier for earlier, later in itertools.pairwise(ordered)), default=0.0)


def pytest_command(design: list[str], junit: Path, *, timeout_s: float | None = TIMEOUT_S) -> list[str]:
    timeout = [] if timeout_s is None else [f"--snap-timeout={timeout_s:g}"]
    return [
        sys.executable,
        "-m",
        "pytest",
        "benchmarks",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-q",
        "-n",
        "2",
        "--snap-no-analysis",
        "--model=fault-model",
        f"--snap-max-attempts={MAX_ATTEMPTS}",
        *timeout,
        f"--junitxml={junit}",
        *design,
    ]


def environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env[KEY_VARIABLE] = FAKE_KEY
    env["PYTHONPATH"] = str(REPO)
    return env


def keys_written(root: Path, output: str) -> int:
    """How many copies of the key are in the terminal output and every file the run wrote."""
    found = output.count(FAKE_KEY)
    for folder in ("reports", "cassettes"):
        for path in (root / folder).rglob("*"):
            if path.is_file():
                found += path.read_text(encoding="utf-8", errors="replace").count(FAKE_KEY)
    junit = root / "junit.xml"
    if junit.is_file():
        found += junit.read_text(encoding="utf-8", errors="replace").count(FAKE_KEY)
    return found


@dataclass(frozen=True)
class Run:
    """How one measured run is made: the fault mix, the --snap-pace, the timeout (None: the default) and the
    seconds it may take before it is killed (None: no limit)."""

    mix: str = "mixed"
    pace: str = "adaptive"
    timeout_s: float | None = TIMEOUT_S
    max_seconds: float | None = None
    sticky: bool = False


def run_bounded(command: list[str], root: Path, max_seconds: float | None) -> tuple[int | None, str]:
    """Run ``command`` in its own process group; kill the group after ``max_seconds``. Its exit status (None if
    killed) and its output."""
    with tempfile.TemporaryFile(mode="w+") as output:
        process = subprocess.Popen(
            command, cwd=root, env=environment(), stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            status: int | None = process.wait(timeout=max_seconds)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            status = None
        output.seek(0)
        return status, output.read()


def measure(rate: float, design: list[str], seed: int, run: Run) -> dict[str, Any]:
    ledger = Ledger()
    with (
        tempfile.TemporaryDirectory(prefix="snap-faults-") as folder,
        fault_server(rate, seed, ledger, sticky=run.sticky, mix=run.mix) as server,
    ):
        root = Path(folder)
        make_project(root, server.base_url)
        command = [*pytest_command(design, root / "junit.xml", timeout_s=run.timeout_s), f"--snap-pace={run.pace}"]
        started = time.perf_counter()
        status, output = run_bounded(command, root, run.max_seconds)
        elapsed = time.perf_counter() - started
        faults = server.script.failures
        common = {
            "rate": rate,
            "pace": run.pace,
            "finished": status is not None,
            "requests": len(ledger.asked),
            "injected": dict(faults.injected) if isinstance(faults, RandomFaults) else {},
            "keys_written": keys_written(root, output),
            "exit_status": status,
            "seconds": elapsed,
            "longest_silence": longest_silence(ledger.arrivals),
            "retry_lines": [line for line in output.splitlines() if "retr" in line.lower()][:5],
            "pace_line": next((line for line in output.splitlines() if line.startswith("pace: ")), "(none)"),
            "recorded": sum(1 for _ in (root / "cassettes").rglob("*.json")),
        }
        if status is None:
            return common
        if not (root / "reports" / "session.json").is_file():
            raise RuntimeError(f"the run wrote no reports/session.json (exit status {status}):\n{output[-3000:]}")
        session = json.loads((root / "reports" / "session.json").read_text(encoding="utf-8"))
        coverage = session["coverage"]["fault-model"]
        observations = [
            json.loads(line)
            for line in (root / "reports" / "observations.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        return {
            **common,
            "conditions": coverage["designed"],
            "scored": sum(o["code"] is None for o in observations),
            "api_errors": sum(o["code"] == -3 for o in observations),
            "errored": coverage["designed"] - len(observations),
            "requests_per_condition": len(ledger.asked) / max(coverage["designed"], 1),
            # Each observation counts the attempts its condition took; their sum is every request sent.
            "attempts_recorded": sum(o["attempts"] for o in observations),
            "most_attempts": max((o["attempts"] for o in observations), default=0),
        }


def describe(figures: dict[str, Any]) -> str:
    """One line on a measured run."""
    said = f"faults {figures['rate']:.0%}, --snap-pace={figures['pace']}: "
    if not figures["finished"]:
        return (
            f"{said}not finished after {figures['seconds']:.0f} s ({figures['recorded']} conditions recorded, "
            f"{figures['requests']} requests); keys written {figures['keys_written']}"
        )
    return (
        f"{said}{figures['conditions']} conditions: {figures['scored']} scored, "
        f"{figures['api_errors']} -3, {figures['errored']} errored; {figures['requests']} requests "
        f"({figures['requests_per_condition']:.2f} per condition, {figures['attempts_recorded']} attempts "
        f"recorded, at most {figures['most_attempts']} for one); keys written "
        f"{figures['keys_written']}; exit status {figures['exit_status']}; {figures['seconds']:.0f} s; "
        f"longest silence {figures['longest_silence']:.1f} s"
    )


def kill_and_rerun(rate: float, design: list[str], seed: int, kill_after: int) -> dict[str, Any]:
    """Kill -9 a run once ``kill_after`` answers were paid, run again; count recorded answers asked again."""
    ledger = Ledger()
    with tempfile.TemporaryDirectory(prefix="snap-faults-kill-") as folder, fault_server(rate, seed, ledger) as server:
        root = Path(folder)
        make_project(root, server.base_url)
        command = pytest_command(design, root / "junit.xml")
        # Its own process group, so that the kill reaches the xdist workers too (and only them).
        process = subprocess.Popen(
            command,
            cwd=root,
            env=environment(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        while process.poll() is None and len(ledger.answered) < kill_after:
            time.sleep(0.05)
        killed = process.poll() is None
        if killed:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        # The runs of a cell send the same body, so answers are followed by condition through the
        # recordings: one file per condition.
        paid_before = len(ledger.answered)
        recorded = {path.stem for path in (root / "cassettes").rglob("*.json")}
        run = subprocess.run(command, cwd=root, env=environment(), capture_output=True, text=True, check=False)
        observations = [
            json.loads(line)
            for line in (root / "reports" / "observations.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        asked_again = [o for o in observations if not o["replayed"] and o["condition_id"] in recorded]
        return {
            "killed": killed,
            "paid_before_kill": paid_before,
            "recorded_at_kill": len(recorded),
            # Paid for but never written: a reply in flight when the process died.
            "in_flight": paid_before - len(recorded),
            "lost": len(asked_again),
            "conditions": len(observations),
            "replayed": sum(o["replayed"] for o in observations),
            "rerun_exit_status": run.returncode,
            "keys_written": keys_written(root, run.stdout + run.stderr),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="M01")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rates", default="0.2,0.5")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--kill-after", type=int, default=30, help="answers paid before the kill -9")
    parser.add_argument("--prompts", default="NEU,DIR")
    parser.add_argument("--temperatures", default="0,0.5,1")
    parser.add_argument("--concurrency", type=int, default=None, help="--snap-concurrency (default: none)")
    parser.add_argument("--no-kill", action="store_true", help="leave out the kill -9 and re-run")
    parser.add_argument(
        "--sticky", action="store_true", help="a share of the conditions fail every attempt (500 or 429) instead"
    )
    parser.add_argument("--mix", choices=MIXES, default="mixed", help="the faults drawn from (see above)")
    parser.add_argument("--paces", default="adaptive", help="the --snap-pace values to run each rate under")
    parser.add_argument("--max-seconds", type=float, default=None, help="kill a run that takes longer")
    arguments = parser.parse_args()
    design = [
        f"--snap-items={arguments.items}",
        f"--snap-prompts={arguments.prompts}",
        f"--snap-temperatures={arguments.temperatures}",
        f"--snap-runs={arguments.runs}",
    ]
    if arguments.concurrency:
        design.append(f"--snap-concurrency={arguments.concurrency}")
    # The flaky provider's slow answer is an answer: it is waited for under the default timeout.
    timeout_s = None if arguments.mix == "flaky" else TIMEOUT_S
    print(f"bench.faults: pytest benchmarks -n 2 live against a loopback server, {' '.join(design)}")
    print(
        f"  {arguments.mix} faults, attempt bound {MAX_ATTEMPTS}, timeout "
        f"{'the default' if timeout_s is None else f'{timeout_s} s'}, fake key {FAKE_KEY[:12]}..."
    )
    for rate in (float(value) for value in arguments.rates.split(",")):
        for pace in arguments.paces.split(","):
            run = Run(arguments.mix, pace, timeout_s, arguments.max_seconds, arguments.sticky)
            figures = measure(rate, design, arguments.seed, run)
            print(describe(figures))
            print(f"  faults injected: {', '.join(f'{k} {v}' for k, v in sorted(figures['injected'].items()))}")
            print(f"  terminal: {figures['pace_line']}")
            for line in figures["retry_lines"]:
                print(f"  terminal: {line}")
    if arguments.no_kill:
        return
    rate = float(arguments.rates.split(",")[0])
    kill = kill_and_rerun(rate, design, arguments.seed + 1, arguments.kill_after)
    print(
        f"kill -9 at {rate:.0%} faults after {kill['paid_before_kill']} paid answers "
        f"({kill['recorded_at_kill']} recorded, {kill['in_flight']} in flight), then run again: "
        f"{kill['replayed']} of {kill['conditions']} replayed, {kill['lost']} recorded answers asked again (lost); "
        f"keys written {kill['keys_written']}; re-run exit status {kill['rerun_exit_status']}"
    )


if __name__ == "__main__":
    main()
