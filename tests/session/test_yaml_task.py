"""A classification task written only in YAML + CSV, in a project of its own, asked from the FAKE loopback
server: planned as one condition per input and rewording, analysed like the sentiment study (accuracy,
consistency, Fleiss' kappa, flip rate per dimension, variant spread), judged, gated and reported; answerers that
ignore the input, or follow the wording instead of it, never PASS (docs/instruments.md). Its collection as a test
module under pytest: tests/contract/test_yaml_instruments.py."""

from __future__ import annotations

import fnmatch
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from snap_bench.session.settings import UsageProblem
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.instrument_projects import INPUTS, TOPICS_CONDITIONS, follows_the_input, table, text_of, write_topics
from tests.session.recorded import (
    Recorded,
    assert_asked_judged_and_passed,
    copy_into,
    empty_project,
    gates_against_itself,
    record,
    report_summary,
)

CONDITIONS = TOPICS_CONDITIONS


def constant(request: dict[str, Any]) -> str:
    return "sport"


def uniformly_random(request: dict[str, Any]) -> str:
    return random.choice(["sport", "politics", "weather"])


def follows_the_wording(request: dict[str, Any]) -> str:
    """Right when asked formally, "sport" whatever the text when asked casually: accurate on half the variants."""
    return "sport" if request["messages"][-1]["content"].startswith("Hey") else INPUTS[text_of(request)]


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The topics task answered, once for the module, by a model that follows the input."""
    return record(tmp_path_factory.mktemp("topics") / "project", write_topics, follows_the_input, "--model=fake-model")


@pytest.fixture
def topics(tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    project = empty_project(tmp_path, fake_server.base_url, monkeypatch)
    write_topics(project)
    return project


def topics_model(document: dict[str, Any]) -> dict[str, Any]:
    model: dict[str, Any] = document["instruments"]["topics"]["models"]["fake-model"]
    return model


def test_a_yaml_task_is_asked_analysed_and_gated(
    followed: Recorded, topics: BenchProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = assert_asked_judged_and_passed(followed, "topics", CONDITIONS)
    result = followed.result
    metrics = model["metrics"]
    for name in ("custom_accuracy", "exact_accuracy", "consistency", "fleiss_kappa", "max_flip_rate"):
        assert metrics[name]["value"] == pytest.approx(1.0 if name != "max_flip_rate" else 0.0), name
    assert {"flip_rate[tone]", "flip_rate[close]", "variant_spread"} <= set(metrics)
    assert metrics["polarity_accuracy"]["value"] is None  # a nominal label set has no polarity
    assert model["details"]["labels"] == ["sport", "politics", "weather"]

    assert 'id="snap-instrument-topics"' in report_summary(followed.root, result, "--model=fake-model")

    copy_into(followed, topics)
    gates_against_itself(topics, monkeypatch, "topics-consistency")


@pytest.mark.parametrize(
    ("name", "answerer", "failing"),
    [
        ("constant", constant, "custom_accuracy"),
        ("uniformly random", uniformly_random, "consistency"),
        ("follows the wording", follows_the_wording, "flip_rate[tone]"),
    ],
)
def test_answerers_that_ignore_the_input_never_pass(
    topics: BenchProject,
    fake_server: FakeOpenAIServer,
    name: str,
    answerer: Callable[[dict[str, Any]], str],
    failing: str,
) -> None:
    fake_server.script.answer = answerer
    result = topics.session("--model=fake-model", gate=True)
    assert result.exit_status == pytest.ExitCode.TESTS_FAILED, name
    assert result.judgement is not None
    model = topics_model(result.judgement.document)
    assert model["verdict"] == "FAIL", name
    assert len(fake_server.script.requests) == CONDITIONS
    # what gives it away: no better than the base rate, no agreement across rewordings, or the tone flipping it
    if failing == "flip_rate[tone]":
        assert model["metrics"][failing]["value"] >= 0.5, name
    assert fnmatch.filter(result.summary, "*failed: fake-model * = *"), result.summary


def test_a_mistake_in_the_task_stops_the_run_naming_file_key_and_fix(
    topics: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    (topics.root / "benchmarks" / "topics.csv").write_text(table({**INPUTS, "A quiet day at the office.": "business"}))
    with pytest.raises(UsageProblem, match=r"topics\.csv: row 14: label 'business' is not one of the labels\. Fix: "):
        topics.session("--model=fake-model")
    assert fake_server.script.requests == []
