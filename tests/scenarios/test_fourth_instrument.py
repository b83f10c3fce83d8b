"""Adding an instrument touches no core module: a yes/no questionnaire defined only in this test's project
(its conftest.py) runs through collection, asking the fake server, analysis, thresholds, the gate, the
report and a saved baseline, plain and with xdist (docs/instruments.md: "Adding an instrument")."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from tests.conftest import WORKERS, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

# The whole instrument: design, scoring, metrics, analysis and report section, in one conftest.py.
INSTRUMENT = """
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

DESIGN = "runs: 2\nquestions:\n  Q1: Is the sky blue?\n  Q2: Is fire cold?\n  Q3: Is water wet?\n"
THRESHOLDS = """
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
TEST_MODULE = """
import pytest

from snap_bench import Ask, Case

pytestmark = pytest.mark.instrument("yesno")


def test_yes_or_no(case: Case, ask: Ask) -> None:
    ask(case)
"""


def truthful(request: dict[str, Any]) -> str:
    question = request["messages"][-1]["content"]
    return "No." if "fire" in question else "Yes."


def yes_no_project(bench: BenchProject) -> None:
    (bench.root / "conftest.py").write_text(INSTRUMENT, encoding="utf-8")
    (bench.root / "benchmarks" / "test_yesno.py").write_text(TEST_MODULE, encoding="utf-8")
    (bench.root / "config" / "yesno.yaml").write_text(DESIGN, encoding="utf-8")
    with bench.own("thresholds.yaml").open("a", encoding="utf-8") as thresholds:
        thresholds.write(textwrap.dedent(THRESHOLDS))


@pytest.mark.parametrize("workers", WORKERS)
def test_a_fourth_instrument_runs_end_to_end(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake-0123456789abcdefghijklmnopqrstuvwxyz")
    bench = BenchProject(pytester, fake_server.base_url, instruments=())
    yes_no_project(bench)
    fake_server.script.answer = truthful

    junit = bench.root / "junit.xml"
    result = bench.run("--model=fake-model", *workers, f"--junitxml={junit}", "-rA", gate=True)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "PASSED snap-bench::thresholds[[]fake-model-yesno-tara_all_runs[]]",
            "verdicts for yesno*",
            "*#1 fake-model: PASS (composite 1.000)",
            "*8 passed*",  # 3 questions x 2 runs, and the instrument's 2 checks
        ]
    )
    assert sorted(p.name for p in (bench.cassettes / "fake-model" / "yesno").glob("*.json")) == [
        f"{item}-r{run}.json" for item in ("Q1", "Q2", "Q3") for run in (1, 2)
    ]
    entry = json.loads((bench.out / "analysis.json").read_text(encoding="utf-8"))["instruments"]["yesno"]
    model = entry["models"]["fake-model"]
    assert entry["title"] == "yes/no questionnaire"
    assert model["verdict"] == "PASS"
    assert model["metrics"]["yes_share"]["value"] == pytest.approx(4 / 6)
    assert model["metrics"]["tara_all_runs"]["status"] in ("target", "excellent")
    assert 'name="thresholds[fake-model-yesno-tara_all_runs]"' in junit.read_text(encoding="utf-8")
    report = (bench.out / "report.html").read_text(encoding="utf-8")
    assert 'id="snap-instrument-yesno"' in report
    assert "6 yes/no answers" in report

    # Replayed with no key, saved as a baseline, and gated against it: an unchanged model passes.
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    saved = bench.root / "baselines" / "fake-model.json"
    bench.run("--model=fake-model", *workers, f"--snap-save-baseline={saved}", gate=True).assert_outcomes(passed=8)
    gated = bench.run("--model=fake-model", *workers, f"--baseline={saved}", "--snap-gate=baseline", "-rA", gate=True)
    assert gated.ret == pytest.ExitCode.OK, gated.stdout.str()
    # every judged metric is compared: the shared tara_all_runs pairs by item like the profile's
    for metric in ("unscored_rate", "tara_all_runs"):
        comparison = f"fake-model-vs-fake-model@baseline-yesno-{metric}"
        gated.stdout.fnmatch_lines([f"PASSED snap-bench::thresholds[[]{comparison}[]]"])


def test_an_instrument_that_answers_wrong_fails_its_own_checks(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same project with a model whose answers cannot be read: the instrument's checks fail the run."""
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake-0123456789abcdefghijklmnopqrstuvwxyz")
    bench = BenchProject(pytester, fake_server.base_url, instruments=())
    yes_no_project(bench)
    fake_server.script.answer = lambda request: "maybe"
    result = bench.run("--model=fake-model", "-rA", gate=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["FAILED snap-bench::thresholds[[]fake-model-yesno-unscored_rate[]]*"])
