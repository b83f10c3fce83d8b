"""Statistics, verdicts and the upgrade gate, end to end through pytester against the fake server."""

from __future__ import annotations

import hashlib
import html
import random
import re
from typing import Any

import pytest

from tests.conftest import WORKERS, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

# Two moral and two personality items, one prompt, two temperatures: 2x3x1x2x2x3 + 2x3x1x2x1x3 = 108 conditions.
SLICE = ("--snap-items=M01,M02,P01,P03", "--snap-prompts=NEU", "--snap-temperatures=0,1", "--snap-resamples=200")
SLICE_SIZE = 108


def statement_score(request: dict[str, Any]) -> str:
    """The same answer every run, but a different one per statement (so paraphrases disagree)."""
    text = request["messages"][-1]["content"]
    return str(int(hashlib.sha256(text.encode()).hexdigest(), 16) % 5 + 1)


@pytest.mark.parametrize("workers", WORKERS)
def test_each_threshold_is_a_test_outcome_and_failures_set_the_exit_status(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = statement_score
    junit = bench.root / "junit.xml"
    result = bench.run("--model=fake-model", *SLICE, *workers, f"--junitxml={junit}", "-rA", gate=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # Each paraphrase gets its own answer: a single answer says nothing about its item, at either temperature.
    result.stdout.fnmatch_lines(
        ["fake-model dependability[[]t0[]] = * [[]*, *[]]: BELOW the minimum (minimum >= 0.6, target >= 0.7), n=54"]
    )
    for line in (
        "FAILED snap-bench::thresholds[[]fake-model-profile-dependability[[]t0[]][]]*",
        "FAILED snap-bench::thresholds[[]fake-model-profile-dependability[[]t1[]][]]*",
        "PASSED snap-bench::thresholds[[]fake-model-profile-unscored_rate[]]",
    ):
        result.stdout.fnmatch_lines([line])
    result.stdout.fnmatch_lines(
        [
            "verdicts for profile (thresholds.yaml, judged on point estimates):",
            "  #1 fake-model: FAIL (composite *)",
            "     failed: fake-model dependability[[]t0[]] = *BELOW the minimum*",
        ]
    )
    # failed checks decide the status; the slice's undefined contradiction rates are named as not judged too
    result.stdout.fnmatch_lines(["exit status 1: * threshold check(s) failed*(the exit status follows the thresholds*"])
    xml = junit.read_text(encoding="utf-8")
    assert 'name="thresholds[fake-model-profile-dependability[t1]]"' in xml
    # the original design's figures are reported, not judged
    assert 'name="thresholds[fake-model-profile-icc2_1]"' not in xml
    # every check carries its figures as JUnit properties, a passing one too
    scored = re.search(r'name="thresholds\[fake-model-profile-unscored_rate\]".*?</testcase>', xml, re.S)
    assert scored is not None
    assert '<property name="decision" value="pass"' in scored.group(0)
    assert re.search(r'<property name="value" value="0(\.0)?"', scored.group(0))
    assert f'<property name="n_designed" value="{SLICE_SIZE}"' in scored.group(0)
    # the HTML report has the checks as rows (in its data) and as a table, and counts what the terminal counts
    report = (bench.out / "report.html").read_text(encoding="utf-8")
    assert "snap-bench::thresholds[fake-model-profile-dependability[t0]]" in html.unescape(report)
    assert 'id="snap-check-fake-model-profile-dependability[t0]"' in report
    counts = {label.lower(): int(n) for n, label in re.findall(r">(\d+) (Failed|Passed|Unscored),?<", report)}
    terminal = result.parseoutcomes()
    assert counts == {outcome: terminal.get(outcome, 0) for outcome in ("failed", "passed", "unscored")}
    document = bench.analysis()
    model = document["instruments"]["profile"]["models"]["fake-model"]
    assert model["verdict"] == "FAIL"
    assert model["rank"] == 1
    retest = model["metrics"]["test_retest_r"]
    assert retest["value"] == pytest.approx(1.0)
    assert retest["n"] == 36  # cells: 2x3x2x2 moral + 2x3x2x1 personality
    assert retest["status"] == "not judged"  # the original design's figure, reported only
    assert model["metrics"]["cv_mean"]["value"] == 0.0
    assert set(model["effects"]) >= {"item", "paraphrase", "temperature", "residual"}
    assert sum(model["effects"].values()) == pytest.approx(1.0)


def test_constant_answers_fail(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    """Answering 5 to everything once passed on the runs' agreement; the raw answers carry no item signal."""
    fake_server.script.answer = lambda request: "5"
    result = bench.run("--model=fake-model", *SLICE, "-rA", gate=True)
    result.stdout.fnmatch_lines(["FAILED snap-bench::thresholds[[]fake-model-profile-dependability[[]t0[]][]]*"])
    model = bench.analysis()["instruments"]["profile"]["models"]["fake-model"]
    assert model["metrics"]["dependability[t0]"]["value"] == 0.0
    assert "no item signal" in model["metrics"]["dependability[t0]"]["note"]
    assert model["metrics"]["tara_all_runs"]["status"] == "not judged"
    assert model["verdict"] == "FAIL"
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_threshold_override_from_the_command_line_wins(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    fake_server.script.answer = statement_score
    result = bench.run("--model=fake-model", *SLICE, "--snap-threshold=dependability=-1:-1", "-rA", gate=True)
    result.stdout.fnmatch_lines(["PASSED snap-bench::thresholds[[]fake-model-profile-dependability[[]t1[]][]]"])


@pytest.mark.parametrize("workers", WORKERS)
def test_baseline_gate_passes_an_equal_model_and_fails_a_regression(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = statement_score
    bench.run("--model=fake-model", *SLICE, gate=True)
    bench.run("--model=other-model", *SLICE, gate=True)
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    same = bench.run("--model=other-model", "--baseline=fake-model", *SLICE, *workers, "-rA", gate=True)
    same.stdout.fnmatch_lines(["PASSED snap-bench::thresholds[[]other-model-vs-fake-model-profile-test_retest_r[]]"])
    comparisons = {c["metric"]: c for c in bench.analysis()["baseline"]}
    assert comparisons["test_retest_r"]["difference"] == pytest.approx(0.0)
    assert comparisons["test_retest_r"]["paired"] is True

    # Re-record the new model with answers that change from run to run: its test-retest r collapses.
    rng = random.Random(7)
    fake_server.script.answer = lambda request: str(rng.randint(1, 5))
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    bench.run("--model=other-model", *SLICE, "--snap-record-mode=all", gate=True)
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    worse = bench.run("--model=other-model", "--baseline=fake-model", *SLICE, *workers, "-rA", gate=True)
    assert worse.ret == pytest.ExitCode.TESTS_FAILED
    # the terminal's gate block: one short line per regression; the full reason on the check's own line
    worse.stdout.fnmatch_lines(["  REGRESSION other-model profile test_retest_r: *[[]*], margin *"])
    comparison = {c["metric"]: c for c in bench.analysis()["baseline"]}["test_retest_r"]
    assert str(comparison["message"]).startswith("REGRESSION: worse than the baseline")
    # the noise of the design both answered: each model's answers redrawn within its cells
    assert "fixed design: answers resampled within cells" in str(comparison["message"])
    worse.stdout.fnmatch_lines(["FAILED snap-bench::thresholds[[]other-model-vs-fake-model-profile-test_retest_r[]]*"])


def test_saved_analysis_can_be_the_baseline(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    fake_server.script.answer = statement_score
    bench.run("--model=fake-model", *SLICE, "--snap-json=saved.json", gate=True)
    result = bench.run("--model=other-model", "--baseline=saved.json", *SLICE, "-rA", gate=True)
    result.stdout.fnmatch_lines(
        ["*other-model vs fake-model profile test_retest_r: *unpaired, conservative (saved analysis: intervals*"]
    )


def test_unknown_baseline_is_a_usage_error(bench: BenchProject) -> None:
    result = bench.run("--model=fake-model", "--baseline=nobody", *SLICE, gate=True)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--baseline 'nobody' is neither a known model*"])
