"""A session that could not measure its whole design keeps its history row as incomplete, with its coverage (each
session in-process)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from snap_bench.cli import main
from snap_bench.history.store import read_headlines
from snap_bench.instruments.compass.history import overall_history
from tests.conftest import FAKE_KEY, SLICE, SLICE_SIZE, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

NOT_MEASURED = 6  # README: exit status 6, the run could not measure what it was asked to


def test_a_replay_missing_a_recording_is_stored_as_incomplete(
    project: BenchProject, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = project.session("--model=fake-model", *SLICE, gate=True)
    # Complete, every condition answered; one item leaves the judged figures undefined, so the gate says
    # "not judged" (exit 6) without a condition missing.
    assert recorded.exit_status == NOT_MEASURED
    assert "could not measure" not in "\n".join(recorded.summary)
    store = project.out / "history.sqlite"
    first_sessions = {r.session for r in read_headlines(store, ["fake-model"], ["profile"])}
    assert len(first_sessions) == 1
    (project.cassettes / "fake-model" / "profile" / "M01-P1-NEU-t0-C0-r1.json").unlink()
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = project.session("--model=fake-model", *SLICE, gate=True)
    assert result.exit_status == NOT_MEASURED
    assert "could not measure" in result.reason
    rows = read_headlines(store, ["fake-model"], ["profile"])
    # Which session is which, by what the store held after the first (in one process both start within a second).
    assert len({r.session for r in rows}) == 2
    first = [r for r in rows if r.session in first_sessions]
    stale = [r for r in rows if r.session not in first_sessions]
    assert {(r.complete, r.conditions_answered, r.conditions_designed) for r in first} == {
        (True, SLICE_SIZE, SLICE_SIZE)
    }
    assert {(r.complete, r.conditions_answered, r.conditions_designed, r.verdict) for r in stale} == {
        (False, SLICE_SIZE - 1, SLICE_SIZE, "INCOMPLETE")
    }
    # Both asked one item, one system prompt and one temperature of the design: a subset, also when incomplete.
    subsets = {r.design.subset for r in rows}
    assert len(subsets) == 1  # the same part of the design, twice
    (subset,) = subsets
    assert subset is not None
    assert subset.asked == SLICE_SIZE < subset.designed
    assert re.fullmatch(r"items M01 of \d+", subset.narrowed[0])
    assert [part.split(" of ")[0] for part in subset.narrowed] == ["items M01", "system prompt NEU", "temperature t0"]
    assert main(["history", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert f"INCOMPLETE {SLICE_SIZE - 1}/{SLICE_SIZE}" in out
    assert f"SUBSET {subset.label()}" in out
    assert overall_history(store, "fake-model") == []  # the profile's session: no compass placement


def test_the_compass_keeps_an_incomplete_sessions_placement_as_incomplete(
    tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    project = BenchProject(tmp_path, fake_server.base_url, instruments=("compass",))
    compass = ("--snap-items=E01,S01", "--snap-prompts=NEU", "--snap-temperatures=0")
    project.session("--model=fake-model", *compass, gate=True)
    recordings = sorted((project.cassettes / "fake-model" / "compass").glob("*.json"))
    recordings[0].unlink()
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    assert project.session("--model=fake-model", *compass, gate=True).exit_status == NOT_MEASURED
    history = overall_history(project.out / "history.sqlite", "fake-model")
    designed = len(recordings)
    assert [(p.complete, p.conditions_answered, p.conditions_designed) for p in history] == [
        (True, designed, designed),
        (False, designed - 1, designed),
    ]
    # two statements at one system prompt and one temperature: both placements are a subset's
    assert [(p.design.is_subset, p.design.subset and p.design.subset.asked) for p in history] == [(True, designed)] * 2
