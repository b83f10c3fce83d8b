"""The upgrade gate on the shipped recordings, replayed offline as a pull request's job runs it.

A model gated against its own committed baseline file passes (every paired difference is 0); the small
model gated against the larger one fails on what it lost (unscored answers, the perturbation's accuracy
and consistency), each failure giving its reason first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def replay(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "benchmarks", "-p", "no:cacheprovider", "-q", "-rA"]
    command += [f"--snap-out={tmp_path / 'out'}", "--snap-gate=baseline", *args]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900, check=False)


def comparisons(tmp_path: Path) -> dict[str, dict[str, object]]:
    document = json.loads((tmp_path / "out" / "analysis.json").read_text(encoding="utf-8"))
    return {f"{c['instrument']}.{c['metric']}": c for c in document["baseline"]}


def test_a_shipped_model_against_its_own_baseline_file_passes(tmp_path: Path) -> None:
    result = replay(tmp_path, "--model=qwen2.5-coder-1.5b", "--baseline=baselines/qwen2.5-coder-1.5b.json")
    assert result.returncode == pytest.ExitCode.OK, result.stdout[-3000:]
    found = comparisons(tmp_path)
    assert {name.split(".")[0] for name in found} == {"profile", "compass", "perturbation", "bfi25"}
    assert all(c["outcome"] == "non-inferior" and c["difference"] == 0 for c in found.values())
    assert "not compared:" not in result.stdout.split("snap-bench result")[-1]


def test_the_small_model_fails_against_the_large_one_with_the_reasons(tmp_path: Path) -> None:
    result = replay(tmp_path, "--model=smollm2-135m", "--baseline=qwen2.5-coder-1.5b")
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, result.stdout[-3000:]
    found = comparisons(tmp_path)
    for name in ("profile.unscored_rate", "perturbation.custom_accuracy", "perturbation.consistency"):
        assert found[name]["outcome"] == "REGRESSION", found[name]["message"]
        assert str(found[name]["message"]).startswith("REGRESSION: worse than the baseline by more than the margin")
    lines = result.stdout.splitlines()
    for metric in ("profile-unscored_rate", "perturbation-custom_accuracy", "perturbation-consistency"):
        assert any(
            line.startswith(f"FAILED snap-bench::thresholds[smollm2-135m-vs-qwen2.5-coder-1.5b-{metric}]")
            for line in lines
        ), metric
    # what could not be compared says so, and is never a pass
    for comparison in found.values():
        if comparison["outcome"] == "not compared":
            assert not comparison["regressed"]
            assert str(comparison["message"]).startswith("not compared: ")
