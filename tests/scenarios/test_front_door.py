"""The front door: what the exit status, the terminal and the output folder say of a benchmark session.

Through pytester against the fake server, plain and under xdist (-n 2).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SLICE, SLICE_SIZE, WORKERS, BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.scenarios.test_gate import statement_score

NOT_MEASURED = 6  # README: exit status 6, the run could not measure what it was asked to


@pytest.mark.parametrize("workers", WORKERS)
def test_exit_status_follows_the_checks_not_the_unscored_answers(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    # One refusal in 18 answers: it is counted and judged through the unscored rate, not a failed test.
    answers = iter(["As an AI, I cannot answer."] + ["4"] * (SLICE_SIZE - 1))
    fake_server.script.answer = lambda request: next(answers)
    bench.run("--model=fake-model", *SLICE, "-n", "0").parseoutcomes()
    loose = ("--snap-threshold=unscored_rate=0.1:0.1", "--snap-threshold=dependability=-1:-1")
    result = bench.run("--model=fake-model", *SLICE, *workers, *loose, gate=True)
    outcomes = result.parseoutcomes()
    assert outcomes["unscored"] == 1
    assert outcomes["passed"] >= SLICE_SIZE - 1
    assert "failed" not in outcomes
    # One item leaves dependability and the contradiction rate undefined: the gate is incomplete, never green,
    # and the refusal is no part of why.
    assert result.ret == 6
    result.stdout.fnmatch_lines(["exit status 6: the gate is incomplete: * gated check(s) not judged*"])
    # The same answers judged against a stricter unscored rate: the check fails and only it sets the status.
    strict = bench.run("--model=fake-model", *SLICE, *workers, "--snap-threshold=unscored_rate=0.01:0.01", gate=True)
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(["*fake-model unscored_rate = 0.056*ABOVE the maximum (maximum <= 0.01*"])


@pytest.mark.parametrize("workers", WORKERS)
def test_a_missing_recording_is_the_could_not_measure_status(
    bench: BenchProject, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    bench.run("--model=fake-model", *SLICE).assert_outcomes(passed=SLICE_SIZE)
    (bench.cassettes / "fake-model" / "profile" / "M01-P1-NEU-t0-C0-r1.json").unlink()
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=fake-model", *SLICE, *workers, gate=True)
    assert result.ret == NOT_MEASURED
    result.stdout.fnmatch_lines(["exit status 6: could not measure: 1 no recording; *"])


def test_the_last_screen_is_the_result_and_progress_stops_at_100(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.answer = statement_score
    two_items = ("--snap-items=M01,M02", *SLICE[1:])  # a G study needs two items to judge
    result = bench.run("--model=fake-model", *two_items, gate=True)
    lines = result.stdout.lines
    percentages = [int(found) for line in lines for found in re.findall(r"\[\s*(\d+)%\]", line)]
    assert percentages
    assert max(percentages) == 100
    start = next(i for i, line in enumerate(lines) if line == "snap-bench result")
    tail = lines[start:]
    assert any(line.startswith("exit status 1:") for line in tail)
    assert len(tail) <= 15  # the verdicts, their failed checks, the exit reason and pytest's count line
    assert "short test summary info" not in "\n".join(tail)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(("--collect-only", "-q"), id="collect-only"),
        pytest.param(("--snap-dry-run",), id="dry-run"),
        pytest.param(("--help",), id="help"),
    ],
)
def test_commands_that_only_look_write_nothing(bench: BenchProject, command: tuple[str, ...]) -> None:
    result = bench.pytester.runpytest_subprocess("benchmarks", "-p", "no:cacheprovider", "--model=fake-model", *command)
    assert result.ret == pytest.ExitCode.OK
    assert not bench.out.exists()
    assert not bench.cassettes.exists()


@pytest.mark.parametrize("workers", WORKERS)
def test_a_run_narrowed_by_k_misses_nothing(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    result = bench.run("--model=fake-model", *SLICE, "-k", "C0", *workers)
    # xdist does not count what its workers deselected; the plain run does.
    result.assert_outcomes(passed=SLICE_SIZE // 2, deselected=0 if workers else SLICE_SIZE // 2)
    assert "never produced a report" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.OK
    session = json.loads((bench.out / "session.json").read_text(encoding="utf-8"))
    assert session["missing_reports"] == []


@pytest.mark.parametrize("workers", WORKERS)
def test_a_model_gated_against_its_own_baseline_file_passes_and_a_changed_one_fails(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = statement_score
    gate_slice = ("--snap-items=M01,M02,P01,P03", "--snap-prompts=NEU", "--snap-temperatures=0,1")
    saved = bench.run("--model=fake-model", *gate_slice, "--snap-save-baseline=baselines/{model}.json", gate=True)
    saved.stdout.fnmatch_lines(["baseline written: */baselines/fake-model.json"])
    baseline = bench.root / "baselines" / "fake-model.json"
    document = json.loads(baseline.read_text(encoding="utf-8"))
    assert document["model"] == "fake-model"
    assert len(document["observations"]) == 108
    assert "messages" not in document["observations"][0]

    monkeypatch.delenv("FAKE_OPENAI_KEY")
    same = bench.run(
        "--model=fake-model", *gate_slice, f"--baseline={baseline}", "--snap-gate=baseline", *workers, gate=True
    )
    # The thresholds fail for these answers (paraphrases disagree), but the exit status follows the gate.
    assert same.ret == pytest.ExitCode.OK, same.stdout.str()
    assert same.parseoutcomes()["ungated"] >= 1
    comparisons = {c["metric"]: c for c in json.loads((bench.out / "analysis.json").read_text())["baseline"]}
    assert set(comparisons) >= {"test_retest_r", "icc2_1", "unscored_rate"}
    assert all(c["difference"] == 0 for c in comparisons.values())

    # Every other answer now refused: the unscored rate regresses against the same baseline file.
    count = iter(range(10_000))
    fake_server.script.answer = lambda request: "I cannot answer." if next(count) % 2 else statement_score(request)
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    bench.run("--model=fake-model", *gate_slice, "--snap-record-mode=all")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    worse = bench.run(
        "--model=fake-model", *gate_slice, f"--baseline={baseline}", "--snap-gate=baseline", *workers, gate=True
    )
    assert worse.ret == pytest.ExitCode.TESTS_FAILED
    # the terminal's gate block names the regression in one short line; analysis.json keeps the full reason
    worse.stdout.fnmatch_lines(["  REGRESSION fake-model profile unscored_rate: *[[]*], margin *"])
    regression = {c["metric"]: c for c in bench.analysis()["baseline"]}["unscored_rate"]
    assert str(regression["message"]).startswith("REGRESSION: ")
    assert "fake-model vs fake-model@baseline profile unscored_rate" in str(regression["message"])
    assert "fixed design: run-to-run variance within cells" in str(regression["message"])


def test_gate_on_a_baseline_needs_one(bench: BenchProject) -> None:
    result = bench.run("--model=fake-model", *SLICE, "--snap-gate=baseline")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--snap-gate=baseline: *no --baseline was given. Fix:*"])
    assert "Traceback" not in result.stderr.str()


def test_no_option_clash_with_pytest_recording(tmp_path: Path) -> None:
    """pytest-recording (installed with the test extra) declares --record-mode; both plugins load together."""
    import importlib.util

    assert importlib.util.find_spec("pytest_recording") is not None  # a dependency of the test extra
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "--record-mode" in result.stdout  # pytest-recording's
    assert "--snap-record-mode" in result.stdout  # ours
