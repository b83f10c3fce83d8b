"""The perturbation instrument through the plugin: pytester against the fake server, plain and with -n 2."""

from __future__ import annotations

import csv
import json
from typing import Any

import pytest

from snap_bench.design.config import PACKAGED
from snap_bench.observations.export import read_jsonl
from tests.conftest import FAKE_KEY, WORKERS, BenchProject, set_limit
from tests.fake_openai_server import FakeOpenAIServer

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
def bench(pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    return BenchProject(pytester, fake_server.base_url, instruments=("perturbation",))


@pytest.mark.parametrize("workers", WORKERS)
def test_records_replays_and_judges_the_perturbation_thresholds(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = formal_right_casual_neutral
    result = bench.run("--model=fake-model", *SLICE, *workers, "-rA", gate=True)
    # 32 answers pass; of the 5 threshold checks consistency (0.5) and the largest flip rate (1.0) fail
    result.assert_outcomes(passed=SLICE_SIZE + 3, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert len(fake_server.script.requests) == SLICE_SIZE
    result.stdout.fnmatch_lines(
        [
            "FAILED snap-bench::thresholds[[]fake-model-perturbation-consistency[]]*",
        ]
    )
    result.stdout.fnmatch_lines(["PASSED snap-bench::thresholds[[]fake-model-perturbation-unscored_rate[]]"])
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
    report = (bench.out / "report.html").read_text(encoding="utf-8")
    assert "Prompt perturbation (sentiment robustness)" in report
    assert "snap-perturbation-heatmap-1" in report

    # offline: no key and no server; every answer is replayed and the figures are the same
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    fake_server.__exit__(None, None, None)
    replayed = bench.run("--model=fake-model", *SLICE, *workers, gate=True)
    replayed.assert_outcomes(passed=SLICE_SIZE + 3, failed=2)
    assert all(o.replayed for o in read_jsonl(bench.out / "observations.jsonl"))
    assert (
        bench.analysis()["instruments"]["perturbation"]["models"]["fake-model"]["metrics"]["consistency"]["value"]
        == 0.5
    )


@pytest.mark.parametrize("workers", WORKERS)
def test_an_answer_without_a_label_is_unscored_and_recorded(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = lambda request: "Positive or negative, who can say."
    result = bench.run("--model=fake-model", "--snap-items=S001", "--snap-show-unscored", *workers)
    result.assert_outcomes(passed=0, failed=0)
    assert result.parseoutcomes()["unscored"] == 16
    result.stdout.fnmatch_lines(["*code -2 (ambiguous: several labels [[]'negative', 'positive'[]])*"])
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert len(observations) == 16
    assert {o.code for o in observations} == {-2}
    assert {o.construct for o in observations} == {"polarity:positive"}


@pytest.mark.parametrize("workers", WORKERS)
def test_phase2_asks_the_best_variant_with_examples_and_writes_the_audit(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    fake_server.script.answer = formal_right_casual_neutral
    set_limit(bench.root / "benchmarks" / "perturbation.yaml", 2)
    # the whole baseline must be recorded before phase 2 can choose the best variant
    result = bench.run("--model=fake-model", "--snap-perturbation-phase2", *workers)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*phase 2 needs fake-model's whole baseline*record the baseline first*"])
    assert "Traceback" not in result.stderr.str()

    bench.run("--model=fake-model").assert_outcomes(passed=SLICE_SIZE)
    before = len(fake_server.script.requests)
    result = bench.run("--model=fake-model", "--snap-perturbation-phase2", *workers)
    result.assert_outcomes(passed=SLICE_SIZE + 4)
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
    result = bench.run("--model=fake-model", "--snap-items=S999")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--snap-items: unknown 'S999'; known: *S001*"])
