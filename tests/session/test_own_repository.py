"""snap-bench's session in a team's own repository, set up by ``snap-bench init`` (in this process): a model the
project adds to its own models.yaml (the FAKE loopback server) recorded across the three instruments and the
BFI-25 questionnaire, replayed offline with the same answers, saved as a baseline and gated against it; a team's
own questionnaire recorded alone, the shipped instruments it never recorded named offline, not failed, and a run
from benchmarks/ reading the root's folders. The wheel installed into a fresh virtualenv, its console command, and
the team's own tests run beside the benchmarks by pytest: tests/slow/test_own_repository.py."""

from __future__ import annotations

import fnmatch
import hashlib
from pathlib import Path
from typing import Any

import pytest

from snap_bench.cli import main
from snap_bench.session.run import SessionResult, run_session
from tests.conftest import FAKE_KEY
from tests.fake_openai_server import FakeOpenAIServer
from tests.session.recorded import dry_run

# Two items of each profile bank, four compass items, two perturbation samples; temperature 0, two runs:
# 144 profile + 192 compass + 64 perturbation conditions, and 16 of the BFI-25 questionnaire (A1, A2 x 4 system
# prompts x 2 runs).
SLICE = (
    "--snap-items=M01,M02,P01,P03,E01,E02,S01,S02,S001,S002,A1,A2",
    "--snap-temperatures=0",
    "--snap-runs=2",
    "--snap-resamples=200",
)
SLICE_SIZE = 416
TEAM_CONDITIONS = 48  # the skeleton questionnaire: 2 items x 4 system prompts x 2 temperatures x 3 runs
SHIPPED = {"profile", "compass", "perturbation", "bfi25"}


def answer(request: dict[str, Any]) -> str:
    """A FAKE respondent: one fixed, scorable answer per question, in each instrument's answer format."""
    text = request["messages"][-1]["content"]
    pick = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    if "Respond with ONLY a number" in text:
        return str(pick % 5 + 1)
    if "agree or disagree" in text:
        return ("Strongly agree", "Agree", "Disagree", "Strongly disagree")[pick % 4]
    return ("positive", "negative")[pick % 2]


def initialised(folder: Path, base_url: str, *init: str) -> Path:
    """``snap-bench init`` in ``folder``, and a model of the team's own in its models.yaml."""
    folder.mkdir(exist_ok=True)
    assert main(["init", str(folder), *init]) == 0
    with (folder / "config" / "models.yaml").open("a", encoding="utf-8") as models:
        models.write(f"  team-model:\n    id: team/model\n    base_url: {base_url}\n")
        models.write("    api_key_env: TEAM_MODEL_KEY\n")
    return folder


def session(root: Path, *args: str) -> SessionResult:
    return run_session(args, root=root)


def test_a_repository_of_its_own_records_replays_and_gates(
    tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = initialised(tmp_path / "project", fake_server.base_url)
    fake_server.script.answer = answer
    monkeypatch.setenv("TEAM_MODEL_KEY", FAKE_KEY)
    live = session(project, "benchmarks", "--model=team-model", *SLICE)
    # these answers are noise to the thresholds: a threshold check may fail, no condition
    assert live.exit_status in (0, 1), live.summary
    assert live.planned == SLICE_SIZE
    assert len(live.observations) == SLICE_SIZE
    assert {observation.instrument for observation in live.observations} == SHIPPED
    assert not any(observation.replayed for observation in live.observations)
    assert all(observation.score is not None for observation in live.observations)
    assert len(fake_server.script.requests) == SLICE_SIZE
    assert len(list((project / "cassettes" / "team-model").rglob("*.json"))) == SLICE_SIZE
    assert FAKE_KEY not in "".join(path.read_text() for path in (project / "cassettes").rglob("*.json"))

    monkeypatch.delenv("TEAM_MODEL_KEY")  # no key: nothing may be asked
    saved = session(project, "benchmarks", "--model=team-model", *SLICE, "--snap-save-baseline=baselines/{model}.json")
    assert saved.exit_status in (0, 1), saved.summary
    assert len(fake_server.script.requests) == SLICE_SIZE
    answers = {(o.model, o.condition_id, o.raw_answer) for o in live.observations}
    assert {(o.model, o.condition_id, o.raw_answer) for o in saved.observations} == answers
    assert all(observation.replayed for observation in saved.observations)
    assert saved.judgement is not None
    assert set(saved.judgement.document["instruments"]) == SHIPPED
    baseline = project / "baselines" / "team-model.json"
    assert baseline.is_file()

    gate = session(
        project, "benchmarks", "--model=team-model", *SLICE, f"--baseline={baseline}", "--snap-gate=baseline"
    )
    assert gate.exit_status == pytest.ExitCode.OK, gate.summary
    assert gate.reason == "every gated check was computed and passed", gate.reason


def test_a_teams_repository_records_its_own_questionnaire_and_names_what_it_never_recorded(
    tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = initialised(tmp_path / "team", fake_server.base_url, "--questionnaire", "team")
    fake_server.script.answer = lambda request: "4"
    monkeypatch.setenv("TEAM_MODEL_KEY", FAKE_KEY)
    live = session(project, "benchmarks/team.yaml", "--model=team-model")
    assert live.exit_status in (0, 1), live.summary
    assert len(fake_server.script.requests) == TEAM_CONDITIONS
    monkeypatch.delenv("TEAM_MODEL_KEY")

    offline = session(project, "benchmarks", "--model=team-model")
    assert offline.exit_status in (0, 1), offline.summary  # (a threshold check may fail: constant answers)
    for name in SHIPPED:
        assert fnmatch.filter(offline.notices, f"not recorded for team-model: {name} (*"), offline.notices
    assert offline.planned == TEAM_CONDITIONS  # no condition of those instruments planned, so none failed
    assert [observation.instrument for observation in offline.observations] == ["team"] * TEAM_CONDITIONS

    inside = run_session(["team.yaml", "--model=team-model"], root=project / "benchmarks")
    assert inside.exit_status in (0, 1), inside.summary
    assert inside.out_dir == project / "reports"  # config/, cassettes/ and reports/ of the root
    assert len((project / "reports" / "observations.jsonl").read_text(encoding="utf-8").splitlines()) == TEAM_CONDITIONS
    assert not (project / "benchmarks" / "reports").exists()

    lines = dry_run(project, "benchmarks/team.yaml", "--model=team-model")
    assert fnmatch.filter(lines, f"total: {TEAM_CONDITIONS} conditions for 1 model(s)*"), lines
    assert fnmatch.filter(lines, "*measured over*"), lines  # its tokens per answer, from its recordings
    assert not fnmatch.filter(lines, "*instrument profile*")
