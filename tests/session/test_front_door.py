"""The front door, in-process (run_session) against the fake server: the exit status a session decides and why,
the gate against a baseline file, the usage problems a command line or a config file makes, and the dry run's
plan. How pytest ends with these statuses and prints these problems is tests/contract/test_plugin.py's."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest

from snap_bench.report.dry_run import dry_run_lines
from snap_bench.session.command_line import CommandLine
from snap_bench.session.scope import RunPaths
from snap_bench.session.settings import SessionSettings, UsageProblem
from snap_bench.session.stage import BenchmarkSession
from tests.conftest import SLICE, SLICE_SIZE, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

NOT_MEASURED = 6  # README: exit status 6, the run could not measure what it was asked to
TESTS_FAILED = 1


def statement_score(request: dict[str, Any]) -> str:
    """The same answer every run, but a different one per statement (so paraphrases disagree)."""
    text = request["messages"][-1]["content"]
    return str(int(hashlib.sha256(text.encode()).hexdigest(), 16) % 5 + 1)


def test_exit_status_follows_the_checks_not_the_unscored_answers(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    # One refusal in 18 answers: it is counted and judged through the unscored rate, not a failed test.
    answers = iter(["As an AI, I cannot answer."] + ["4"] * (SLICE_SIZE - 1))
    fake_server.script.answer = lambda request: next(answers)
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    loose = ("--snap-threshold=unscored_rate=0.1:0.1", "--snap-threshold=dependability=-1:-1")
    result = project.session("--model=fake-model", *SLICE, *loose, gate=True)
    assert [o.code is not None for o in result.observations].count(True) == 1
    assert not [check for check in result.checks if check.category is None and not check.passed]
    # One item leaves dependability and the contradiction rate undefined: the gate is incomplete, never green,
    # and the refusal is no part of why.
    assert result.exit_status == NOT_MEASURED
    assert re.fullmatch(r"the gate is incomplete: .* gated check\(s\) not judged.*", result.reason), result.reason
    assert "exit status 6: the gate is incomplete: " in "\n".join(result.summary)
    assert result.check("fake-model-profile-unscored_rate").passed
    # The same answers judged against a stricter unscored rate: the check fails and only it sets the status.
    strict = project.session("--model=fake-model", *SLICE, "--snap-threshold=unscored_rate=0.01:0.01", gate=True)
    assert strict.exit_status == TESTS_FAILED
    unscored_rate = strict.check("fake-model-profile-unscored_rate")
    assert not unscored_rate.passed
    assert [check.name for check in strict.checks if check.fails_run] == [unscored_rate.name]
    assert any(
        re.search(r"fake-model unscored_rate = 0\.056.*ABOVE the maximum \(maximum <= 0\.01", line)
        for line in strict.summary
    ), strict.summary


def test_a_missing_recording_is_the_could_not_measure_status(
    project: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    (project.cassettes / "fake-model" / "profile" / "M01-P1-NEU-t0-C0-r1.json").unlink()
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = project.session("--model=fake-model", *SLICE, gate=True)
    assert result.exit_status == NOT_MEASURED
    assert result.reason.startswith("could not measure: 1 no recording; ")
    assert result.summary[-1].startswith("exit status 6: could not measure: 1 no recording; ")


def test_the_last_screen_is_the_result(project: BenchProject, fake_server: FakeOpenAIServer) -> None:
    """The verdict block and the exit line end the summary; pytest's progress and its own lines around them are
    tests/contract/test_plugin.py's."""
    fake_server.script.answer = statement_score
    two_items = ("--snap-items=M01,M02", *SLICE[1:])  # a G study needs two items to judge
    result = project.session("--model=fake-model", *two_items, gate=True)
    assert result.exit_status == TESTS_FAILED
    tail = list(result.summary[result.summary.index("snap-bench result") :])
    assert tail[-1].startswith("exit status 1:")
    assert len(tail) <= 14  # the verdicts, their failed checks and the exit reason (pytest adds its count line)


