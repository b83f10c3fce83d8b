"""A run that did not cover its design says so everywhere: INCOMPLETE with its coverage, checks not judged. The
sessions run in-process; how pytest shows the conditions not asked (skipped) and the HTML report's badge, under
xdist's shared budget, is tests/contract/test_coverage.py's."""

from __future__ import annotations

import json

import pytest

from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer

SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6
NOT_MEASURED = 6


def test_a_budget_limited_run_is_incomplete_everywhere(project: BenchProject, fake_server: FakeOpenAIServer) -> None:
    result = project.session("--model=fake-model", *SMALL, "--snap-max-requests=2", gate=True)
    assert result.exit_status == NOT_MEASURED  # could not measure
    assert len(fake_server.script.requests) == 2
    assert not any(check.fails_run for check in result.checks)  # no check was judged on a third of the design
    assert result.planned == SMALL_SIZE
    assert len(result.observations) == 2  # the 4 others not asked
    assert {check.category for check in result.checks} == {"not judged"}  # and the checks, never passed
    pytest.LineMatcher(list(result.summary)).fnmatch_lines(
        [
            "fake-model: INCOMPLETE: 2/6 conditions answered (4 budget spent)",
            "exit status 6: could not measure*",
        ]
    )
    session = json.loads((project.out / "session.json").read_text(encoding="utf-8"))
    expected = {"designed": 6, "answered": 2, "complete": False, "missing": {"budget spent": 4}}
    assert session["coverage"] == {"fake-model": expected}
    # one item, one system prompt, one temperature and one run of the design: a subset (and incomplete)
    subset = session["subsets"]["fake-model"]["profile"]
    assert subset["asked"] == SMALL_SIZE < subset["designed"]
    narrowed = [part.split(" of ")[0] for part in subset["narrowed"]]
    assert narrowed == ["items M01", "system prompt NEU", "temperature t0", "runs 1"]
    analysis = json.loads((project.out / "analysis.json").read_text(encoding="utf-8"))
    assert analysis["coverage"] == {"fake-model": expected}
    entry = analysis["instruments"]["profile"]["models"]["fake-model"]
    assert entry["verdict"] == "INCOMPLETE"
    assert entry["coverage"] == expected
    assert entry["composite"] is None
    assert {metric["status"] for metric in entry["metrics"].values()} <= {"not judged"}


def test_a_complete_run_keeps_its_verdict_and_says_its_coverage(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    result = project.session("--model=fake-model", *SMALL, gate=True)
    assert "INCOMPLETE" not in "\n".join(result.summary)
    analysis = json.loads((project.out / "analysis.json").read_text(encoding="utf-8"))
    assert analysis["instruments"]["profile"]["models"]["fake-model"]["verdict"] in ("PASS", "BORDERLINE", "FAIL")
    assert analysis["coverage"]["fake-model"] == {"designed": 6, "answered": 6, "complete": True, "missing": {}}
