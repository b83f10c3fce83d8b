"""The perturbation instrument's session, in-process against the fake server: recorded, replayed offline, judged
against its thresholds, unscored answers kept, phase 2 and its audit."""

from __future__ import annotations

import csv
import fnmatch
import json
import re
from pathlib import Path
from typing import Any

import pytest

from snap_bench.design.config import PACKAGED
from snap_bench.observations.export import read_jsonl
from snap_bench.session.run import SessionResult
from snap_bench.session.settings import UsageProblem
from tests.conftest import FAKE_KEY, BenchProject, set_limit
from tests.fake_openai_server import FakeOpenAIServer
from tests.session.recorded import report_summary

# Two samples (one fresh, one rotten) through the 16 variants.
SLICE = ("--snap-items=S001,S002", "--snap-resamples=100")
SLICE_SIZE = 32


def gold_by_text() -> dict[str, str]:
    with (PACKAGED / "data" / "rotten_tomatoes_test.csv").open(encoding="utf-8") as handle:
        return {row["text"]: row["label"] for row in csv.DictReader(handle)}


GOLD = gold_by_text()


def formal_right_casual_neutral(request: dict[str, Any]) -> str:
    """The right polarity from formal prompts, "Neutral" from casual ones: the wording matters."""
    prompt = request["messages"][-1]["content"]
    if "Hey" in prompt:
        return "Neutral"
    label = next(label for text, label in GOLD.items() if text in prompt)
    return "The sentiment is positive." if label == "fresh" else "Sentiment: Very negative"


@pytest.fixture
def bench(tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    root = tmp_path / "project"
    root.mkdir()
    return BenchProject(root, fake_server.base_url, instruments=("perturbation",))


def passed_and_failed(result: SessionResult) -> tuple[list[str], list[str]]:
    """The session's checks that passed and those that failed the run, by name."""
    passed = [check.name for check in result.checks if check.passed and check.category is None]
    failed = [check.name for check in result.checks if check.fails_run]
    return passed, failed


def test_records_replays_and_judges_the_perturbation_thresholds(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_server.script.answer = formal_right_casual_neutral
    result = bench.session("--model=fake-model", *SLICE, gate=True)
    # 32 answers; of the 5 threshold checks consistency (0.5) and the largest flip rate (1.0) fail
    assert len(result.observations) == SLICE_SIZE
    passed, failed = passed_and_failed(result)
    assert (len(passed), len(failed)) == (3, 2), (passed, failed)
    assert "fake-model-perturbation-consistency" in failed
    assert "fake-model-perturbation-unscored_rate" in passed
    assert result.exit_status == pytest.ExitCode.TESTS_FAILED
    assert len(fake_server.script.requests) == SLICE_SIZE
    cassettes = sorted((bench.cassettes / "fake-model" / "perturbation").glob("*.json"))
    assert len(cassettes) == SLICE_SIZE
    assert cassettes[0].name == "S001-casual-imp-task-syn1-r1.json"

    entry = bench.analysis()["instruments"]["perturbation"]["models"]["fake-model"]
    assert entry["metrics"]["consistency"]["value"] == 0.5
    assert entry["metrics"]["consistency"]["status"] == "below"
    assert entry["metrics"]["exact_accuracy"]["undefined"].startswith("not applicable")
    # formal answers are right (positive for fresh, very negative for rotten); casual neutral costs 4 each
    assert entry["metrics"]["custom_accuracy"]["value"] == pytest.approx(1 - 4 / 2 / 25)
    assert entry["details"]["factors"]["formality"]["flip_rate"] == 1.0
    assert entry["details"]["best_variant"] == "formal-imp-task-syn1"
    report = report_summary(bench.root, result, "--model=fake-model", *SLICE)
    assert "Prompt perturbation (sentiment robustness)" in report
    assert "snap-perturbation-heatmap-1" in report

    # offline: no key and no server; every answer is replayed and the figures are the same
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    fake_server.__exit__(None, None, None)
    replayed = bench.session("--model=fake-model", *SLICE, gate=True)
    assert len(replayed.observations) == SLICE_SIZE
    assert passed_and_failed(replayed) == (passed, failed)
    assert all(o.replayed for o in read_jsonl(bench.out / "observations.jsonl"))
    assert (
        bench.analysis()["instruments"]["perturbation"]["models"]["fake-model"]["metrics"]["consistency"]["value"]
        == 0.5
    )


def test_an_answer_without_a_label_is_unscored_and_recorded(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    fake_server.script.answer = lambda request: "Positive or negative, who can say."
    result = bench.session("--model=fake-model", "--snap-items=S001", "--snap-show-unscored")
    assert result.checks == ()
    assert len(result.observations) == 16
    assert all(observation.score is None for observation in result.observations)
    assert fnmatch.filter(result.summary, "*code -2 (ambiguous: several labels [[]'negative', 'positive'[]])*")
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert len(observations) == 16
    assert {o.code for o in observations} == {-2}
    assert {o.construct for o in observations} == {"polarity:positive"}


def test_phase2_asks_the_best_variant_with_examples_and_writes_the_audit(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.answer = formal_right_casual_neutral
    set_limit(bench.root / "benchmarks" / "perturbation.yaml", 2)
    # the whole baseline must be recorded before phase 2 can choose the best variant
    with pytest.raises(UsageProblem, match=r"phase 2 needs fake-model's whole baseline.*record the baseline first"):
        bench.session("--model=fake-model", "--snap-perturbation-phase2")

    baseline = bench.session("--model=fake-model")
    assert len(baseline.observations) == SLICE_SIZE
    before = len(fake_server.script.requests)
    result = bench.session("--model=fake-model", "--snap-perturbation-phase2")
    assert len(result.observations) == SLICE_SIZE + 4
    asked = fake_server.script.requests[before:]
    assert len(asked) == 4
    assert all(request["messages"][-1]["content"].count("\nAnswer: ") == 14 for request in asked)
    observations = read_jsonl(bench.out / "observations.jsonl")
    few_shot = sorted(o.condition_id for o in observations if "examples" in o.factors)
    assert few_shot == [
        "S001-formal-imp-task-syn1-pre-r1",
        "S001-formal-imp-task-syn1-suf-r1",
        "S002-formal-imp-task-syn1-pre-r1",
        "S002-formal-imp-task-syn1-suf-r1",
    ]
    audit = json.loads((bench.out / "perturbation-audit.json").read_text(encoding="utf-8"))
    assert audit["best_variants"]["fake-model"]["variant"] == "formal-imp-task-syn1"
    assert len(audit["examples"]) == 14
    assert not {e["text"] for e in audit["examples"]} & set(GOLD)


def test_unknown_sample_is_a_usage_error(bench: BenchProject) -> None:
    with pytest.raises(UsageProblem, match=re.escape("--snap-items: unknown 'S999'; known: ") + ".*S001"):
        bench.session("--model=fake-model", "--snap-items=S999")
