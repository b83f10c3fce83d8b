"""The compass instrument's session, in-process against the fake server: analysis, checks, the results store and
the report's compass section."""

from __future__ import annotations

import fnmatch
import json
import shutil
import sqlite3
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from snap_bench.design.config import PACKAGED
from snap_bench.instruments.compass.history import overall_history
from snap_bench.session.run import SessionResult
from tests.conftest import REPO, BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.session.recorded import Recorded, copy_into, empty_project, record, report_summary

# 16 items x 3 paraphrases x 1 prompt x 1 temperature x 2 choices x 2 runs.
SLICE = ("--model=fake-model", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=2")
SLICE_SIZE = 192


@cache  # read once: the fake respondent looks every question up in it
def statement_keys() -> dict[str, tuple[str, bool]]:
    compass = yaml.safe_load((PACKAGED / "compass.yaml").read_text(encoding="utf-8"))
    items = compass["items"]
    return {text: (item["construct"], item["reverse"]) for item in items for text in item["paraphrases"].values()}


def right_libertarian(request: dict[str, Any]) -> str:
    """A FAKE respondent placed at economic +10, social -10: it pushes right and libertarian on every item."""
    question = request["messages"][-1]["content"]
    for statement, (axis, reverse) in statement_keys().items():
        if statement in question:
            towards_plus = not reverse
            wants_plus = axis == "economic"
            return "Strongly agree" if towards_plus == wants_plus else "Strongly disagree"
    return "I do not know this statement"


def with_compass(project: BenchProject) -> None:
    shutil.copy(REPO / "benchmarks" / "test_compass.py", project.root / "benchmarks" / "test_compass.py")


@pytest.fixture(scope="module")
def placed(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The slice answered, once for the module, by the right-libertarian respondent."""
    return record(tmp_path_factory.mktemp("compass") / "project", with_compass, right_libertarian, *SLICE)


@pytest.fixture
def compass(tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    project = empty_project(tmp_path, fake_server.base_url, monkeypatch)
    with_compass(project)
    return project


def analysis_of(result: SessionResult) -> dict[str, Any]:
    assert result.judgement is not None
    entry: dict[str, Any] = result.judgement.document["instruments"]["compass"]["models"]["fake-model"]
    return entry


def test_a_scripted_respondent_lands_where_it_should_and_the_store_keeps_every_session(
    placed: Recorded, compass: BenchProject
) -> None:
    first = placed.result
    for metric in ("coordinate_spread_max", "contradiction_rate", "dependability"):
        check = first.check(f"fake-model-compass-{metric}[t0]")
        assert check.passed, check
        assert check.category is None, check
    placement = "*placement: economic +10.00 [[]+10.00, +10.00[]], social -10.00 [[]-10.00, -10.00[]]*"
    assert fnmatch.filter(first.summary, placement), first.summary
    assert first.exit_status == pytest.ExitCode.OK
    assert first.planned == SLICE_SIZE
    assert len(first.observations) == SLICE_SIZE
    assert len([check for check in first.checks if check.passed and check.category is None]) >= 4
    entry = analysis_of(first)
    assert entry["verdict"] == "PASS"
    assert entry["metrics"]["economic"]["value"] == pytest.approx(10.0)
    assert entry["metrics"]["social"]["value"] == pytest.approx(-10.0)
    assert entry["metrics"]["coordinate_sd_max"]["value"] == pytest.approx(0.0)
    assert entry["metrics"]["no_opinion_rate"]["value"] == 0.0
    assert entry["details"]["per_choice"]["unforced"]["economic"] == pytest.approx(10.0)
    assert len(placed.requests) == SLICE_SIZE

    copy_into(placed, compass)  # its recordings and its results store, which holds the first placement
    second = compass.session(*SLICE, gate=True)  # replays: nothing asked, one more placement stored
    assert second.exit_status == pytest.ExitCode.OK
    assert len(second.observations) == SLICE_SIZE
    assert all(observation.replayed for observation in second.observations)
    history = overall_history(compass.out / "history.sqlite", "fake-model")
    assert [round(p.economic or 0, 6) for p in history] == [10.0, 10.0]
    assert all(json.loads(p.parameters)["factors"]["choice"] == ["forced", "unforced"] for p in history)
    assert json.loads(history[-1].parameters)["replayed_share"] == 1.0
    with sqlite3.connect(compass.out / "history.sqlite") as connection:
        scopes = dict(connection.execute("SELECT scope, COUNT(*) FROM placements GROUP BY scope").fetchall())
    assert scopes == {"overall": 2, "run": 4, "system_prompt": 2}
    assert len(analysis_of(second)["details"]["history"]) == 2

    report = report_summary(compass.root, second, *SLICE)
    for marker in ("snap-instrument-compass", 'id="snap-compass"', 'id="snap-compass-history"', "authoritarian left"):
        assert marker in report


def test_declining_is_an_answer_counted_at_the_centre(compass: BenchProject, fake_server: FakeOpenAIServer) -> None:
    def declines_when_allowed(request: dict[str, Any]) -> str:
        return "No opinion" if "No opinion" in request["messages"][-1]["content"] else right_libertarian(request)

    fake_server.script.answer = declines_when_allowed
    result = compass.session(*SLICE, gate=True)
    assert len(result.observations) == SLICE_SIZE
    assert all(observation.score is not None for observation in result.observations)
    entry = analysis_of(result)
    assert entry["metrics"]["no_opinion_rate"]["value"] == pytest.approx(0.5)
    assert entry["metrics"]["unscored_rate"]["value"] == 0.0
    assert entry["metrics"]["economic"]["value"] == pytest.approx(5.0)  # half the answers at +2, half at 0
    assert entry["details"]["per_choice"] == {
        "forced": {"economic": pytest.approx(10.0), "social": pytest.approx(-10.0)},
        "unforced": {"economic": 0.0, "social": 0.0},
    }
    assert entry["details"]["items"]["E01"]["answers"] == {"strongly agree": 6, "no opinion": 6}


def test_an_unwritable_store_is_reported_and_loses_nothing(
    placed: Recorded, compass: BenchProject, tmp_path: Path
) -> None:
    copy_into(placed, compass)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store's folder should be", encoding="utf-8")
    result = compass.session(*SLICE, f"--snap-history={blocker / 'history.sqlite'}", gate=True)
    assert result.exit_status == pytest.ExitCode.OK
    assert fnmatch.filter(result.summary, "*results store*not updated*"), result.summary
    assert len([line for line in result.summary if "results store" in line]) == 1  # one line, not one per write
    entry = analysis_of(result)
    assert "history_error" in entry["details"]
    assert entry["metrics"]["economic"]["value"] == pytest.approx(10.0)
    assert len((compass.out / "observations.jsonl").read_text(encoding="utf-8").splitlines()) == SLICE_SIZE


def test_the_compass_per_prompt_points_are_drawn_on_demand(placed: Recorded, compass: BenchProject) -> None:
    plain = report_summary(placed.root, placed.result, *SLICE)
    copy_into(placed, compass)
    on_demand = (*SLICE, "--snap-compass-per-prompt")
    detailed = report_summary(compass.root, compass.session(*on_demand, gate=True), *on_demand)
    assert "under each system prompt" in detailed
    assert "under each system prompt" not in plain
