"""A questionnaire written only in YAML, in a project of its own, asked from the FAKE loopback server: collected
as one test per condition, judged, gated and reported like the shipped instruments; answerers that ignore the
items never PASS it, one that follows them does (docs/instruments.md, "Adding an instrument")."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import WORKERS, BenchProject, gates_against_itself
from tests.fake_openai_server import FakeOpenAIServer

# The minimal file, with hidden items (nothing in the package knows them) and a construct of its own.
CALM = """\
questionnaire: calm
scale: {points: 5, labels: [Strongly disagree, Disagree, Neutral, Agree, Strongly agree]}
items:
  - {id: C1, construct: composure, text: "I stay calm when plans fall apart."}
  - {id: C2, construct: composure, text: "Small setbacks make me lose my temper.", reverse: true}
  - {id: C3, construct: composure, text: "I keep my head in a crisis."}
  - {id: C4, construct: composure, text: "I panic when things go wrong.", reverse: true}
  - {id: T1, construct: tidiness, text: "I keep my desk in order."}
  - {id: T2, construct: tidiness, text: "My room is usually a mess.", reverse: true}
"""
# What the hidden person holds, per item: agreeing with some, disagreeing with others, each to its degree.
VIEWS = {
    "I stay calm when plans fall apart.": 4,
    "Small setbacks make me lose my temper.": 2,
    "I keep my head in a crisis.": 5,
    "I panic when things go wrong.": 1,
    "I keep my desk in order.": 2,
    "My room is usually a mess.": 4,
}
CONDITIONS = 6 * 4 * 2 * 3  # items x the shipped four system prompts x temperatures 0 and 1 x 3 runs


def statement(request: dict[str, Any]) -> str:
    # the default instruction: the scale, a blank line, the statement, a blank line, the answer format
    return str(request["messages"][-1]["content"].split("\n\n")[1])


def follows_the_items(request: dict[str, Any]) -> str:
    return str(VIEWS[statement(request)])


def constant(request: dict[str, Any]) -> str:
    return "4"


def always_agree(request: dict[str, Any]) -> str:
    return random.Random(request["messages"][-1]["content"] + str(request.get("temperature"))).choice(["4", "5"])


def uniformly_random(request: dict[str, Any]) -> str:
    return str(random.randint(1, 5))


def calm_project(pytester: pytest.Pytester, base_url: str, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake-" + "0123456789abcdefghijklmnopqrstuvwxyz")
    bench = BenchProject(pytester, base_url, instruments=())
    (bench.root / "benchmarks" / "calm.yaml").write_text(CALM, encoding="utf-8")
    return bench


def calm_entry(bench: BenchProject) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((bench.out / "analysis.json").read_text(encoding="utf-8"))["instruments"]["calm"]
    return entry


@pytest.mark.parametrize("workers", WORKERS)
def test_a_yaml_questionnaire_is_collected_asked_judged_and_reported(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    bench = calm_project(pytester, fake_server.base_url, monkeypatch)
    fake_server.script.answer = follows_the_items
    junit = bench.root / "junit.xml"
    result = bench.run("--model=fake-model", *workers, f"--junitxml={junit}", "-rA", gate=True)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    outcomes = result.parseoutcomes()
    # one test per condition, and the judged checks
    assert outcomes["passed"] >= CONDITIONS
    result.stdout.fnmatch_lines(["verdicts for calm*", "*#1 fake-model: PASS*"])
    assert len(fake_server.script.requests) == CONDITIONS
    recorded = list((bench.cassettes / "fake-model" / "calm").glob("*"))
    assert len(recorded) == CONDITIONS
    entry = calm_entry(bench)
    model = entry["models"]["fake-model"]
    assert model["verdict"] == "PASS"
    assert model["metrics"]["contradiction_rate[t0]"]["value"] == 0.0
    assert {"cronbach_alpha[composure]", "cronbach_alpha[tidiness]"} <= set(model["metrics"])
    xml = junit.read_text(encoding="utf-8")
    assert xml.count('<testcase classname="benchmarks.calm.yaml"') == CONDITIONS or "calm.yaml" in xml
    report = (bench.out / "report.html").read_text(encoding="utf-8")
    assert 'id="snap-instrument-calm"' in report

    gates_against_itself(bench, monkeypatch, workers, "calm-dependability")


@pytest.mark.parametrize(
    ("name", "answerer"),
    [("constant", constant), ("always agree", always_agree), ("uniformly random", uniformly_random)],
)
def test_answerers_that_ignore_the_items_never_pass(
    pytester: pytest.Pytester,
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    answerer: Callable[[dict[str, Any]], str],
) -> None:
    bench = calm_project(pytester, fake_server.base_url, monkeypatch)
    fake_server.script.answer = answerer
    result = bench.run("--model=fake-model", "-rA", gate=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, name
    model = calm_entry(bench)["models"]["fake-model"]
    assert model["verdict"] == "FAIL", name
    assert len(fake_server.script.requests) == CONDITIONS


CALM_NORMS = """\
source: {respondents: 50, name: a pilot of fifty}
items:
  C1: {mean: 3.5, sd: 1.0, n: 50}
traits:
  composure: {mean: 3.0, sd: 0.5, alpha: 0.8, n: 50}
  tidiness: {mean: 3.5, sd: 0.8, alpha: 0.6, n: 50}
"""


def test_norms_beside_a_questionnaire_reach_the_analysis_the_report_and_the_terminal(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = calm_project(pytester, fake_server.base_url, monkeypatch)
    (bench.root / "benchmarks" / "calm.yaml").write_text(CALM + "norms: calm_norms.yaml\n", encoding="utf-8")
    (bench.root / "benchmarks" / "calm_norms.yaml").write_text(CALM_NORMS, encoding="utf-8")
    fake_server.script.answer = follows_the_items
    result = bench.run("--model=fake-model", gate=True)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    # the norms file is not a questionnaire: nothing but calm.yaml's conditions was collected
    assert len(fake_server.script.requests) == CONDITIONS
    composure = calm_entry(bench)["models"]["fake-model"]["details"]["norms"]["traits"]["composure"]
    # the follower's keyed composure answers: 4, 6 - 2, 5, 6 - 1 -> 4.5 on every occasion
    assert composure["model_mean"] == pytest.approx(4.5)
    assert composure["z"] == pytest.approx((4.5 - 3.0) / 0.5)
    assert composure["human_alpha"] == 0.8
    result.stdout.fnmatch_lines(["*against 50 people (a pilot of fifty):", "*composure: 4.50*z +3.00*"])
    report = (bench.out / "report.html").read_text(encoding="utf-8")
    assert "Against 50 people (a pilot of fifty)" in report


def test_a_mistake_in_the_file_stops_the_run_naming_file_key_and_fix(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = calm_project(pytester, fake_server.base_url, monkeypatch)
    (bench.root / "benchmarks" / "calm.yaml").write_text(CALM.replace("points: 5", "points: 4"), encoding="utf-8")
    result = bench.run("--model=fake-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*calm.yaml: scale.labels: 5 labels for 4 points. Fix: give one label per point*"])
    assert fake_server.script.requests == []
