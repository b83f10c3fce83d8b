"""pytest's contract of the plugin, through pytester against the fake server: what xdist's workers report reaches
the controller, the JUnit XML and the HTML report; collection, -k and the commands that only look; a usage error
and the exit statuses as pytest ends with them; the last screen; kill -9 of a session.

Each test starts pytest once (the contract tier's budget): recordings a test needs first are made in-process
(BenchProject.session), and what the session itself decides is tests/session/'s.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import html
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from snap_bench.observations.export import read_jsonl
from snap_bench.report.conditions import embedded_conditions, rows_of
from tests.conftest import SLICE, SLICE_SIZE, BenchProject, with_terminal_signals
from tests.fake_openai_server import FakeOpenAIServer

XDIST = ("-n", "2")
REFUSAL = "As an AI, I don't have personal opinions."


def statement_score(request: dict[str, Any]) -> str:
    """The same answer every run, but a different one per statement (so paraphrases disagree)."""
    text = request["messages"][-1]["content"]
    return str(int(hashlib.sha256(text.encode()).hexdigest(), 16) % 5 + 1)


def report_rows(report: Path) -> dict[str, list[dict[str, Any]]]:
    """pytest-html's per-test data, as the report's script reads it from the data container."""
    blob = re.search(r'id="data-container" data-jsonblob="([^"]*)"', report.read_text(encoding="utf-8"))
    assert blob is not None, "no data container in the report"
    tests: dict[str, list[dict[str, Any]]] = json.loads(html.unescape(blob.group(1)))["tests"]
    return tests


def test_what_the_workers_report_reaches_the_controller_the_junit_xml_and_the_html_report(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    # other-model refuses every question (unscored, not failed); fake-model answers with markup in its answer.
    fake_server.script.answer = lambda request: REFUSAL if request["model"] == "fake/other" else "4 & more"
    args = ("--model=fake-model,other-model", "--snap-items=M01,P01", "--snap-prompts=NEU,DIR", "--snap-temperatures=0")
    per_model = 36 + 18
    result = bench.run(*args, "--snap-show-unscored", "--junitxml=junit.xml", *XDIST)
    result.assert_outcomes(passed=per_model, failed=0)
    assert result.parseoutcomes()["unscored"] == per_model
    assert result.ret == pytest.ExitCode.OK  # nothing judged (--snap-no-analysis): unscored answers alone fail nothing
    result.stdout.fnmatch_lines(
        [f"unscored answers ({per_model}):", "  other-model M01-P1-*: code -1 (*) answer \"As an AI, I don't have*"]
    )
    # every observation reached the controller, written in one order however the workers finished (the one the
    # analysis reads: its sums, and the REML optimiser's path, follow the order of the rows)
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert len({(o.model, o.condition_id) for o in observations}) == 2 * per_model
    assert {o.code for o in observations if o.model == "other-model"} == {-1}
    csv_rows = (bench.out / "observations.csv").read_text(encoding="utf-8").strip().splitlines()
    assert len(csv_rows) == 1 + 2 * per_model
    keys = [(row["model"], row["instrument"], row["condition_id"]) for row in csv.DictReader(csv_rows)]
    assert keys == sorted(keys)
    # the JUnit XML carries each condition's outcome and code
    junit = (bench.root / "junit.xml").read_text(encoding="utf-8")
    assert junit.count('<property name="snap_outcome" value="unscored"') == per_model
    assert junit.count('<property name="answer_code" value="-1"') == per_model
    # the conditions leave pytest-html's table (it would draw each one on opening) for the report's own ...
    report = bench.out / "report.html"
    assert not [node for node in report_rows(report) if "test_likert[" in node]
    text = report.read_text(encoding="utf-8")
    # ... but pytest-html counts each one, as the terminal does
    assert f">{per_model} Passed,<" in text
    assert f">{per_model} Unscored,<" in text
    assert "<th>Links</th>" not in text
    data = re.search(r'<script type="application/gzip\+base64" id="snap-conditions-data">(.*?)</script>', text, re.S)
    assert data is not None
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", data.group(1))  # base64: no markup or entity inside the script
    table = embedded_conditions(text)
    assert table is not None
    assert table["columns"][:3] == ["model", "instrument", "item"]
    assert {"paraphrase", "system_prompt", "temperature", "context", "score", "code", "reason"} <= set(table["columns"])
    rows = rows_of(table)
    assert len(rows) == 2 * per_model
    assert {row["answer"] for row in rows if row["model"] == "fake-model"} == {"4 & more"}
    assert [row["outcome"] for row in rows if row["model"] == "other-model"] == ["unscored"] * per_model
    assert [role for role, _ in rows[0]["messages"]][-1] == "user"  # the full prompt, message by message


def test_collect_only_lists_readable_ids_without_key_and_writes_nothing(
    bench: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    assert bench.pytester is not None
    result = bench.pytester.runpytest_subprocess(
        "benchmarks", "-p", "no:cacheprovider", "--model=fake-model", "--collect-only", "-q"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "benchmarks/test_profile.py::test_likert[[]fake-model-M01-P1-NEU-t0-C0-r1[]]",
            "benchmarks/test_profile.py::test_likert[[]fake-model-P05-P3-ABS-t1-C0-r3[]]",
            "2268 tests collected*",
        ]
    )
    assert not bench.out.exists()
    assert not bench.cassettes.exists()


def test_the_dry_runs_plan_is_what_pytest_collected_and_it_writes_nothing(
    bench: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan's lines themselves are tests/session/test_front_door.py's."""
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    assert bench.pytester is not None
    result = bench.pytester.runpytest_subprocess(
        "benchmarks", "-p", "no:cacheprovider", "--model=fake-model,other-model", "--snap-dry-run"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["collected 4536 items", "*total: 4536 conditions for 2 model(s)*"])
    assert not bench.out.exists()
    assert not bench.cassettes.exists()


