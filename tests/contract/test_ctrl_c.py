"""Ctrl-C stops every process's asking within a second: the controller alone signalled (a CI runner cancelling
the job, ``kill -INT``) or the whole process group (a terminal's Ctrl-C), plain and under xdist, early or
late in the session.

The fake answers slowly; the requests that arrive more than a second after the session knew of the interrupt
(its flag, which every process looks at before each request, went up) are ones a process sent although the
session had been interrupted. Counted from the flag, not from the signal: a controller descheduled between the
two on a busy machine is no defect. The bound allows for one round of the slots in flight. What was recorded
before the interrupt survives it whole, and the next run (in-process) asks only for what is missing.

Each test starts pytest once (the contract tier's budget); the session end's own handling of a second Ctrl-C is
tests/unit/session/test_second_ctrl_c.py's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from snap_bench.asking.interruption import InterruptFlag
from tests.conftest import BenchProject, spawn_benchmarks
from tests.fake_openai_server import FakeOpenAIServer

# 1 item x 3 paraphrases x 2 prompts x 2 temperatures x 2 contexts x 3 runs: seconds of asking at the fake's
# pace, far more than is asked before the interrupt, so that a process that goes on asking shows.
DESIGN = ("--snap-items=M01", "--snap-prompts=NEU,DIR", "--snap-temperatures=0,1")
DESIGN_SIZE = 72
CONCURRENCY = 4
ANSWER_S = 0.2
GRACE_S = 1.0
# How long the session may take to end by itself once interrupted (generous: a busy machine).
EXIT_WAIT_S = 120.0


class Interrupter:
    """Sends SIGINT when the ``at``-th request arrives, and counts the requests that arrive more than the
    grace after the session's interrupt flag went up."""

    def __init__(self, at: int, whole_group: bool, flag: Path) -> None:
        self.at = at
        self.whole_group = whole_group
        self.flag = flag
        self.process: subprocess.Popen[bytes] | None = None
        self.sent_at: float | None = None  # wall clock, as the flag's mtime
        self.late = 0
        self._lock = threading.Lock()

    def flag_raised_at(self) -> float | None:
        try:
            return self.flag.stat().st_mtime
        except FileNotFoundError:
            return None

    def __call__(self, number: int) -> None:
        with self._lock:
            if number == self.at and self.sent_at is None and self.process is not None:
                if self.whole_group:
                    os.killpg(self.process.pid, signal.SIGINT)
                else:
                    os.kill(self.process.pid, signal.SIGINT)
                self.sent_at = time.time()
            raised_at = self.flag_raised_at()
            if raised_at is not None and time.time() > raised_at + GRACE_S:
                self.late += 1


def _wait_for_group(pid: int) -> bool:
    """Wait (bounded) until no process of the run's group is left: a worker must not outlive its session."""
    deadline = time.monotonic() + EXIT_WAIT_S
    while time.monotonic() < deadline:
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    os.killpg(pid, signal.SIGKILL)
    return False


# Early (the first request) and late (the eighth: recordings made, slots in flight), each way the signal comes.
@pytest.mark.parametrize(
    ("workers", "whole_group", "at_request"),
    [
        pytest.param((), False, 8, id="plain-late"),
        pytest.param(("-n", "2"), False, 1, id="xdist-controller-only-early"),
        pytest.param(("-n", "2"), True, 8, id="xdist-whole-group-late"),
    ],
)
def test_ctrl_c_stops_every_process_from_asking(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...], whole_group: bool, at_request: int
) -> None:
    interrupter = Interrupter(at_request, whole_group, InterruptFlag(bench.out).path)
    fake_server.script.latency_s = ANSWER_S
    fake_server.script.on_request = interrupter
    process = spawn_benchmarks(bench, "--model=fake-model", *DESIGN, f"--snap-concurrency={CONCURRENCY}", *workers)
    interrupter.process = process
    try:
        returned = process.wait(timeout=EXIT_WAIT_S)
    finally:
        gone = _wait_for_group(process.pid)
    assert gone, "a process of the interrupted session was still running"
    assert returned == pytest.ExitCode.INTERRUPTED
    assert interrupter.sent_at is not None
    # The session knew of the interrupt: its flag went up after the signal, within what a busy machine takes.
    raised_at = interrupter.flag_raised_at()
    assert raised_at is not None, "the interrupt never reached the flag the session's processes look at"
    assert interrupter.sent_at - 1.0 <= raised_at <= interrupter.sent_at + 30.0
    asked = len(fake_server.script.requests)
    assert asked < DESIGN_SIZE
    # Nothing is sent once the interrupt is known; a process that saw it late may have one round of slots out.
    assert interrupter.late <= CONCURRENCY, f"{interrupter.late} requests after the grace, {asked} in all"
    # What was recorded before the interrupt is whole, and the next run asks only for what is missing.
    folder = bench.cassettes / "fake-model" / "profile"
    recorded = {path: path.read_bytes() for path in folder.glob("*.json")}
    for content in recorded.values():
        json.loads(content)  # atomic writes: nothing half-written
    fake_server.script.latency_s = 0.0
    fake_server.script.on_request = None
    resumed = bench.session("--model=fake-model", *DESIGN)  # in-process: no pytest session of its own
    assert len(resumed.observations) == DESIGN_SIZE
    # A request sent before the interrupt may be counted after it (the listen queue): one round of slots.
    in_flight = CONCURRENCY * (2 if workers else 1)
    missing = DESIGN_SIZE - len(recorded)
    assert missing <= len(fake_server.script.requests) - asked <= missing + in_flight
    assert all(path.read_bytes() == content for path, content in recorded.items())
    assert not list(folder.glob("*.tmp"))


