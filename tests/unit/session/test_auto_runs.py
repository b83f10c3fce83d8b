"""--snap-runs=auto: parsed once, refused without a baseline naming the fix, and turned into the planner's runs or
a usage error naming why no number of runs decides the gate (snap_bench.judging.run_planner); the dry run's words
for each case (snap_bench.report.gate_plan)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from snap_bench.judging.gate import Gate
from snap_bench.judging.run_planner import CheckPlan, GatePlan, RunPlan, auto_runs
from snap_bench.report.gate_plan import gate_plan_lines
from snap_bench.session.option_values import AUTO_RUNS, runs_option
from snap_bench.session.settings import UsageProblem, _runs

GATE = Gate.parse("baseline,drift,items")


@dataclass
class Options:
    """The two options _runs reads, as pytest.Config.getoption gives them."""

    values: dict[str, Any] = field(default_factory=dict)

    def getoption(self, name: str) -> Any:
        return self.values.get(name)


def runs_of(**values: Any) -> int | None:
    return _runs(cast(pytest.Config, Options(values)))


def test_snap_runs_is_a_number_or_auto() -> None:
    assert runs_option("4") == 4
    assert runs_option("auto") == AUTO_RUNS
    assert runs_option(" Auto ") == AUTO_RUNS
    for value in ("0", "two", "-1"):
        with pytest.raises(argparse.ArgumentTypeError, match="nor 'auto'"):
            runs_option(value)


def test_auto_needs_a_baseline_and_says_how_to_give_one() -> None:
    with pytest.raises(UsageProblem, match=r"no --baseline was given\. Fix: add --baseline=MODEL"):
        runs_of(snap_runs=AUTO_RUNS)
    assert runs_of(snap_runs=AUTO_RUNS, baseline="baselines/old.json") is None  # planned at session start
    assert runs_of(snap_runs=5) == 5
    assert runs_of() is None


def plan(needed: int | None, planned: int = 3, rates: dict[int, float] | None = None) -> RunPlan:
    check = CheckPlan("drift", "quiz", "drift[c1]", passed=rates or {3: 0.4}, needed=needed)
    return RunPlan(planned, 3, "simulated", 30, rates or {3: 0.4}, needed, (check,))


def test_auto_asks_the_runs_the_plan_needs() -> None:
    assert auto_runs(GatePlan("old", plan(6, rates={3: 0.4, 6: 1.0}))) == (6, "")


def test_auto_names_an_undecidable_design_before_anything_is_asked() -> None:
    runs, problem = auto_runs(GatePlan("old", plan(None, rates={3: 0.0, 30: 0.6})))
    assert runs is None
    assert "no number of runs up to 30 decides it at this design" in problem
    assert "drift drift[c1]" in problem
    assert "Fix:" in problem


def test_auto_against_a_file_that_holds_too_few_runs_says_to_record_it_again() -> None:
    runs, problem = auto_runs(GatePlan("old@baseline", plan(6, rates={3: 0.4, 6: 1.0}), file_runs=3))
    assert runs is None
    assert "record the baseline at 6 runs (--snap-runs=6 --snap-save-baseline=" in problem


def test_auto_with_a_saved_analysis_has_nothing_to_plan_from() -> None:
    runs, problem = auto_runs(GatePlan("old", None, "a saved analysis.json holds no per-condition answers"))
    assert runs is None
    assert "no per-condition answers" in problem


def test_the_dry_run_says_whether_the_design_decides_and_names_the_runs() -> None:
    short = gate_plan_lines(GatePlan("old", plan(6, rates={3: 0.4, 6: 1.0})), GATE, ["new"])
    assert "NOT decidable at 3 runs per cell" in short[2]
    assert "6 runs decide it (100% of pairs): --snap-runs=6, or --snap-runs=auto" in short[2]
    assert "drift quiz drift[c1]: passes 40% at 3 runs; decided at 6 runs" in short[3]
    decided = gate_plan_lines(GatePlan("old", plan(3, rates={3: 1.0})), GATE, ["new"])
    assert "decidable: the design as planned (3 runs per cell) decides the gate" in decided[2]
    never = gate_plan_lines(GatePlan("old", plan(None, rates={3: 0.0, 30: 0.5})), GATE, ["new"])
    assert "no number of runs up to 30 decides it" in never[2]