def test_help_shows_both_plugins_options_and_writes_nothing(bench: BenchProject) -> None:
    """pytest-recording (installed with the test extra) declares --record-mode; both plugins load together."""
    import importlib.util

    assert importlib.util.find_spec("pytest_recording") is not None  # a dependency of the test extra
    assert bench.pytester is not None
    result = bench.pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--model=fake-model", "--help")
    assert result.ret == pytest.ExitCode.OK, result.stderr.str()
    assert "--record-mode" in result.stdout.str()  # pytest-recording's
    assert "--snap-record-mode" in result.stdout.str()  # ours
    assert not bench.out.exists()
    assert not bench.cassettes.exists()


def test_a_run_narrowed_by_k_misses_nothing(bench: BenchProject) -> None:
    """Under xdist, whose workers deselect (the controller counts none of it): no condition is missed."""
    result = bench.run("--model=fake-model", *SLICE, "-k", "C0", *XDIST)
    result.assert_outcomes(passed=SLICE_SIZE // 2, deselected=0)
    assert "never produced a report" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.OK
    session = json.loads((bench.out / "session.json").read_text(encoding="utf-8"))
    assert session["missing_reports"] == []


def test_unknown_model_is_a_usage_error_as_pytest_prints_it(bench: BenchProject) -> None:
    """Under xdist: the controller's usage error, before a worker starts; the message is tests/session/'s."""
    result = bench.run("--model=gpt-7", *XDIST)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    models = bench.root / "config" / "models.yaml"
    result.stderr.fnmatch_lines([f"*{models}: models: unknown model 'gpt-7'*use one of: *fake-model*"])
    assert "Traceback" not in result.stderr.str()


def test_pytest_ends_with_the_could_not_measure_status(bench: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under xdist: the status the session decides (tests/session/) is the one pytest exits with."""
    assert len(bench.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    (bench.cassettes / "fake-model" / "profile" / "M01-P1-NEU-t0-C0-r1.json").unlink()
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=fake-model", *SLICE, *XDIST, gate=True)
    assert result.ret == 6
    result.stdout.fnmatch_lines(["exit status 6: could not measure: 1 no recording; *"])


def test_the_last_screen_is_the_result_and_progress_stops_at_100(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.answer = statement_score
    two_items = ("--snap-items=M01,M02", *SLICE[1:])  # a G study needs two items to judge
    result = bench.run("--model=fake-model", *two_items, gate=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = result.stdout.lines
    percentages = [int(found) for line in lines for found in re.findall(r"\[\s*(\d+)%\]", line)]
    assert percentages
    assert max(percentages) == 100
    start = next(i for i, line in enumerate(lines) if line == "snap-bench result")
    tail = lines[start:]
    assert any(line.startswith("exit status 1:") for line in tail)
    assert len(tail) <= 15  # the verdicts, their failed checks, the exit reason and pytest's count line
    assert "short test summary info" not in "\n".join(tail)


def test_a_killed_session_loses_at_most_what_was_in_flight(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    """kill -9 of the whole session, controller and xdist workers, mid-asking. Ctrl-C's version of this is
    tests/contract/test_ctrl_c.py's."""
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
            [*command, *XDIST, "--snap-no-analysis"],
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
    os.killpg(process[0].pid, signal.SIGKILL)
    try:
        process[0].wait(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):  # nothing of the session is left running
            os.killpg(process[0].pid, signal.SIGKILL)
    recorded = {path: path.read_bytes() for path in folder.glob("*.json")}
    kept = len(recorded)
    assert 5 <= kept < SLICE_SIZE
    asked_before = len(fake_server.script.requests)
    processes = 2  # the killed session's workers

    fake_server.script.on_request = None
    assert len(bench.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE  # the next run, in-process
    # Only the missing ones are asked. A request the killed run had already sent may reach the server only
    # after the kill (it sat in the listen queue, counted here with the new run): at most one per process.
    asked, missing = len(fake_server.script.requests) - asked_before, SLICE_SIZE - kept
    assert missing <= asked <= missing + processes
    assert len(fake_server.script.requests) - SLICE_SIZE <= processes  # paid and lost: what was in flight
    # ... and what was recorded before the kill replays untouched, never asked again.
    assert all(path.read_bytes() == content for path, content in recorded.items())
    for cassette in folder.glob("*.json"):
        json.loads(cassette.read_text(encoding="utf-8"))  # atomic writes: nothing half-written
    # A writer killed mid-write leaves its temporary file (at most one per writing process); the next
    # session, the one that just ran, removes it.
    assert not list(folder.glob("*.tmp"))
