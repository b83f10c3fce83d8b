"""A run that did not cover its design says so everywhere: INCOMPLETE with its coverage, checks not judged."""

from __future__ import annotations

import json

import pytest

from snap_bench.analysis.coverage import ERRORED, NO_REPORT, STOPPED, Coverage, coverage_by_model, incomplete_models
from snap_bench.asking.stops import NOT_ASKED
from snap_bench.observations.observation import Observation
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer

WORKERS = [pytest.param((), id="plain"), pytest.param(("-n", "2"), id="xdist")]
SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6


def _observation(model: str, condition: str, reason: str = "score 4") -> Observation:
    return Observation(model, "snap", condition, condition, "M01", {}, 0.0, 1, [], "4", 4, 4.0, None, reason)


def test_every_condition_without_an_observation_is_counted_with_its_reason() -> None:
    ids = [f"b.py::t[gpt-5.2-M01-r{run}]" for run in range(6)] + ["b.py::t[gpt-5.2-mini-M01-r0]"]
    observations = [_observation("gpt-5.2", "M01-r0"), _observation("gpt-5.2", "M01-r1", NOT_ASKED + "stopped")]
    coverage = coverage_by_model(
        ["gpt-5.2", "gpt-5.2-mini"],
        ids,
        observed=[ids[0], ids[1], ids[6]],
        not_measured={ids[2]: "budget spent"},
        missing_reports=[ids[3]],
        observations=observations,
    )
    assert coverage["gpt-5.2"] == Coverage("gpt-5.2", 6, 1, {"budget spent": 1, NO_REPORT: 1, ERRORED: 2, STOPPED: 1})
    assert not coverage["gpt-5.2"].complete
    # The longest model name owns its ids: gpt-5.2-mini's condition is not gpt-5.2's.
    assert coverage["gpt-5.2-mini"] == Coverage("gpt-5.2-mini", 1, 1, {})
    assert coverage["gpt-5.2-mini"].complete
    document = {name: entry.to_json() for name, entry in coverage.items()}
    assert [entry.model for entry in incomplete_models(document)] == ["gpt-5.2"]
    assert coverage["gpt-5.2"].describe().startswith("1/6 conditions answered (")


@pytest.mark.parametrize("workers", WORKERS)
def test_a_budget_limited_run_is_incomplete_everywhere(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    result = bench.run("--model=fake-model", *SMALL, "--snap-max-requests=2", *workers, gate=True)
    assert result.ret == 6  # could not measure
    assert len(fake_server.script.requests) == 2
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0  # no check was judged on a third of the design
    assert outcomes["skipped"] >= SMALL_SIZE - 2  # the 4 not asked
    result.stdout.fnmatch_lines(["* not judged*"])  # and the checks, never passed
    result.stdout.fnmatch_lines(
        [
            "*fake-model: INCOMPLETE*",
            "fake-model: INCOMPLETE: 2/6 conditions answered (4 budget spent)",
            "exit status 6: could not measure*",
        ]
    )
    session = json.loads((bench.out / "session.json").read_text(encoding="utf-8"))
    expected = {"designed": 6, "answered": 2, "complete": False, "missing": {"budget spent": 4}}
    assert session["coverage"] == {"fake-model": expected}
    # one item, one system prompt, one temperature and one run of the design: a subset (and incomplete)
    subset = session["subsets"]["fake-model"]["profile"]
    assert subset["asked"] == SMALL_SIZE < subset["designed"]
    narrowed = [part.split(" of ")[0] for part in subset["narrowed"]]
    assert narrowed == ["items M01", "system prompt NEU", "temperature t0", "runs 1"]
    analysis = json.loads((bench.out / "analysis.json").read_text(encoding="utf-8"))
    assert analysis["coverage"] == {"fake-model": expected}
    entry = analysis["instruments"]["profile"]["models"]["fake-model"]
    assert entry["verdict"] == "INCOMPLETE"
    assert entry["coverage"] == expected
    assert entry["composite"] is None
    assert {metric["status"] for metric in entry["metrics"].values()} <= {"not judged"}
    html = (bench.out / "report.html").read_text(encoding="utf-8")
    assert "snap-badge-incomplete" in html
    assert "2/6 conditions answered (4 budget spent)" in html


def test_a_complete_run_keeps_its_verdict_and_says_its_coverage(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    result = bench.run("--model=fake-model", *SMALL, gate=True)
    assert "INCOMPLETE" not in result.stdout.str()
    analysis = json.loads((bench.out / "analysis.json").read_text(encoding="utf-8"))
    assert analysis["instruments"]["profile"]["models"]["fake-model"]["verdict"] in ("PASS", "BORDERLINE", "FAIL")
    assert analysis["coverage"]["fake-model"] == {"designed": 6, "answered": 6, "complete": True, "missing": {}}
