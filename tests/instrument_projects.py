"""Instruments a team writes in its own project, for the session tests (in-process) and the pytest-contract tests
(under pytest) alike: a questionnaire and a classification task in YAML, with hidden items nothing in the package
knows, and a fourth instrument in the project's conftest.py (docs/instruments.md, "Adding an instrument")."""

from __future__ import annotations

import csv
import io
import re
import textwrap
from typing import Any

import pytest

from tests.conftest import FAKE_KEY, BenchProject

# -- a questionnaire in YAML: the minimal file, with a construct of its own ------------------------------

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
CALM_CONDITIONS = 6 * 4 * 2 * 3  # items x the shipped four system prompts x temperatures 0 and 1 x 3 runs


def statement(request: dict[str, Any]) -> str:
    # the default instruction: the scale, a blank line, the statement, a blank line, the answer format
    return str(request["messages"][-1]["content"].split("\n\n")[1])


def follows_the_items(request: dict[str, Any]) -> str:
    return str(VIEWS[statement(request)])


def write_calm(project: BenchProject) -> None:
    (project.root / "benchmarks" / "calm.yaml").write_text(CALM, encoding="utf-8")


def calm_project(pytester: pytest.Pytester, base_url: str, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """The calm questionnaire alone in a pytester project, the fake server's key set."""
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    project = BenchProject(pytester, base_url, instruments=())
    write_calm(project)
    return project


# -- a classification task in YAML and CSV, with a nominal label set of its own ----------------------------------

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
TOPICS_CONDITIONS = len(INPUTS) * 2 * 2  # inputs x tone x close, one temperature and run


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


def write_topics(project: BenchProject) -> None:
    (project.root / "benchmarks" / "topics.yaml").write_text(TOPICS, encoding="utf-8")
    (project.root / "benchmarks" / "topics.csv").write_text(table(INPUTS), encoding="utf-8")
    (project.root / "benchmarks" / "topic_examples.csv").write_text(table(EXAMPLES), encoding="utf-8")


# -- a fourth instrument: design, scoring, metrics, analysis and report section, in the project's conftest.py ----

YES_NO_INSTRUMENT = """
from pathlib import Path

import yaml

from snap_bench.analysis.metric_tables import ModelAnalysis, answer_rates, observation_table, proportion, retest_metrics
from snap_bench.instruments import Instrument, Scored, Selection, register
from snap_bench.analysis.metric_specs import MetricSpec
from snap_bench.design.config import ConfigFiles
from snap_bench.observations.observation import Condition
from snap_bench.observations.parsing import AnswerCode


@register
class YesNoInstrument(Instrument):
    name = "yesno"
    title = "yes/no questionnaire"
    metrics = {"yes_share": MetricSpec("yes answers", unit="share", composite_scale=None)}
    max_tokens = 5

    def __init__(self, config: ConfigFiles) -> None:
        self.file = config.path("yesno.yaml")
        design = yaml.safe_load(self.file.read_text(encoding="utf-8"))
        self.questions = design["questions"]
        self.runs = design["runs"]

    @property
    def source_files(self) -> list[Path]:
        return [self.file]

    @property
    def selectable_items(self) -> list[str]:
        return sorted(self.questions)

    def conditions(self, selection: Selection) -> list[Condition]:
        runs = selection.runs or self.runs
        return [
            Condition(self.name, item, (), 0.0, run)
            for item in self.questions
            if not selection.items or item in selection.items
            for run in range(1, runs + 1)
        ]

    def messages(self, condition: Condition) -> list[dict[str, str]]:
        return [{"role": "user", "content": self.questions[condition.item] + " Answer yes or no."}]

    def score(self, condition: Condition, answer: str) -> Scored:
        word = answer.strip().lower().rstrip(".")
        if word in ("yes", "no"):
            value = int(word == "yes")
            return Scored(value, float(value), None, "", None)
        return Scored(None, None, AnswerCode.INVALID, "neither yes nor no", None)

    def construct(self, condition: Condition) -> str | None:
        return None

    def analyse(self, model, observations, settings) -> ModelAnalysis:
        table = observation_table(observations)
        result = ModelAnalysis(model, self.name, len(table), int((table["code"] == 0).sum()))
        result.metrics.update(answer_rates(table, settings))
        result.metrics.update(retest_metrics(table, settings, with_cv=False))
        yes = int((table["score"] == 1).sum())
        result.metrics["yes_share"] = proportion(yes, len(table), settings.confidence)
        return result

    def report_section(self, context) -> str:
        return f'<p id="yesno-section">{len(context.observations)} yes/no answers</p>'
"""
YES_NO_DESIGN = "runs: 2\nquestions:\n  Q1: Is the sky blue?\n  Q2: Is fire cold?\n  Q3: Is water wet?\n"
YES_NO_THRESHOLDS = """
yesno:
  judge: point
  metrics:
    tara_all_runs: {minimum: 0.5, target: 0.9}
    unscored_rate: {minimum: 0.10, target: 0.10}
  composite_weights:
    tara_all_runs: 1.0
  non_inferiority:
    tara_all_runs: 0.2
    unscored_rate: 0.05
"""
YES_NO_TEST_MODULE = """
import pytest

from snap_bench import Ask, Case

pytestmark = pytest.mark.instrument("yesno")


def test_yes_or_no(case: Case, ask: Ask) -> None:
    ask(case)
"""
YES_NO_CONDITIONS = 3 * 2  # questions x runs


def truthful(request: dict[str, Any]) -> str:
    question = request["messages"][-1]["content"]
    return "No." if "fire" in question else "Yes."


def write_yes_no(project: BenchProject) -> None:
    """The yes/no instrument in the project's conftest.py, its test module, design and thresholds."""
    (project.root / "conftest.py").write_text(YES_NO_INSTRUMENT, encoding="utf-8")
    (project.root / "benchmarks" / "test_yesno.py").write_text(YES_NO_TEST_MODULE, encoding="utf-8")
    (project.root / "config" / "yesno.yaml").write_text(YES_NO_DESIGN, encoding="utf-8")
    with project.own("thresholds.yaml").open("a", encoding="utf-8") as thresholds:
        thresholds.write(textwrap.dedent(YES_NO_THRESHOLDS))
