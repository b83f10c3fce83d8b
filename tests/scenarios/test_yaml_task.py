"""A classification task written only in YAML + CSV, in a project of its own, asked from the FAKE loopback
server: collected as one test per input and rewording, analysed like the sentiment study (accuracy,
consistency, Fleiss' kappa, flip rate per dimension, variant spread), judged, gated and reported;
answerers that ignore the input, or follow the wording instead of it, never PASS (docs/instruments.md)."""

from __future__ import annotations

import csv
import io
import json
import random
import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import WORKERS, BenchProject, gates_against_itself
from tests.fake_openai_server import FakeOpenAIServer

# Hidden inputs (nothing in the package knows them) with a nominal label set of their own.
TOPICS = """\
task: topics
labels: [sport, politics, weather]
data: {test: topics.csv, examples: topic_examples.csv}
template: "{tone} the topic of this text, one of: {labels}.\\n\\nText: {text}\\n\\n{close}"
dimensions:
  tone: {formal: "Please name", casual: "Hey, tell me"}
  close: {short: "Answer with the label only.", long: "Reply with just one of the labels, nothing else."}
phase2: {examples_per_label: 1}
"""
INPUTS = {
    "The striker scored twice in the final minutes.": "sport",
    "The relay team broke the national record.": "sport",
    "She serves faster than anyone on the tour.": "sport",
    "The goalkeeper saved a late penalty.": "sport",
    "Parliament passed the budget after a long night.": "politics",
    "The senator resigned over the leaked memo.": "politics",
    "Voters return to the polls in spring.": "politics",
    "The coalition agreed on a new prime minister.": "politics",
    "Heavy rain is expected along the coast tomorrow.": "weather",
    "A heatwave will push temperatures past forty.": "weather",
    "Fog delayed the morning flights.": "weather",
    "Snow is forecast for the mountain passes.": "weather",
}
EXAMPLES = {
    "The marathon was won in record time.": "sport",
    "The minister announced a new tax.": "politics",
    "Thunderstorms will clear by noon.": "weather",
}
CONDITIONS = len(INPUTS) * 2 * 2  # inputs x tone x close, one temperature and run


def table(rows: dict[str, str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["text", "label"])
    writer.writerows(rows.items())
    return out.getvalue()


def text_of(request: dict[str, Any]) -> str:
    found = re.search(r"^Text: (.+)$", request["messages"][-1]["content"], re.MULTILINE)
    assert found, request["messages"][-1]["content"]
    return found.group(1)


def follows_the_input(request: dict[str, Any]) -> str:
    return INPUTS.get(text_of(request), "weather").capitalize() + "."


def constant(request: dict[str, Any]) -> str:
    return "sport"


def uniformly_random(request: dict[str, Any]) -> str:
    return random.choice(["sport", "politics", "weather"])


def follows_the_wording(request: dict[str, Any]) -> str:
    """Right when asked formally, "sport" whatever the text when asked casually: accurate on half the variants."""
    return "sport" if request["messages"][-1]["content"].startswith("Hey") else INPUTS[text_of(request)]


def topics_project(pytester: pytest.Pytester, base_url: str, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake-" + "0123456789abcdefghijklmnopqrstuvwxyz")
    bench = BenchProject(pytester, base_url, instruments=())
    (bench.root / "benchmarks" / "topics.yaml").write_text(TOPICS, encoding="utf-8")
    (bench.root / "benchmarks" / "topics.csv").write_text(table(INPUTS), encoding="utf-8")
    (bench.root / "benchmarks" / "topic_examples.csv").write_text(table(EXAMPLES), encoding="utf-8")
    return bench


def topics_entry(bench: BenchProject) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((bench.out / "analysis.json").read_text(encoding="utf-8"))["instruments"]
    return dict(entry["topics"])


@pytest.mark.parametrize("workers", WORKERS)
def test_a_yaml_task_is_collected_asked_analysed_and_gated(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    bench = topics_project(pytester, fake_server.base_url, monkeypatch)
    fake_server.script.answer = follows_the_input
    result = bench.run("--model=fake-model", *workers, "-rA", gate=True)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert result.parseoutcomes()["passed"] >= CONDITIONS
    result.stdout.fnmatch_lines(["verdicts for topics*", "*#1 fake-model: PASS*"])
    assert len(fake_server.script.requests) == CONDITIONS
    assert len(list((bench.cassettes / "fake-model" / "topics").glob("*"))) == CONDITIONS
    model = topics_entry(bench)["models"]["fake-model"]
    assert model["verdict"] == "PASS"
    metrics = model["metrics"]
    for name in ("custom_accuracy", "exact_accuracy", "consistency", "fleiss_kappa", "max_flip_rate"):
        assert metrics[name]["value"] == pytest.approx(1.0 if name != "max_flip_rate" else 0.0), name
    assert {"flip_rate[tone]", "flip_rate[close]", "variant_spread"} <= set(metrics)
    assert metrics["polarity_accuracy"]["value"] is None  # a nominal label set has no polarity
    assert model["details"]["labels"] == ["sport", "politics", "weather"]
    assert 'id="snap-instrument-topics"' in (bench.out / "report.html").read_text(encoding="utf-8")

    gates_against_itself(bench, monkeypatch, workers, "topics-consistency")


@pytest.mark.parametrize(
    ("name", "answerer", "failing"),
    [
        ("constant", constant, "custom_accuracy"),
        ("uniformly random", uniformly_random, "consistency"),
        ("follows the wording", follows_the_wording, "flip_rate[tone]"),
    ],
)
def test_answerers_that_ignore_the_input_never_pass(
    pytester: pytest.Pytester,
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    answerer: Callable[[dict[str, Any]], str],
    failing: str,
) -> None:
    bench = topics_project(pytester, fake_server.base_url, monkeypatch)
    fake_server.script.answer = answerer
    result = bench.run("--model=fake-model", "-rA", gate=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, name
    model = topics_entry(bench)["models"]["fake-model"]
    assert model["verdict"] == "FAIL", name
    assert len(fake_server.script.requests) == CONDITIONS
    # what gives it away: no better than the base rate, no agreement across rewordings, or the tone flipping it
    if failing == "flip_rate[tone]":
        assert model["metrics"][failing]["value"] >= 0.5, name
    result.stdout.fnmatch_lines(["*failed: fake-model * = *"])


def test_a_mistake_in_the_task_stops_the_run_naming_file_key_and_fix(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = topics_project(pytester, fake_server.base_url, monkeypatch)
    (bench.root / "benchmarks" / "topics.csv").write_text(table({**INPUTS, "A quiet day at the office.": "business"}))
    result = bench.run("--model=fake-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*topics.csv: row 14: label 'business' is not one of the labels. Fix: use one of sport*"]
    )
    assert fake_server.script.requests == []
