"""The repetitions planner reads a pilot's recordings and prints the decision study per temperature."""

from __future__ import annotations

from pathlib import Path

from snap_bench.analysis.planner import planner_lines, recorded_observations
from snap_bench.instruments import registered
from snap_bench.instruments.base import Selection
from tests.conftest import REPO, SHIPPED

CASSETTES = REPO / "cassettes"
MODEL = "qwen2.5-coder-1.5b"


def test_the_planner_reads_the_shipped_recordings_and_prints_every_temperature() -> None:
    profile = registered()["profile"](SHIPPED)
    conditions = profile.conditions(Selection(items=frozenset({"M02", "M03", "P01"})))
    observations = recorded_observations(profile, MODEL, conditions, CASSETTES)
    assert len(observations) == len(conditions)  # every condition of the shipped design is recorded
    lines = planner_lines(profile, MODEL, conditions, CASSETTES)
    assert lines[0] == f"  planner for {MODEL} (decision study on {len(conditions)} recorded answers):"
    assert [line.split(":")[0].strip() for line in lines[1:]] == ["t0", "t0.5", "t1"]
    assert all("runs for 0.70/0.80/0.90: " in line and "(ceiling " in line for line in lines[1:])


def test_no_recordings_no_plan(tmp_path: Path) -> None:
    profile = registered()["profile"](SHIPPED)
    conditions = profile.conditions(Selection(items=frozenset({"M02"})))
    assert planner_lines(profile, MODEL, conditions, tmp_path) == []
