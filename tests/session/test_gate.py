"""Statistics, verdicts and the upgrade gate, each session run in-process against the fake server. The
answers of fake-model and other-model are recorded once for the module and replayed from a copy; how pytest shows
the checks (test outcomes, JUnit XML, the HTML report) is tests/contract/test_gate.py's."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from snap_bench.session.run import SessionResult
from snap_bench.session.settings import UsageProblem
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.session.gate_projects import copy_recordings, record, recording_project, statement_score

# Two moral and two personality items, one prompt, two temperatures: 2x3x1x2x2x3 + 2x3x1x2x1x3 = 108 conditions.
SLICE = ("--snap-items=M01,M02,P01,P03", "--snap-prompts=NEU", "--snap-temperatures=0,1", "--snap-resamples=200")
SLICE_SIZE = 108
Recorded = tuple[BenchProject, FakeOpenAIServer]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """fake-model's and other-model's answers to the slice (one answer per statement, the same every run), asked
    once for the module, and the fake server they were recorded from (alive: a recording replays from its URL)."""
    folder = tmp_path_factory.mktemp("statement-scores")
    with recording_project(folder, statement_score, ("profile",)) as (project, server):
        record(project, "--model=fake-model", *SLICE)
        record(project, "--model=other-model", *SLICE)
        yield project, server


@pytest.fixture
def replayed(recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """A copy of the recorded project; no key: its sessions replay."""
    monkeypatch.delenv("FAKE_OPENAI_KEY", raising=False)
    root = tmp_path / "project"
    root.mkdir()
    project = BenchProject(root, recorded[1].base_url)
    copy_recordings(recorded[0], project)
    return project


def lines(result: SessionResult) -> pytest.LineMatcher:
    return pytest.LineMatcher(list(result.summary))


def test_each_threshold_is_a_check_and_failures_set_the_exit_status(replayed: BenchProject) -> None:
    result = replayed.session("--model=fake-model", *SLICE, gate=True)
    assert result.exit_status == pytest.ExitCode.TESTS_FAILED
    # Each paraphrase gets its own answer: a single answer says nothing about its item, at either temperature.
    pytest.LineMatcher([result.check("fake-model-profile-dependability[t0]").message]).fnmatch_lines(
        ["fake-model dependability[[]t0[]] = * [[]*, *[]]: BELOW the minimum (minimum >= 0.6, target >= 0.7), n=54"]
    )
    assert result.check("fake-model-profile-dependability[t0]").fails_run
    assert result.check("fake-model-profile-dependability[t1]").fails_run
    unscored = result.check("fake-model-profile-unscored_rate")
    assert unscored.passed
    assert unscored.category is None
    lines(result).fnmatch_lines(
        [
            "verdicts for profile (thresholds.yaml, judged on point estimates):",
            "  #1 fake-model: FAIL (composite *)",
            "     failed: fake-model dependability[[]t0[]] = *BELOW the minimum*",
        ]
    )
    # failed checks decide the status; the slice's undefined contradiction rates are named as not judged too
    lines(result).fnmatch_lines(["exit status 1: * threshold check(s) failed*(the exit status follows the thresholds*"])
    names = {check.name for check in result.checks}
    assert "fake-model-profile-dependability[t1]" in names
    # the original design's figures are reported, not judged
    assert "fake-model-profile-icc2_1" not in names
    # every check carries its figures (the JUnit properties), a passing one too
    assert unscored.record.decision == "pass"
    assert unscored.record.value == 0
    assert unscored.record.n_designed == SLICE_SIZE
    document = replayed.analysis()
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


def test_constant_answers_fail(project: BenchProject, fake_server: FakeOpenAIServer) -> None:
    """Answering 5 to everything once passed on the runs' agreement; the raw answers carry no item signal."""
    fake_server.script.answer = lambda request: "5"
    result = project.session("--model=fake-model", *SLICE, gate=True)
    assert result.check("fake-model-profile-dependability[t0]").fails_run
    model = project.analysis()["instruments"]["profile"]["models"]["fake-model"]
    assert model["metrics"]["dependability[t0]"]["value"] == 0.0
    assert "no item signal" in model["metrics"]["dependability[t0]"]["note"]
    assert model["metrics"]["tara_all_runs"]["status"] == "not judged"
    assert model["verdict"] == "FAIL"
    assert result.exit_status == pytest.ExitCode.TESTS_FAILED


def test_threshold_override_from_the_command_line_wins(replayed: BenchProject) -> None:
    result = replayed.session("--model=fake-model", *SLICE, "--snap-threshold=dependability=-1:-1", gate=True)
    check = result.check("fake-model-profile-dependability[t1]")
    assert check.passed
    assert check.category is None


def test_baseline_gate_passes_an_equal_model_and_fails_a_regression(
    replayed: BenchProject, recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    same = replayed.session("--model=other-model", "--baseline=fake-model", *SLICE, gate=True)
    check = same.check("other-model-vs-fake-model-profile-test_retest_r")
    assert check.passed
    assert check.category is None
    comparisons = {c["metric"]: c for c in replayed.analysis()["baseline"]}
    assert comparisons["test_retest_r"]["difference"] == pytest.approx(0.0)
    assert comparisons["test_retest_r"]["paired"] is True

    # Re-record the new model with answers that change from run to run: its test-retest r collapses.
    rng = random.Random(7)
    server = recorded[1]
    monkeypatch.setattr(server.script, "answer", lambda request: str(rng.randint(1, 5)))
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    replayed.session("--model=other-model", *SLICE, "--snap-record-mode=all", gate=True)
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    worse = replayed.session("--model=other-model", "--baseline=fake-model", *SLICE, gate=True)
    assert worse.exit_status == pytest.ExitCode.TESTS_FAILED
    # the terminal's gate block: one short line per regression; the full reason on the check's own line
    lines(worse).fnmatch_lines(["  REGRESSION other-model profile test_retest_r: *[[]*], margin *"])
    comparison = {c["metric"]: c for c in replayed.analysis()["baseline"]}["test_retest_r"]
    assert str(comparison["message"]).startswith("REGRESSION: worse than the baseline")
    # the noise of the design both answered: each model's answers redrawn within its cells
    assert "fixed design: answers resampled within cells" in str(comparison["message"])
    regressed = worse.check("other-model-vs-fake-model-profile-test_retest_r")
    assert regressed.fails_run
    assert regressed.message.startswith("REGRESSION: worse than the baseline")


def test_saved_analysis_can_be_the_baseline(replayed: BenchProject) -> None:
    replayed.session("--model=fake-model", *SLICE, "--snap-json=saved.json", gate=True)
    result = replayed.session("--model=other-model", "--baseline=saved.json", *SLICE, gate=True)
    messages = [check.message for check in result.checks]
    pytest.LineMatcher(messages).fnmatch_lines(
        ["*other-model vs fake-model profile test_retest_r: *unpaired, conservative (saved analysis: intervals*"]
    )


def test_unknown_baseline_is_a_usage_error(project: BenchProject) -> None:
    with pytest.raises(UsageProblem) as raised:
        project.session("--model=fake-model", "--baseline=nobody", *SLICE, gate=True)
    assert "--baseline 'nobody' is neither a known model" in str(raised.value)