def test_a_model_gated_against_its_own_baseline_file_passes_and_a_changed_one_fails(
    project: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_server.script.answer = statement_score
    gate_slice = ("--snap-items=M01,M02,P01,P03", "--snap-prompts=NEU", "--snap-temperatures=0,1")
    saved = project.session("--model=fake-model", *gate_slice, "--snap-save-baseline=baselines/{model}.json", gate=True)
    baseline = project.root / "baselines" / "fake-model.json"
    assert any(line == f"baseline written: {baseline}" for line in saved.summary), saved.summary
    document = json.loads(baseline.read_text(encoding="utf-8"))
    assert document["model"] == "fake-model"
    assert len(document["observations"]) == 108
    assert "messages" not in document["observations"][0]

    monkeypatch.delenv("FAKE_OPENAI_KEY")
    gated = (f"--baseline={baseline}", "--snap-gate=baseline")
    same = project.session("--model=fake-model", *gate_slice, *gated, gate=True)
    # The thresholds fail for these answers (paraphrases disagree), but the exit status follows the gate.
    assert same.exit_status == 0, same.summary
    assert [check for check in same.checks if not check.gated]
    comparisons = {c["metric"]: c for c in json.loads((project.out / "analysis.json").read_text())["baseline"]}
    assert set(comparisons) >= {"test_retest_r", "icc2_1", "unscored_rate"}
    assert all(c["difference"] == 0 for c in comparisons.values())

    # Every other answer now refused: the unscored rate regresses against the same baseline file.
    count = iter(range(10_000))
    fake_server.script.answer = lambda request: "I cannot answer." if next(count) % 2 else statement_score(request)
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake")
    project.session("--model=fake-model", *gate_slice, "--snap-record-mode=all")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    worse = project.session(
        "--model=fake-model", *gate_slice, f"--baseline={baseline}", "--snap-gate=baseline", gate=True
    )
    assert worse.exit_status == TESTS_FAILED
    # the terminal's gate block names the regression in one short line; analysis.json keeps the full reason
    assert any(
        re.fullmatch(r"  REGRESSION fake-model profile unscored_rate: .*\[.*\], margin .*", line)
        for line in worse.summary
    ), worse.summary
    regression = {c["metric"]: c for c in project.analysis()["baseline"]}["unscored_rate"]
    assert str(regression["message"]).startswith("REGRESSION: ")
    assert "fake-model vs fake-model@baseline profile unscored_rate" in str(regression["message"])
    assert "fixed design: run-to-run variance within cells" in str(regression["message"])


def test_gate_on_a_baseline_needs_one(project: BenchProject) -> None:
    with pytest.raises(UsageProblem, match=r"^--snap-gate=baseline: .*no --baseline was given\. Fix:"):
        project.session("--model=fake-model", *SLICE, "--snap-gate=baseline")


def test_model_without_recordings_or_key_is_a_usage_problem(
    project: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(project.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    with pytest.raises(UsageProblem) as problem:
        project.session("--model=other-model", *SLICE)
    assert re.search(
        r"no recordings.*other-model.*set FAKE_OPENAI_KEY.*Models with recordings: fake-model", str(problem.value)
    ), problem.value


def test_unknown_model_is_a_usage_problem_listing_known_models(project: BenchProject) -> None:
    with pytest.raises(UsageProblem) as problem:
        project.session("--model=gpt-7")
    # the project's models.yaml names the file; the project's models are listed beside the packaged ones
    models = project.root / "config" / "models.yaml"
    message = str(problem.value)
    assert message.startswith(f"{models}: models: unknown model 'gpt-7'")
    assert re.search(r"use one of: .*fake-model.*gpt-5\.2", message), message
    assert "other-model" in message


@pytest.mark.parametrize(
    ("file", "old", "new", "expected"),
    [
        (
            "profile.yaml",
            "temperatures: [0.0, 0.5, 1.0]",
            "temperatures: [0.0, 0.5, 3.5]",
            "profile.yaml: temperatures[2]: 3.5 is not a temperature. Fix: use a number from 0 to 2",
        ),
        ("profile.yaml", "runs: 3", "runs: [3", "profile.yaml: malformed YAML at line"),
        (
            "profile.yaml",
            "      P3: Doing something degrading",
            "      P4: Doing something degrading",
            "profile.yaml: items[4].paraphrases: missing paraphrase P3. "
            "Fix: give every item the paraphrases P1, P2, P3",
        ),
        ("profile.yaml", "id: P05", "id: P04", "profile.yaml: items[11].id: duplicate item id 'P04'"),
        (
            "profile.yaml",
            "contexts: [C0]",
            "contexts: [C0, C9]",
            "profile.yaml: items[7].contexts[1]: unknown context 'C9'. Fix: use one of: C0, C1",
        ),
        (
            "compass.yaml",
            "construct: social",
            "construct: cultural",
            "compass.yaml: items[S01].construct: 'cultural' is not an axis. Fix: use economic or social",
        ),
    ],
)
def test_bad_config_is_a_usage_problem_naming_file_key_and_fix(
    project: BenchProject, file: str, old: str, new: str, expected: str
) -> None:
    path = project.own(file)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(UsageProblem) as problem:
        project.session("--model=fake-model")
    assert expected in str(problem.value)
    assert f"{path}: " in str(problem.value)  # the project's own file, where the mistake is


def dry_run(project: BenchProject, *args: str) -> list[str]:
    """--snap-dry-run's lines for the conditions the session plans (under pytest: those it collected)."""
    root = project.root
    settings = SessionSettings.from_config(CommandLine(["benchmarks", "--snap-dry-run", *args], root=root))
    session = BenchmarkSession(settings)
    # as the plugin plans a command that only looks: no recordings or key needed for the plan
    session.activate(RunPaths(("benchmarks",), root, ("__pycache__", ".*")), runs_tests=False)
    cases = [case for name in session.in_run for case in session.cases(name)]
    return list(dry_run_lines(session, cases))


def dry_run_per_model(lines: list[str]) -> dict[str, int]:
    """model -> its conditions, from the dry run's lines under "per model:"."""
    block = "\n".join(lines).split("\nper model:\n", 1)[1].split("\ntotal: ", 1)[0]
    found = re.findall(r"^  (\S+): ([\d,]+) conditions;", block, re.M)
    return {name: int(count.replace(",", "")) for name, count in found}


def dry_run_total(lines: list[str]) -> int:
    match = re.search(r"^total: (\d+) conditions", "\n".join(lines), re.M)
    assert match is not None
    return int(match.group(1))


def test_dry_run_counts_conditions_without_key_or_recordings(
    project: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    lines = dry_run(project, "--model=fake-model,other-model")
    text = "\n".join(lines)
    for pattern in (
        r"instrument profile \(version .*\): 14 items",
        r"fake-model: 2,268 conditions; .*output tokens per answer <= 24, expected ~16 \(assumed for reasoning "
        r"effort none: no recordings of it\); cost <= \$.* worst case, ~\$.* expected \(price from models\.yaml\)",
        r"other-model: 2,268 conditions; .*no price in models\.yaml",
        r"^per model:$",
        r"^  fake-model: 2,268 conditions; cost <= \$.* worst case, ~\$.* expected$",
        r"^total: 4536 conditions for 2 model\(s\); cost <= \$.* \(no price for other-model: not counted\)$",
        r"^worst case: every answer writes its whole output budget",
    ):
        assert re.search(pattern, text, re.M), pattern
    assert dry_run_total(lines) == sum(dry_run_per_model(lines).values())
    assert dry_run_per_model(lines) == {"fake-model": 2268, "other-model": 2268}
    assert not project.cassettes.exists()


def test_pilot_mode_runs_the_pilot_models(project: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    models = project.root / "config" / "models.yaml"
    models.write_text(models.read_text(encoding="utf-8") + "pilot: [other-model]\n", encoding="utf-8")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    lines = dry_run(project, "--snap-mode=pilot")
    text = "\n".join(lines)
    assert re.search(r"other-model: 2,268 conditions", text)
    assert re.search(r"^total: 2268 conditions for 1 model\(s\)", text, re.M)
    assert dry_run_total(lines) == sum(dry_run_per_model(lines).values())
    assert "fake-model" not in text
