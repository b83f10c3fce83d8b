"""An interval that straddles its margin is undecided: never a pass, not a shown change, an exit status of its own,
and it says how many runs would decide it (snap_bench.judging.comparison, drift, deciding, exit_status)."""

from __future__ import annotations

import math

import pytest

from snap_bench.judging.comparison import Question, _decide
from snap_bench.judging.deciding import MOST_RUNS, runs_to_decide
from snap_bench.judging.exit_status import BenchExit, ExitFindings, decide
from snap_bench.judging.outcomes import NON_INFERIOR, REGRESSION, UNDECIDED
from snap_bench.judging.pairing_methods import FIXED_DESIGN, Result

QUESTION = Question("new", "old", "quiz", "dependability[t1]", 0.2, "higher")


def result(estimate: float, low: float, high: float, noise: str = "runs") -> Result:
    method = FIXED_DESIGN if noise == "runs" else "paired jackknife over items"
    return Result(0.7, 0.7 - estimate, (estimate, low, high), method, 12, 288, 288, "answers")


@pytest.mark.parametrize(
    ("interval", "outcome", "regressed"),
    [
        ((0.0, -0.1, 0.1), NON_INFERIOR, False),  # wholly above -margin: non-inferiority shown
        ((-0.07, -0.21, 0.07), UNDECIDED, False),  # straddles -margin: the dependability[t1]
        ((-0.3, -0.4, -0.25), REGRESSION, True),  # wholly past it: a loss shown
    ],
)
def test_the_three_decisions_of_a_comparison(
    interval: tuple[float, float, float], outcome: str, regressed: bool
) -> None:
    comparison = _decide(QUESTION, result(*interval), 0.5, paired=True, runs=3)
    assert comparison.outcome == outcome
    assert comparison.regressed == regressed
    assert comparison.undecided == (outcome == UNDECIDED)
    assert comparison.message.startswith(f"{outcome}: ")


def test_an_undecided_comparison_names_the_runs_that_would_decide_it() -> None:
    # half-width 0.14 at 3 runs; room between the difference and the margin 0.2 - 0.07 = 0.13:
    # 3 * (0.14 / 0.13)^2 = 3.48, so 4 runs
    comparison = _decide(QUESTION, result(-0.07, -0.21, 0.07), 0.5, paired=True, runs=3)
    assert comparison.runs_to_decide == 4
    assert "about 4 runs would decide it" in comparison.message
    assert "--snap-runs=4" in comparison.message
    # an interval that resamples items is narrowed by items, not runs: 12 * (0.14 / 0.13)^2 = 13.9
    by_items = _decide(QUESTION, result(-0.07, -0.21, 0.07, noise="items"), 0.5, paired=True, runs=3)
    assert "about 14 items would decide it" in by_items.message
    assert "--snap-runs" not in by_items.message
    # and the exit line, which names --snap-runs, never counts those items as runs
    assert by_items.runs_to_decide is None
    assert (comparison.decided_by, by_items.decided_by) == ("runs", "items")


def test_a_difference_past_the_margin_cannot_be_decided_into_a_pass() -> None:
    deciding = runs_to_decide(-0.25, -0.5, 0.0, 0.2, runs=3)
    assert deciding.runs is None
    assert "would show the change, not a pass" in deciding.advice


@pytest.mark.parametrize(("runs", "half", "room"), [(3, 0.14, 0.13), (2, 0.3, 0.1), (5, 0.05, 0.04)])
def test_the_runs_named_narrow_the_interval_inside_the_room(runs: int, half: float, room: float) -> None:
    """At the runs named, the half-width scaled by sqrt(runs / named) fits in the room; one run fewer it
    does not (unless the named number is the next run)."""
    estimate = room - 0.2  # distance room from -margin
    deciding = runs_to_decide(estimate, estimate - half, estimate + half, 0.2, runs=runs)
    assert deciding.runs is not None
    named = deciding.runs
    if named <= MOST_RUNS:
        assert half * math.sqrt(runs / named) <= room + 1e-12
    if named > runs + 1:
        assert half * math.sqrt(runs / (named - 1)) > room


def test_equivalence_counts_its_room_from_the_nearer_edge() -> None:
    # drift: the interval must lie within +-0.5; difference 0.2, half-width 0.45 at 3 runs: room 0.3
    deciding = runs_to_decide(0.2, -0.25, 0.65, 0.5, runs=3, equivalence=True)
    assert deciding.runs == math.ceil(3 * (0.45 / 0.3) ** 2)


def test_undecided_has_its_own_exit_status_below_a_failure_and_an_incomplete_gate() -> None:
    undecided = decide(ExitFindings(undecided=["new-vs-old-quiz-cv_mean"], runs_to_decide=5, gated_checks=3))
    assert undecided.code == BenchExit.UNDECIDED == 7
    assert "undecided" in undecided.reason
    assert "--snap-runs=5" in undecided.reason
    # a shown change decides the gate whatever is undecided
    assert decide(ExitFindings(undecided=["a"], failed_comparisons=["b"])).code == 1
    # a check not computed leaves the gate incomplete, which says more than undecided
    assert decide(ExitFindings(undecided=["a"], not_compared=["b"])).code == 6
    # nothing undecided, nothing failed: passed
    assert decide(ExitFindings(gated_checks=3)).code == 0


def test_a_changed_item_fails_the_gate_naming_it() -> None:
    decision = decide(ExitFindings(changed_items=["new-vs-old-quiz-item[Q07]"], gated_checks=3))
    assert decision.code == 1
    assert "item[Q07]" in decision.reason
    # an item not tested is never a pass
    assert decide(ExitFindings(untested_items=["new-vs-old-quiz-item[Q08]"], gated_checks=3)).code == 6
