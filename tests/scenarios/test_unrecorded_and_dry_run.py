"""Offline, an instrument a model has no recording of is named once and not run (not a failure per condition);
a run that would measure nothing of a model is still a usage error. The dry run prices what pytest collects
(a file path or -k limits it) at the temperatures each model will really be asked at. The project root is
found from a subfolder through snap-bench.toml."""

from __future__ import annotations

import json

import pytest

from snap_bench.design.project import PROJECT_FILE
from tests.conftest import FAKE_KEY, SLICE, BenchProject
from tests.fake_openai_server import FakeOpenAIServer


@pytest.fixture
def two(pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    return BenchProject(pytester, fake_server.base_url, ("profile", "compass"))


def run(bench: BenchProject, *args: str) -> pytest.RunResult:
    return bench.pytester.runpytest_subprocess("-p", "no:cacheprovider", "--snap-no-analysis", *args)


def test_offline_an_unrecorded_instrument_is_named_not_failed(
    two: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = run(two, "benchmarks/test_profile.py", "--model=fake-model", *SLICE)
    assert recorded.ret == pytest.ExitCode.OK, recorded.stdout.str()
    monkeypatch.delenv("FAKE_OPENAI_KEY")

    offline = run(two, "benchmarks", "--model=fake-model", *SLICE, "--snap-items=M01,E01", "-n", "2")
    assert offline.ret == pytest.ExitCode.OK, offline.stdout.str()
    offline.stdout.fnmatch_lines(
        [
            "*notice: not recorded for fake-model: compass (no recording under cassettes/fake-model/compass/, so it "
            "was not run); to record it, set FAKE_OPENAI_KEY in the environment or in .env and run: "
            "pytest benchmarks/test_compass.py --model=fake-model",
            "*18 passed*",
        ]
    )
    last = offline.stdout.str().splitlines()[-1]
    assert "failed" not in last
    assert "skipped" not in last  # the compass's test function, left with no condition, is deselected
    session = json.loads((two.out / "session.json").read_text(encoding="utf-8"))
    assert [(left["model"], left["instrument"]) for left in session["not_recorded"]] == [("fake-model", "compass")]

    # Every instrument of the run unrecorded for the model: it would measure nothing of it.
    nothing = run(two, "benchmarks/test_compass.py", "--model=fake-model", *SLICE, "--snap-items=E01")
    assert nothing.ret == pytest.ExitCode.USAGE_ERROR
    nothing.stderr.fnmatch_lines(
        ["*no recordings of compass*no way to record them for fake-model*Models with recordings:*"]
    )


def test_the_dry_run_prices_what_is_collected(two: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    whole = run(two, "benchmarks", "--model=fake-model", "--snap-dry-run", "-q")
    one_file = run(two, "benchmarks/test_compass.py", "--model=fake-model", "--snap-dry-run")
    narrowed = run(two, "benchmarks", "--model=fake-model", "--snap-dry-run", "-k", "compass and NEU")
    assert {whole.ret, one_file.ret, narrowed.ret} == {pytest.ExitCode.OK}
    whole.stdout.fnmatch_lines(["total: 3804 conditions for 1 model(s); cost <= $* worst case, ~$* expected"])
    one_file.stdout.fnmatch_lines(["collected 1536 items", "*instrument compass*", "total: 1536 conditions*"])
    assert "instrument profile" not in one_file.stdout.str()
    narrowed.stdout.fnmatch_lines(["total: 384 conditions*"])
    assert not two.out.exists()


def test_without_a_key_a_model_that_takes_no_temperature_is_counted_once_per_condition(
    two: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    result = run(two, "benchmarks/test_profile.py", "--model=gpt-5.2", "--snap-dry-run")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*gpt-5.2: 756 conditions at the provider's default temperature; *output tokens per answer <= 2,048, "
            "expected ~256 (assumed for reasoning effort low: no recordings of it)*",
            "total: 756 conditions*",
        ]
    )


def test_a_run_from_a_subfolder_reads_the_roots_folders(two: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    (two.root / PROJECT_FILE).write_text("", encoding="utf-8")
    (two.root / "pytest.ini").unlink()  # no ini file: pytest's rootdir would be benchmarks/ itself
    monkeypatch.chdir(two.root / "benchmarks")
    result = two.pytester.runpytest_subprocess(
        "test_profile.py", "-p", "no:cacheprovider", "--snap-no-analysis", "--model=fake-model", *SLICE
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()  # fake-model: the root's config/models.yaml
    assert len(list((two.cassettes / "fake-model" / "profile").glob("*.json"))) == 18
    assert (two.out / "observations.jsonl").is_file()
    assert not (two.root / "benchmarks" / "reports").exists()
