"""The gate fails closed, tried as a new user would in a project of its own: a selection that measures nothing,
a figure that cannot be computed, a misspelt instrument file, a baseline the run covers only in part, a renamed
questionnaire, every --snap-gate value and one run's outputs per folder. Each session runs in-process; the team
questionnaires are recorded once from the FAKE loopback server (tests/fake_openai_server.py) and each test replays
a copy offline. What pytest itself shows of these (its count line, the status it ends with) is
tests/contract/test_gate_fails_closed.py's."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from snap_bench.judging.gate import Gate
from snap_bench.session.run import SessionResult
from snap_bench.session.settings import UsageProblem
from tests.conftest import FAKE_KEY, BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.session.gate_projects import (
    TEAM,
    copy_recordings,
    follows_the_team_items,
    record,
    recording_project,
    save_baseline,
    write_team,
)

Recorded = tuple[BenchProject, FakeOpenAIServer]
NOT_MEASURED = 6  # the run could not measure what it was asked to (README: exit statuses)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """The questionnaires team, crew and teamwork asked of fake-model once for the module, and the fake server
    they were recorded from (alive for the module's tests: a recording replays from its own URL only)."""
    with recording_project(tmp_path_factory.mktemp("teams"), follows_the_team_items) as (project, server):
        write_team(project, "team", "crew", "teamwork")
        record(project, "--model=fake-model")
        yield project, server


def team_project(recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *names: str) -> BenchProject:
    """A project with the questionnaires ``names``, their recordings copied in; no key: sessions replay."""
    monkeypatch.delenv("FAKE_OPENAI_KEY", raising=False)
    root = tmp_path / "project"
    root.mkdir()
    project = BenchProject(root, recorded[1].base_url, instruments=())
    copy_recordings(recorded[0], project, *names)
    return project


def last_line(result: SessionResult) -> str:
    return [line for line in result.summary if line.startswith("exit status")][-1]


def shown(result: SessionResult) -> str:
    return "\n".join(result.summary)


def test_a_temperature_the_questionnaire_is_not_asked_at_is_a_usage_error_naming_its_own(
    recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = team_project(recorded, tmp_path, monkeypatch, "team")
    with pytest.raises(UsageProblem) as raised:
        project.session("--model=fake-model", "--snap-temperatures=0.5", gate=True)
    assert "--snap-temperatures selects no condition of team: it is asked at temperature 0, 1" in str(raised.value)


def test_one_item_leaves_its_judged_figures_undefined_and_they_never_pass(
    recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = team_project(recorded, tmp_path, monkeypatch, "team")
    result = project.session("--model=fake-model", "--snap-items=C1", gate=True)
    # Nothing failed, and the judged figures could not be computed: the gate is incomplete, never green.
    assert result.exit_status == NOT_MEASURED, shown(result)
    dependability = [check for check in result.checks if check.name.startswith("fake-model-team-dependability")]
    assert dependability, shown(result)
    assert all(check.category == "not judged" for check in dependability)
    pytest.LineMatcher(list(result.summary)).fnmatch_lines(
        ["*not judged (never a pass): fake-model dependability[[]t0[]]: undefined*"]
    )
    # pytest counts "5 passed, 4 not judged": the 4 conditions and the one check that passed, the 4 undefined
    passed = [check for check in result.checks if check.passed and check.category is None]
    assert len(result.observations) + len(passed) == 5
    assert sum(check.category == "not judged" for check in result.checks) == 4
    assert not any(check.fails_run for check in result.checks if not check.passed)
    assert "the gate is incomplete" in last_line(result)
    not_computed = project.analysis()["not_computed"]
    assert {entry["name"] for entry in not_computed} == {
        f"fake-model-team-{metric}[{t}]" for metric in ("dependability", "contradiction_rate") for t in ("t0", "t1")
    }
    assert "Not computed" in (project.out / "summary.md").read_text(encoding="utf-8")


def test_a_misspelt_instrument_key_is_named_not_dropped(
    recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = team_project(recorded, tmp_path, monkeypatch, "team")
    text = TEAM.format(name="other").replace("questionnaire:", "questionaire:")
    (project.root / "benchmarks" / "other.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(UsageProblem) as raised:
        project.session("--model=fake-model", gate=True)
    pytest.LineMatcher(str(raised.value).splitlines()).fnmatch_lines(
        ["*other.yaml: the top-level key 'questionaire' is no instrument key*questionnaire:*"]
    )


def test_gating_one_file_against_a_baseline_of_two_names_the_other_and_is_incomplete(
    recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = team_project(recorded, tmp_path, monkeypatch, "team", "crew")
    baseline = save_baseline(project)
    result = project.session("benchmarks/team.yaml", "--model=fake-model", f"--baseline={baseline}", gate=True)
    assert result.exit_status == NOT_MEASURED, shown(result)
    pytest.LineMatcher(list(result.summary)).fnmatch_lines(
        ["*not compared fake-model crew: the baseline holds crew, and fake-model answered none*"]
    )
    assert "not compared" in last_line(result)
    names = [entry["name"] for entry in project.analysis()["not_computed"]]
    assert "fake-model-vs-fake-model@baseline-crew-measured" in names
    assert "crew" in (project.out / "summary.md").read_text(encoding="utf-8")


def test_a_renamed_questionnaire_is_named_both_ways_never_an_internal_error(
    recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = team_project(recorded, tmp_path, monkeypatch, "teamwork")
    baseline = save_baseline(project)
    # The pull request renames the questionnaire (and records it under its new name).
    (project.root / "benchmarks" / "teamwork.yaml").unlink()
    write_team(project, "crew")
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    asked = len(recorded[1].script.requests)
    # An internal error would raise here, out of the session.
    result = project.session("--model=fake-model", f"--baseline={baseline}", "--snap-gate=baseline", gate=True)
    assert result.exit_status == NOT_MEASURED, shown(result)
    assert len(recorded[1].script.requests) == asked + 24  # crew recorded under its new name
    matcher = pytest.LineMatcher(list(result.summary))
    matcher.fnmatch_lines(["*not compared fake-model crew: the baseline holds no answer of crew*"])
    matcher.fnmatch_lines(["*not compared fake-model teamwork: the baseline holds teamwork*renamed or removed*"])


def test_every_gate_value_runs_through_a_session_and_states_what_it_follows(
    recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = team_project(recorded, tmp_path, monkeypatch, "team")
    baseline = save_baseline(project)
    # One recording and one baseline, every documented value gated against it (a traceback would raise here).
    for gate in ("thresholds", "baseline", "both", "drift", "baseline,drift", "both,drift", "thresholds,drift"):
        result = project.session("--model=fake-model", f"--baseline={baseline}", f"--snap-gate={gate}", gate=True)
        line = last_line(result)
        assert line == result.summary[-1], gate
        assert line.startswith(f"exit status {result.exit_status}:"), (gate, line)
        assert "--snap-gate" in line, gate
        # the same answers as the baseline: a gate on the comparison alone passes
        if gate in ("baseline", "baseline,drift"):
            assert result.exit_status == pytest.ExitCode.OK, (gate, shown(result))
        session = json.loads((project.out / "analysis.json").read_text(encoding="utf-8"))["session"]
        assert Gate.parse(session["gate"]) == Gate.parse(gate), gate


def test_the_terminal_and_summary_name_the_changes_file_under_snap_out(
    recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = team_project(recorded, tmp_path, monkeypatch, "team")
    baseline = save_baseline(project)
    # The paths shown are relative to where the session was started: the project's folder, as a user runs it.
    monkeypatch.chdir(project.root)
    out = "reports/gate-fake-model"
    result = project.session("--model=fake-model", f"--baseline={baseline}", f"--snap-out={out}", gate=True)
    pytest.LineMatcher(list(result.summary)).fnmatch_lines([f"*conditions changed their answer ({out}/changes.csv)*"])
    assert "reports/changes.csv" not in shown(result)
    assert f"{out}/changes.csv" in (project.root / out / "summary.md").read_text(encoding="utf-8")


def by_model_and_statement(request: dict[str, Any]) -> str:
    """A fixed answer per model and statement: two models disagree, each agrees with itself."""
    text = f"{request['model']}|{request['messages'][-1]['content']}"
    return str(zlib.crc32(text.encode()) % 5 + 1)


def test_a_subset_of_the_profile_gated_against_a_baseline_of_the_same_subset_is_judged_not_an_internal_error(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.answer = by_model_and_statement
    subset = ("--snap-items=M01,M06", "--snap-prompts=NEU,DIR", "--snap-runs=2", "--snap-temperatures=0")
    baseline = project.root / "baselines" / "fake-model.json"
    saved = project.session("--model=fake-model", *subset, f"--snap-save-baseline={baseline}", gate=True)
    assert "baseline written" in shown(saved), shown(saved)
    # Another model, other answers: every paired method runs on a design with one paraphrase per item (an internal
    # error would raise here).
    result = project.session(
        "--model=other-model", *subset, f"--baseline={baseline}", "--snap-gate=baseline", gate=True
    )
    assert result.exit_status in (pytest.ExitCode.TESTS_FAILED, NOT_MEASURED), shown(result)
    assert last_line(result).startswith(f"exit status {result.exit_status}:")
    comparisons = project.analysis()["baseline"]
    assert comparisons
    assert all(c["instrument"] == "profile" for c in comparisons)
    # a figure the narrowed design cannot pair is not compared, saying why, never a pass
    assert all(c["reason"] for c in comparisons if c["outcome"] == "not compared")
