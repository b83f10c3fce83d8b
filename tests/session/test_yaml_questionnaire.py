"""A questionnaire written only in YAML, in a project of its own, asked from the FAKE loopback server: planned as one
condition per item and occasion, judged, gated and reported like the shipped instruments; answerers that ignore the
items never PASS it, one that follows them does (docs/instruments.md, "Adding an instrument"). Its collection as a
test module under pytest: tests/contract/test_yaml_instruments.py."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from snap_bench.session.settings import UsageProblem
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.instrument_projects import CALM, CALM_CONDITIONS, follows_the_items, write_calm
from tests.session.recorded import (
    Recorded,
    assert_asked_judged_and_passed,
    copy_into,
    empty_project,
    gates_against_itself,
    record,
    report_summary,
)

CONDITIONS = CALM_CONDITIONS


def constant(request: dict[str, Any]) -> str:
    return "4"


def always_agree(request: dict[str, Any]) -> str:
    return random.Random(request["messages"][-1]["content"] + str(request.get("temperature"))).choice(["4", "5"])


def uniformly_random(request: dict[str, Any]) -> str:
    return str(random.randint(1, 5))


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The calm questionnaire answered, once for the module, by a respondent who follows the items."""
    return record(tmp_path_factory.mktemp("calm") / "project", write_calm, follows_the_items, "--model=fake-model")


@pytest.fixture
def calm(tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    project = empty_project(tmp_path, fake_server.base_url, monkeypatch)
    write_calm(project)
    return project


def calm_entry(result_document: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = result_document["instruments"]["calm"]
    return entry


def test_a_yaml_questionnaire_is_asked_judged_and_reported(
    followed: Recorded, calm: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = assert_asked_judged_and_passed(followed, "calm", CONDITIONS)
    result = followed.result
    assert model["metrics"]["contradiction_rate[t0]"]["value"] == 0.0
    assert {"cronbach_alpha[composure]", "cronbach_alpha[tidiness]"} <= set(model["metrics"])

    assert 'id="snap-instrument-calm"' in report_summary(followed.root, result, "--model=fake-model")

    copy_into(followed, calm)
    gates_against_itself(calm, monkeypatch, "calm-dependability")


@pytest.mark.parametrize(
    ("name", "answerer"),
    [("constant", constant), ("always agree", always_agree), ("uniformly random", uniformly_random)],
)
def test_answerers_that_ignore_the_items_never_pass(
    calm: BenchProject, fake_server: FakeOpenAIServer, name: str, answerer: Callable[[dict[str, Any]], str]
) -> None:
    fake_server.script.answer = answerer
    result = calm.session("--model=fake-model", gate=True)
    assert result.exit_status == pytest.ExitCode.TESTS_FAILED, name
    assert any(check.fails_run for check in result.checks), name
    assert result.judgement is not None
    model = calm_entry(result.judgement.document)["models"]["fake-model"]
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
    followed: Recorded, calm: BenchProject
) -> None:
    copy_into(followed, calm)
    (calm.root / "benchmarks" / "calm.yaml").write_text(CALM + "norms: calm_norms.yaml\n", encoding="utf-8")
    (calm.root / "benchmarks" / "calm_norms.yaml").write_text(CALM_NORMS, encoding="utf-8")
    result = calm.session("--model=fake-model", gate=True)
    assert result.exit_status == pytest.ExitCode.OK, result.summary
    # the norms file is not a questionnaire: nothing but calm.yaml's conditions was planned (all replayed)
    assert result.planned == CONDITIONS
    assert len(result.observations) == CONDITIONS
    assert all(observation.replayed for observation in result.observations)
    assert result.judgement is not None
    composure = calm_entry(result.judgement.document)["models"]["fake-model"]["details"]["norms"]["traits"]["composure"]
    # the follower's keyed composure answers: 4, 6 - 2, 5, 6 - 1 -> 4.5 on every occasion
    assert composure["model_mean"] == pytest.approx(4.5)
    assert composure["z"] == pytest.approx((4.5 - 3.0) / 0.5)
    assert composure["human_alpha"] == 0.8
    heading = "against 50 people (a pilot of fifty):"
    against = [index for index, line in enumerate(result.summary) if line.endswith(heading)]
    assert against, result.summary
    following = result.summary[against[0] + 1 :]
    assert any("composure: 4.50" in line and "z +3.00" in line for line in following), following
    assert "Against 50 people (a pilot of fifty)" in report_summary(calm.root, result, "--model=fake-model")


def test_a_mistake_in_the_file_stops_the_run_naming_file_key_and_fix(
    calm: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    (calm.root / "benchmarks" / "calm.yaml").write_text(CALM.replace("points: 5", "points: 4"), encoding="utf-8")
    with pytest.raises(UsageProblem, match=r"calm\.yaml: scale\.labels: 5 labels for 4 points\. Fix: give one label"):
        calm.session("--model=fake-model")
    assert fake_server.script.requests == []
