"""Drift of a construct's position against the baseline, the conditions that changed, and the gate mode that
names drift (snap_bench.judging.drift, changes)."""

from __future__ import annotations

import pytest

from bench.drift_items import observation
from snap_bench.judging.changes import changed_conditions
from snap_bench.judging.checks import CheckRecord
from snap_bench.judging.drift import DRIFT, NO_DRIFT, UNDECIDED, position_drift
from snap_bench.judging.judgement import Judgement
from snap_bench.observations.observation import Observation
from snap_bench.report.ci_summary import workflow_commands


def answer(model: str, item: str, condition: str, score: int, construct: str = "care") -> Observation:
    return Observation(
        model=model,
        instrument="profile",
        condition_id=f"{item}-{condition}",
        cell=f"{item}-{condition}",
        item=item,
        factors={"system_prompt": condition},
        temperature=0.0,
        run=1,
        messages=[],
        raw_answer=str(score),
        score=score,
        keyed_score=float(score),
        code=None,
        reason="",
        construct=construct,
    )


def design(model: str, shift: int, noise: tuple[int, ...] = (0, 0, 0, 0)) -> list[Observation]:
    return [
        answer(model, item, prompt, 3 + shift + noise[(i + j) % len(noise)])
        for i, item in enumerate(("M01", "M02", "M03", "M04"))
        for j, prompt in enumerate(("NEU", "DIR", "PER"))
    ]


def test_an_unchanged_model_shows_no_drift_and_no_change() -> None:
    rows = [*design("old", 0, (0, 1, -1, 0)), *design("new", 0, (0, 1, -1, 0))]
    (drift,) = position_drift(rows, "old", {"profile": 0.5})
    assert (drift.outcome, drift.difference, drift.ci_low, drift.ci_high) == (NO_DRIFT, 0.0, 0.0, 0.0)
    (summary,) = changed_conditions(rows, "old")
    assert (summary.shared, summary.changes) == (12, ())


def test_a_model_whose_position_moved_by_a_point_drifts() -> None:
    """Consistent answers that moved: no regression of consistency would catch it."""
    rows = [*design("old", 0, (0, 1, -1, 0)), *design("new", 1, (0, 1, -1, 0))]
    (drift,) = position_drift(rows, "old", {"profile": 0.5})
    assert drift.outcome == DRIFT
    assert drift.difference == pytest.approx(1.0)
    (summary,) = changed_conditions(rows, "old")
    assert len(summary.changes) == 12
    assert summary.by_item()[0][2] == 3
    assert {level for _, level, _ in summary.by_level()} == {"NEU", "DIR", "PER"}


def test_items_that_moved_apart_leave_the_constructs_position_and_no_margin_is_never_no_drift() -> None:
    """The items and the design are fixed, so two items up a point and two down a point is no move of the
    construct's mean (the item-level test names such items: tests/unit/judging/test_item_changes.py)."""
    old = design("old", 0)
    new = [answer("new", o.item, o.factors["system_prompt"], 3 + (1 if o.item in ("M01", "M02") else -1)) for o in old]
    (drift,) = position_drift([*old, *new], "old", {"profile": 0.5})
    assert (drift.outcome, drift.difference) == (NO_DRIFT, 0.0)
    (without_margin,) = position_drift([*old, *design("new", 0)], "old", {})
    assert without_margin.outcome == UNDECIDED  # no margin in thresholds.yaml: never "no drift"
    assert without_margin.undecided
    assert not without_margin.moved
    assert "add drift_margin to thresholds.yaml" in without_margin.message


def test_answers_at_temperature_1_asked_once_are_not_given_temperature_0s_zero_noise() -> None:
    """Temperature 0 answered alike twice per cell; at temperature 1 each cell scored once, moving 4 points
    up or down. Pooling the noise across temperatures read 0 (the interval [0, 0]: no drift); t1's own
    spread leaves it undecided."""
    rows = []
    for i, item in enumerate(("Q04", "Q05", "Q06")):
        for j, prompt in enumerate(("NEU", "DIR", "PER", "ABS")):
            for model in ("old", "new"):
                rows += [observation(model, item, prompt, 0.0, run, 3) for run in (1, 2)]
            up = (i + j) % 2 == 0
            rows += [observation("old", item, prompt, 1.0, 1, 1 if up else 5)]
            rows += [observation("new", item, prompt, 1.0, 1, 5 if up else 1)]
    (drift,) = position_drift(rows, "old", {"quiz": 0.5}, {"quiz": (1.0, 5.0)})
    assert drift.difference == 0.0
    assert drift.outcome == UNDECIDED
    assert drift.ci_low is not None
    assert drift.ci_high is not None
    assert drift.ci_low < -0.5 < 0.5 < drift.ci_high


def test_workflow_commands_escape_what_would_end_them() -> None:
    record = CheckRecord(
        name="n",
        kind="threshold",
        model="m",
        instrument="profile",
        metric="x",
        value=None,
        ci_low=None,
        ci_high=None,
        n=0,
        n_designed=0,
        threshold="",
        margin=None,
        decision="fail",
        message="50% off\nnext: line",
    )
    (command,) = workflow_commands(Judgement(checks=[record]))
    assert command == "::error title=m profile x::50%25 off%0Anext: line"
