"""pytest's contract for what a run collects: offline, the test function of an instrument the model has no
recording of is deselected (not a failure or a skip per condition, with xdist's workers too) and the notice is
printed; the dry run prices what pytest collected, a file path and -k limiting it, and runs nothing. What the
session decides of these: tests/session/test_unrecorded_and_dry_run.py. Two pytest sessions."""

from __future__ import annotations

import pytest

from tests.conftest import FAKE_KEY, SLICE, BenchProject
from tests.fake_openai_server import FakeOpenAIServer


@pytest.fixture
def two(pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    return BenchProject(pytester, fake_server.base_url, ("profile", "compass"))


def test_offline_an_unrecorded_instruments_tests_are_deselected_with_xdist(
    two: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the profile's recordings, made in-process: only the offline run is pytest's
    assert two.session("benchmarks/test_profile.py", "--model=fake-model", *SLICE).exit_status == 0
    monkeypatch.delenv("FAKE_OPENAI_KEY")

    offline = two.run("--model=fake-model", *SLICE, "--snap-items=M01,E01", "-n", "2")
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


def test_the_dry_run_prices_what_a_file_path_and_k_collect(two: BenchProject, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    narrowed = two.pytester.runpytest_subprocess(
        "benchmarks/test_compass.py", "-p", "no:cacheprovider", "--model=fake-model", "--snap-dry-run", "-k", "NEU"
    )
    assert narrowed.ret == pytest.ExitCode.OK, narrowed.stdout.str()
    narrowed.stdout.fnmatch_lines(["collected 1536 items / 1152 deselected / 384 selected", "*instrument compass*"])
    narrowed.stdout.fnmatch_lines(["total: 384 conditions*"])
    assert "instrument profile" not in narrowed.stdout.str()
    assert not two.out.exists()
