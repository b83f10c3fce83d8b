"""The gate where a CI user looks: GitHub Actions' job summary and annotations, reports/summary.md, the
conditions that changed (reports/changes.csv) and a terminal block that fits on a screen, on the shipped
recordings: the small model gated against the larger one's committed baseline file."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

# About 37 lines of 120 characters: the counts, 26 regressions and undecided checks (the questionnaire's run-to-run
# SD among them), the 5 constructs whose drift the interval over each cell's runs shows, and the changes file's
# real path (a temporary folder here).
TERMINAL_BLOCK_LIMIT = 5000


def test_the_gate_under_github_actions_writes_its_summary_annotations_and_changes(tmp_path: Path) -> None:
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("earlier step\n", encoding="utf-8")  # appended to, never replaced
    out = tmp_path / "out"
    command = [sys.executable, "-m", "pytest", "benchmarks", "-p", "no:cacheprovider", "-q", f"--snap-out={out}"]
    command += ["--model=smollm2-135m", "--baseline=baselines/qwen2.5-coder-1.5b.json", "--snap-gate=baseline"]
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step_summary)}
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, result.stdout[-3000:]

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

    errors = [line for line in result.stdout.splitlines() if line.startswith("::error title=")]
    assert any("unscored_rate" in line for line in errors)
    assert all("::" in line.split("title=", 1)[1] for line in errors)  # a title, then the message

    with (out / "changes.csv").open(encoding="utf-8", newline="") as handle:
        changes = list(csv.DictReader(handle))
    assert len(changes) >= 100
    assert all(row["baseline_answer"] != row["new_answer"] for row in changes)
    assert {row["model"] for row in changes} == {"smollm2-135m"}

    block = result.stdout.split("baseline comparison (", 1)[1].split("\nexit status", 1)[0]
    assert len(block) < TERMINAL_BLOCK_LIMIT, block
    assert "non-inferior smollm2-135m" not in block  # listed only with -v
    # the items that moved beyond the run noise, each with its shift and q
    listed = block.split("items changed beyond the run noise: ", 1)[1].splitlines()[0]
    assert "(q 0.0" in listed
