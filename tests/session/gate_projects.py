"""Small benchmark projects for the gate's tests (session and contract tiers): a team questionnaire asked of the
fake server, recordings made once per module into a folder that each test copies, and the answerers."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from snap_bench.session.run import SessionResult
from tests.conftest import FAKE_KEY, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

Answerer = Callable[[dict[str, Any]], str]

# Small designs, so that a scenario records in a second: two constructs, two temperatures, two runs, one prompt.
TEAM = """\
questionnaire: {name}
scale: {{points: 5, labels: [Strongly disagree, Disagree, Neutral, Agree, Strongly agree]}}
system_prompts: {{NEU: null}}
temperatures: [0, 1]
runs: 2
items:
  - {{id: C1, construct: composure, text: "I stay calm when plans fall apart."}}
  - {{id: C2, construct: composure, text: "Small setbacks make me lose my temper.", reverse: true}}
  - {{id: C3, construct: composure, text: "I keep my head in a crisis."}}
  - {{id: T1, construct: tidiness, text: "I keep my desk in order."}}
  - {{id: T2, construct: tidiness, text: "My room is usually a mess.", reverse: true}}
  - {{id: T3, construct: tidiness, text: "I put things back where they belong."}}
"""
TEAM_VIEWS = {
    "I stay calm when plans fall apart.": "4",
    "Small setbacks make me lose my temper.": "2",
    "I keep my head in a crisis.": "5",
    "I keep my desk in order.": "2",
    "My room is usually a mess.": "4",
    "I put things back where they belong.": "1",
}
TEAM_CONDITIONS = 6 * 2 * 2  # items x temperatures x runs


def statement(request: dict[str, Any]) -> str:
    """The statement asked: the default instruction is the scale, a blank line, the statement, a blank line, the
    answer format."""
    return str(request["messages"][-1]["content"].split("\n\n")[1])


def follows_the_team_items(request: dict[str, Any]) -> str:
    return TEAM_VIEWS[statement(request)]


def statement_score(request: dict[str, Any]) -> str:
    """The same answer every run, but a different one per statement (so paraphrases disagree)."""
    text = request["messages"][-1]["content"]
    return str(int(hashlib.sha256(text.encode()).hexdigest(), 16) % 5 + 1)


def write_team(project: BenchProject, *names: str) -> None:
    """The team questionnaire under each of ``names`` (benchmarks/<name>.yaml)."""
    for name in names:
        (project.root / "benchmarks" / f"{name}.yaml").write_text(TEAM.format(name=name), encoding="utf-8")


@contextmanager
def recording_project(
    folder: Path, answer: Answerer, instruments: tuple[str, ...] = ()
) -> Iterator[tuple[BenchProject, FakeOpenAIServer]]:
    """A project in ``folder`` whose sessions, run in-process, record from a fake server of its own that answers
    with ``answer``, for a module-scoped fixture to yield: the test's own fake_server lives for one test, and a
    recording replays only from the URL it was recorded at (requests match on method, URI and body)."""
    with FakeOpenAIServer() as server:
        server.script.answer = answer
        root = folder / "project"
        root.mkdir()
        yield BenchProject(root, server.base_url, instruments), server
    assert not server.script.errors, f"the answer function raised: {server.script.errors[:3]}"


def record(project: BenchProject, *args: str, status: int = pytest.ExitCode.OK) -> SessionResult:
    """A session of ``project`` with the fake's key: what is not recorded yet is asked and recorded."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
        result = project.session(*args)
    assert result.exit_status == status, "\n".join(result.summary)
    return result


def copy_recordings(recorded: BenchProject, project: BenchProject, *instruments: str) -> None:
    """The recordings of ``recorded`` (only those of ``instruments``, when named) copied into ``project``, with the
    instrument files of benchmarks/ they belong to and the models.yaml naming the server they were recorded from."""
    shutil.copyfile(recorded.root / "config" / "models.yaml", project.root / "config" / "models.yaml")
    for model in sorted(recorded.cassettes.iterdir()):
        for folder in sorted(model.iterdir()):
            if not instruments or folder.name in instruments:
                shutil.copytree(folder, project.cassettes / model.name / folder.name)
    for source in sorted((recorded.root / "benchmarks").iterdir()):
        if not instruments or source.stem in instruments:
            shutil.copyfile(source, project.root / "benchmarks" / source.name)


def save_baseline(project: BenchProject, *args: str) -> str:
    """fake-model's answers saved as a baseline file (baselines/fake-model.json); its path."""
    path = project.root / "baselines" / "fake-model.json"
    saved = project.session("--model=fake-model", f"--snap-save-baseline={path}", *args)
    assert saved.exit_status == pytest.ExitCode.OK, saved.summary
    return str(path)
