"""The upgrade gate on the shipped recordings, replayed offline as a pull request's job runs it, and where a CI
user looks: GitHub Actions' job summary and annotations, reports/summary.md, the conditions that changed
(changes.csv) and a terminal block that fits on a screen.

A model gated against its own committed baseline file passes (every paired difference is 0); the small model
gated against the larger one's committed baseline file fails on what it lost (unscored answers, the
perturbation's accuracy and consistency), each failure giving its reason first. Each session runs in this process
(snap_bench.session.run) on the repository's own benchmarks, config and recordings, writing into tmp_path only;
`make gate` in .ci/run runs the same gate under pytest.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from snap_bench.report.ci_outputs import ci_annotations
from snap_bench.session.run import SessionResult, run_session
from tests.conftest import REPO

# Every shipped recording replayed: minutes, so make test runs these, not test-lowest.
pytestmark = pytest.mark.slow

# About 37 lines of 120 characters: the counts, 26 regressions and undecided checks (the questionnaire's run-to-run
# SD among them), the 5 constructs whose drift the interval over each cell's runs shows, and the changes file's
# real path (a temporary folder here).
TERMINAL_BLOCK_LIMIT = 5000
FAILED = pytest.ExitCode.TESTS_FAILED


def replay(out: Path, *args: str) -> SessionResult:
    """`pytest benchmarks --snap-gate=baseline ...` in the repository, its outputs in ``out``."""
    return run_session(["benchmarks", f"--snap-out={out}", "--snap-gate=baseline", *args], root=REPO)


def comparisons(out: Path) -> dict[str, dict[str, object]]:
    document = json.loads((out / "analysis.json").read_text(encoding="utf-8"))
    return {f"{c['instrument']}.{c['metric']}": c for c in document["baseline"]}


def test_a_shipped_model_against_its_own_baseline_file_passes(tmp_path: Path) -> None:
    baseline = REPO / "baselines" / "qwen2.5-coder-1.5b.json"
    result = replay(tmp_path, "--model=qwen2.5-coder-1.5b", f"--baseline={baseline}")
    assert result.exit_status == pytest.ExitCode.OK, "\n".join(result.summary[-40:])
    found = comparisons(tmp_path)
    assert {name.split(".")[0] for name in found} == {"profile", "compass", "perturbation", "bfi25"}
    assert all(c["outcome"] == "non-inferior" and c["difference"] == 0 for c in found.values())
    result_block = "\n".join(result.summary).split("snap-bench result")[-1]
    assert "not compared:" not in result_block
    assert not any(check.fails_run for check in result.checks)


def test_the_small_model_fails_against_the_large_one_with_the_reasons_where_ci_looks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SmolLM2-135M gated against Qwen's committed baseline file under GitHub Actions (one session for both: the
    shipped replay is the suite's slowest)."""
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("earlier step\n", encoding="utf-8")  # appended to, never replaced
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    out = tmp_path / "out"
    result = replay(out, "--model=smollm2-135m", f"--baseline={REPO / 'baselines' / 'qwen2.5-coder-1.5b.json'}")
    assert result.exit_status == FAILED, "\n".join(result.summary[-40:])
    found = comparisons(out)
    for name in ("profile.unscored_rate", "perturbation.custom_accuracy", "perturbation.consistency"):
        assert found[name]["outcome"] == "REGRESSION", found[name]["message"]
        assert str(found[name]["message"]).startswith("REGRESSION: worse than the baseline by more than the margin")
    # each regression is a failed check of its own (pytest: FAILED snap-bench::thresholds[<name>])
    for metric in ("profile-unscored_rate", "perturbation-custom_accuracy", "perturbation-consistency"):
        check = result.check(f"smollm2-135m-vs-qwen2.5-coder-1.5b@baseline-{metric}")
        assert check.fails_run, check.message
    # what could not be compared says so, and is never a pass
    for comparison in found.values():
        if comparison["outcome"] == "not compared":
            assert not comparison["regressed"]
            assert str(comparison["message"]).startswith("not compared: ")

    # where a CI user looks: the job's step summary, its annotations, changes.csv, the terminal's gate block
    summary = step_summary.read_text(encoding="utf-8")
    assert summary.startswith("earlier step\n## snap-bench")
    assert summary.removeprefix("earlier step\n") == (out / "summary.md").read_text(encoding="utf-8")
    regressions = summary.split("### Regressions", 1)[1].split("###", 1)[0]
    assert "| model | instrument | metric | new - baseline | 95% interval | margin |" in regressions
    for metric in (
        "| profile | unscored_rate |",
        "| perturbation | custom_accuracy |",
        "| perturbation | consistency |",
    ):
        assert metric in regressions

    # the workflow commands the plugin prints at the end of the log under GitHub Actions
    errors = [line for line in ci_annotations(result.judgement) if line.startswith("::error title=")]
    assert any("unscored_rate" in line for line in errors)
    assert all("::" in line.split("title=", 1)[1] for line in errors)  # a title, then the message

    with (out / "changes.csv").open(encoding="utf-8", newline="") as handle:
        changes = list(csv.DictReader(handle))
    assert len(changes) >= 100
    assert all(row["baseline_answer"] != row["new_answer"] for row in changes)
    assert {row["model"] for row in changes} == {"smollm2-135m"}

    shown = "\n".join(result.summary)
    block = shown.split("baseline comparison (", 1)[1].split("\nexit status", 1)[0]
    assert len(block) < TERMINAL_BLOCK_LIMIT, block
    assert "non-inferior smollm2-135m" not in block  # listed only with -v
    # the items that moved beyond the run noise, each with its shift and q
    listed = block.split("items changed beyond the run noise: ", 1)[1].splitlines()[0]
    assert "(q 0.0" in listed
