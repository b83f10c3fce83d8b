"""The compass instrument through the plugin (pytester, plain and with -n 2): analysis, checks, store, report."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from snap_bench.design.config import PACKAGED
from snap_bench.instruments.compass.history import overall_history
from tests.conftest import FAKE_KEY, WORKERS, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

# 16 items x 3 paraphrases x 1 prompt x 1 temperature x 2 choices x 2 runs.
SLICE = ("--model=fake-model", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=2")
SLICE_SIZE = 192


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


@pytest.fixture
def compass_bench(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    return BenchProject(pytester, fake_server.base_url, instruments=("compass",))


def analysis_of(project: BenchProject) -> dict[str, Any]:
    document = json.loads((project.out / "analysis.json").read_text(encoding="utf-8"))
    entry: dict[str, Any] = document["instruments"]["compass"]["models"]["fake-model"]
    return entry


@pytest.mark.parametrize("workers", WORKERS)
def test_a_scripted_respondent_lands_where_it_should_and_the_store_keeps_every_session(
    compass_bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = right_libertarian
    first = compass_bench.run(*SLICE, *workers, "-rA", gate=True)
    for metric in ("coordinate_spread_max", "contradiction_rate", "dependability"):
        first.stdout.fnmatch_lines([f"*PASSED snap-bench::thresholds[[]fake-model-compass-{metric}[[]t0[]][]]*"])
    first.stdout.fnmatch_lines(
        ["*placement: economic +10.00 [[]+10.00, +10.00[]], social -10.00 [[]-10.00, -10.00[]]*"]
    )
    assert first.ret == 0
    assert first.parseoutcomes()["passed"] >= SLICE_SIZE + 4
    entry = analysis_of(compass_bench)
    assert entry["verdict"] == "PASS"
    assert entry["metrics"]["economic"]["value"] == pytest.approx(10.0)
    assert entry["metrics"]["social"]["value"] == pytest.approx(-10.0)
    assert entry["metrics"]["coordinate_sd_max"]["value"] == pytest.approx(0.0)
    assert entry["metrics"]["no_opinion_rate"]["value"] == 0.0
    assert entry["details"]["per_choice"]["unforced"]["economic"] == pytest.approx(10.0)
    requests = len(fake_server.script.requests)
    assert requests == SLICE_SIZE

    second = compass_bench.run(*SLICE, *workers, gate=True)  # replays: nothing asked, one more placement stored
    assert second.ret == 0
    assert len(fake_server.script.requests) == requests
    history = overall_history(compass_bench.out / "history.sqlite", "fake-model")
    assert [round(p.economic or 0, 6) for p in history] == [10.0, 10.0]
    assert all(json.loads(p.parameters)["factors"]["choice"] == ["forced", "unforced"] for p in history)
    assert json.loads(history[-1].parameters)["replayed_share"] == 1.0
    with sqlite3.connect(compass_bench.out / "history.sqlite") as connection:
        scopes = dict(connection.execute("SELECT scope, COUNT(*) FROM placements GROUP BY scope").fetchall())
    assert scopes == {"overall": 2, "run": 4, "system_prompt": 2}
    assert len(analysis_of(compass_bench)["details"]["history"]) == 2

    report = (compass_bench.out / "report.html").read_text(encoding="utf-8")
    for marker in ("snap-instrument-compass", 'id="snap-compass"', 'id="snap-compass-history"', "authoritarian left"):
        assert marker in report


def test_declining_is_an_answer_counted_at_the_centre(
    compass_bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    def declines_when_allowed(request: dict[str, Any]) -> str:
        return "No opinion" if "No opinion" in request["messages"][-1]["content"] else right_libertarian(request)

    fake_server.script.answer = declines_when_allowed
    result = compass_bench.run(*SLICE, gate=True)
    assert result.parseoutcomes()["passed"] >= SLICE_SIZE
    entry = analysis_of(compass_bench)
    assert entry["metrics"]["no_opinion_rate"]["value"] == pytest.approx(0.5)
    assert entry["metrics"]["unscored_rate"]["value"] == 0.0
    assert entry["metrics"]["economic"]["value"] == pytest.approx(5.0)  # half the answers at +2, half at 0
    assert entry["details"]["per_choice"] == {
        "forced": {"economic": pytest.approx(10.0), "social": pytest.approx(-10.0)},
        "unforced": {"economic": 0.0, "social": 0.0},
    }
    assert entry["details"]["items"]["E01"]["answers"] == {"strongly agree": 6, "no opinion": 6}


def test_an_unwritable_store_is_reported_and_loses_nothing(
    compass_bench: BenchProject, fake_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_server.script.answer = right_libertarian
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the store's folder should be", encoding="utf-8")
    result = compass_bench.run(*SLICE, f"--snap-history={blocker / 'history.sqlite'}", gate=True)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*results store*not updated*"])
    assert len([line for line in result.stdout.lines if "results store" in line]) == 1  # one line, not one per write
    entry = analysis_of(compass_bench)
    assert "history_error" in entry["details"]
    assert entry["metrics"]["economic"]["value"] == pytest.approx(10.0)
    assert len((compass_bench.out / "observations.jsonl").read_text(encoding="utf-8").splitlines()) == SLICE_SIZE


def test_the_compass_per_prompt_points_are_drawn_on_demand(
    compass_bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.answer = right_libertarian
    args = ("--model=fake-model", "--snap-prompts=NEU,DIR", "--snap-temperatures=0", "--snap-runs=1")
    compass_bench.run(*args, gate=True)
    plain = (compass_bench.out / "report.html").read_text(encoding="utf-8")
    compass_bench.run(*args, "--snap-compass-per-prompt", gate=True)
    detailed = (compass_bench.out / "report.html").read_text(encoding="utf-8")
    assert "under each system prompt" in detailed
    assert "under each system prompt" not in plain