# A conftest that interrupts a process's third test from a frame CPython gives no line number, as a real
# Ctrl-C sometimes finds (on 3.11 its traceback shows "line -1"): every entry of the function's location table
# says "no location". pytest's rendering of the interrupt fails on such a frame (TypeError on None - 1).
NO_LINE_INTERRUPT = """
import pytest

def interrupt():
    raise KeyboardInterrupt

units = len(interrupt.__code__.co_code) // 2
NO_LOCATION = 0x80 | (15 << 3)
table = bytes([NO_LOCATION | 7]) * (units // 8) + (bytes([NO_LOCATION | (units % 8 - 1)]) if units % 8 else b"")
interrupt.__code__ = interrupt.__code__.replace(co_linetable=table)
ran = []

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    ran.append(item.nodeid)
    if len(ran) == 3:
        interrupt()
    return (yield)
"""


def test_an_interrupt_pytest_cannot_render_still_ends_the_session_interrupted(bench: BenchProject) -> None:
    """In the controller's own process, where pytest renders the interrupt's location."""
    (bench.root / "conftest.py").write_text(NO_LINE_INTERRUPT, encoding="utf-8")
    result = bench.run("--model=fake-model", *DESIGN)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["exit status 2: interrupted*"])
    assert "TypeError" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*conftest.py:*: KeyboardInterrupt"])  # shown where it landed


# The first Ctrl-C interrupts a process's third test; the controller sends itself the second while pytest handles
# the first (it renders the first's traceback there, for about a second: the moment a user presses it again).
SECOND_CTRL_C = """
import os
import signal
import threading

import pytest

if threading.current_thread() is threading.main_thread():
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a terminal's foreground process has it
ran = []
controller = []

def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        controller.append(True)

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    ran.append(item.nodeid)
    if len(ran) == 3:
        raise KeyboardInterrupt
    return (yield)

@pytest.hookimpl(trylast=True)
def pytest_keyboard_interrupt(excinfo):
    if controller:
        os.kill(os.getpid(), signal.SIGINT)
"""


def test_a_second_ctrl_c_ends_the_session_interrupted_without_a_traceback_or_a_half_written_file(
    bench: BenchProject,
) -> None:
    """In one process: pytest's handling of the first Ctrl-C is where the second comes."""
    (bench.root / "conftest.py").write_text(SECOND_CTRL_C, encoding="utf-8")
    result = bench.run("--model=fake-model", *DESIGN)
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED, output
    # The last line says the status the process exits with, and what the session end did not write.
    not_written = "a second Ctrl-C ended the session before it wrote *observations.csv, session.json*"
    result.stdout.fnmatch_lines([f"exit status 2: interrupted*; {not_written}"])
    assert "Traceback" not in output
    assert not (bench.out / "observations.csv").exists()
    assert not [path.name for path in bench.out.iterdir() if path.name.endswith(".tmp")]


@pytest.mark.usefixtures("pythons_ctrl_c")
def test_the_plugin_gives_pythons_ctrl_c_back_when_pytest_unconfigures(pytester: pytest.Pytester) -> None:
    """pytest run in-process goes on after the session: its unconfigure hands Python's own Ctrl-C back (a parsed
    config and the plugin's hook, no session run)."""
    from snap_bench.plugin.session import SnapSession
    from snap_bench.session.settings import SessionSettings

    config = pytester.parseconfig()
    session = SnapSession(config, SessionSettings.from_config(config))
    session.stage.active = True
    python_handler = signal.getsignal(signal.SIGINT)
    try:
        session.stage.later_ctrl_c.take_over()
        assert signal.getsignal(signal.SIGINT) is not python_handler
        session.pytest_unconfigure()
        assert signal.getsignal(signal.SIGINT) is python_handler
    finally:
        signal.signal(signal.SIGINT, python_handler)
