"""Offline, an instrument a model has no recording of is named once and not run (not a failure per condition);
a run that would measure nothing of a model is still a usage error. The dry run's plan counts and prices each
model's conditions at the temperatures it will really be asked at. The project root is found from a subfolder
through snap-bench.toml. (What pytest collects, deselects and prints of these: tests/contract/
test_unrecorded_and_dry_run.py.)"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import pytest

from snap_bench.design.project import PROJECT_FILE
from snap_bench.session.run import run_session
from snap_bench.session.settings import UsageProblem
from tests.conftest import FAKE_KEY, SLICE, BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.session.recorded import dry_run


@pytest.fixture
def two(tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    root = tmp_path / "project"
    root.mkdir()
    return BenchProject(root, fake_server.base_url, ("profile", "compass"))


def test_offline_an_unrecorded_instrument_is_named_not_failed(
    two: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = two.session("benchmarks/test_profile.py", "--model=fake-model", *SLICE)
    assert recorded.exit_status == pytest.ExitCode.OK, recorded.summary
    monkeypatch.delenv("FAKE_OPENAI_KEY")

    offline = two.session("benchmarks", "--model=fake-model", *SLICE, "--snap-items=M01,E01")
    assert offline.exit_status == pytest.ExitCode.OK, offline.summary
    assert (
        "not recorded for fake-model: compass (no recording under cassettes/fake-model/compass/, so it was not run); "
        "to record it, set FAKE_OPENAI_KEY in the environment or in .env and run: "
        "pytest benchmarks/test_compass.py --model=fake-model"
    ) in offline.notices
    # the profile's 18 conditions replayed; none of the compass planned, so none failed
    assert offline.planned == 18
    assert len(offline.observations) == 18
    assert all(observation.replayed for observation in offline.observations)
    session = json.loads((two.out / "session.json").read_text(encoding="utf-8"))
    assert [(left["model"], left["instrument"]) for left in session["not_recorded"]] == [("fake-model", "compass")]

    # Every instrument of the run unrecorded for the model: it would measure nothing of it.
    with pytest.raises(
        UsageProblem,
        match=r"(?s)no recordings of compass.*no way to record them for fake-model.*Models with recordings:",
    ):
        two.session("benchmarks/test_compass.py", "--model=fake-model", *SLICE, "--snap-items=E01")


def test_the_dry_run_prices_what_its_paths_hold(two: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    whole = dry_run(two.root, "benchmarks", "--model=fake-model")
    one_file = dry_run(two.root, "benchmarks/test_compass.py", "--model=fake-model")
    assert fnmatch.filter(whole, "total: 3804 conditions for 1 model(s); cost <= $* worst case, ~$* expected"), whole
    assert fnmatch.filter(one_file, "instrument compass*"), one_file
    assert fnmatch.filter(one_file, "total: 1536 conditions*"), one_file
    assert not fnmatch.filter(one_file, "*instrument profile*")
    assert not two.out.exists()


def test_without_a_key_a_model_that_takes_no_temperature_is_counted_once_per_condition(
    two: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    lines = dry_run(two.root, "benchmarks/test_profile.py", "--model=gpt-5.2")
    expected = (
        "*gpt-5.2: 756 conditions at the provider's default temperature; *output tokens per answer <= 2,048, "
        "expected ~256 (assumed for reasoning effort low: no recordings of it)*"
    )
    assert fnmatch.filter(lines, expected), lines
    assert fnmatch.filter(lines, "total: 756 conditions*"), lines


def test_a_run_from_a_subfolder_reads_the_roots_folders(two: BenchProject) -> None:
    (two.root / PROJECT_FILE).write_text("", encoding="utf-8")
    (two.root / "pytest.ini").unlink()  # no ini file: pytest's rootdir would be benchmarks/ itself
    benchmarks = two.root / "benchmarks"
    result = run_session(["test_profile.py", "--snap-no-analysis", "--model=fake-model", *SLICE], root=benchmarks)
    assert result.exit_status == pytest.ExitCode.OK, result.summary  # fake-model: the root's config/models.yaml
    assert len(list((two.cassettes / "fake-model" / "profile").glob("*.json"))) == 18
    assert (two.out / "observations.jsonl").is_file()
    assert not (benchmarks / "reports").exists()
