"""pytest's contract for instruments written in YAML: each questionnaire or task file under the run's paths is
collected as a test module of its own (one test per condition, node ids under the file, the instrument marker
set), also with xdist's workers, and the JUnit XML and the HTML report hold them; a mistake in such a file is
pytest's usage error, naming file, key and fix. What the instruments ask, record, analyse and gate:
tests/session/test_yaml_questionnaire.py and tests/session/test_yaml_task.py. Two pytest sessions."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import FAKE_KEY, BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.instrument_projects import (
    CALM,
    CALM_CONDITIONS,
    TOPICS_CONDITIONS,
    follows_the_input,
    follows_the_items,
    write_calm,
    write_topics,
)


@pytest.fixture
def bench(pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """A project with no benchmark module of the shipped ones: only what the test writes."""
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    return BenchProject(pytester, fake_server.base_url, instruments=())


def follows_either(request: dict[str, Any]) -> str:
    task = "\nText: " in request["messages"][-1]["content"]
    return follows_the_input(request) if task else follows_the_items(request)


def test_yaml_files_are_collected_as_test_modules_with_xdist(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    write_calm(bench)
    write_topics(bench)
    fake_server.script.answer = follows_either
    junit = bench.root / "junit.xml"
    result = bench.run("--model=fake-model", "-n", "2", f"--junitxml={junit}", "-rA", gate=True)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert result.parseoutcomes()["passed"] >= CALM_CONDITIONS + TOPICS_CONDITIONS
    result.stdout.fnmatch_lines(["PASSED benchmarks/calm.yaml::test_calm[[]fake-model-C1-*"])
    result.stdout.fnmatch_lines(["PASSED benchmarks/topics.yaml::test_topics[[]fake-model-*"])
    result.stdout.fnmatch_lines(["verdicts for calm*", "*#1 fake-model: PASS*"])
    result.stdout.fnmatch_lines(["verdicts for topics*", "*#1 fake-model: PASS*"])
    assert len(fake_server.script.requests) == CALM_CONDITIONS + TOPICS_CONDITIONS
    xml = junit.read_text(encoding="utf-8")
    for module, conditions in (("calm", CALM_CONDITIONS), ("topics", TOPICS_CONDITIONS)):
        cases = re.findall(rf'<testcase classname="benchmarks\.{module}\.yaml" name="test_{module}\[', xml)
        assert len(cases) == conditions, module
    report = (bench.out / "report.html").read_text(encoding="utf-8")
    assert 'id="snap-instrument-calm"' in report
    assert 'id="snap-instrument-topics"' in report


def test_a_mistake_in_a_yaml_file_is_a_usage_error(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    write_calm(bench)
    (bench.root / "benchmarks" / "calm.yaml").write_text(CALM.replace("points: 5", "points: 4"), encoding="utf-8")
    result = bench.run("--model=fake-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*calm.yaml: scale.labels: 5 labels for 4 points. Fix: give one label per point*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert fake_server.script.requests == []
