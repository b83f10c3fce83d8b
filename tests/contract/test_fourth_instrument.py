"""pytest's contract for an instrument a project adds in its own conftest.py: pytest imports it (in every xdist
worker too), the instrument's test module is parametrised with its conditions, its checks are test reports, and
the JUnit XML and the HTML report (with the instrument's own section) hold them. What the instrument asks,
analyses and gates: tests/session/test_fourth_instrument.py. One pytest session."""

from __future__ import annotations

import pytest

from tests.conftest import FAKE_KEY, BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.instrument_projects import YES_NO_CONDITIONS, truthful, write_yes_no


@pytest.fixture
def bench(pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """A project with no benchmark module of the shipped ones: only what the test writes."""
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    return BenchProject(pytester, fake_server.base_url, instruments=())


def test_an_instrument_of_the_projects_conftest_is_collected_run_and_reported(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    write_yes_no(bench)
    fake_server.script.answer = truthful
    junit = bench.root / "junit.xml"
    result = bench.run("--model=fake-model", "-n", "2", f"--junitxml={junit}", "-rA", gate=True)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "PASSED benchmarks/test_yesno.py::test_yes_or_no[[]fake-model-Q1-r1[]]",
            "PASSED snap-bench::thresholds[[]fake-model-yesno-tara_all_runs[]]",
            "verdicts for yesno*",
            "*#1 fake-model: PASS (composite 1.000)",
        ]
    )
    result.assert_outcomes(passed=YES_NO_CONDITIONS + 2)  # 3 questions x 2 runs, and the instrument's 2 checks
    assert len(fake_server.script.requests) == YES_NO_CONDITIONS
    assert 'name="thresholds[fake-model-yesno-tara_all_runs]"' in junit.read_text(encoding="utf-8")
    report = (bench.out / "report.html").read_text(encoding="utf-8")
    assert 'id="snap-instrument-yesno"' in report
    assert "6 yes/no answers" in report
