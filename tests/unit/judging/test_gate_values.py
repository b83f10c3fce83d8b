"""--snap-gate parsed once into a Gate, and the exit status it decides with pytest's own statuses stated as they
are (snap_bench.judging.gate, exit_status)."""

from __future__ import annotations

import pytest

from snap_bench.judging.exit_status import ExitFindings, decide
from snap_bench.judging.gate import GATE_VALUES, GATE_WORDS, Gate


@pytest.mark.parametrize(
    ("value", "gate"),
    [
        ("thresholds", Gate(thresholds=True, baseline=False, drift=False)),
        ("baseline", Gate(thresholds=False, baseline=True, drift=False)),
        ("both", Gate(thresholds=True, baseline=True, drift=False)),
        ("drift", Gate(thresholds=False, baseline=False, drift=True)),
        ("baseline, drift", Gate(thresholds=False, baseline=True, drift=True)),
        ("both,drift", Gate(thresholds=True, baseline=True, drift=True)),
        ("thresholds,drift", Gate(thresholds=True, baseline=False, drift=True)),
        ("thresholds,baseline", Gate(thresholds=True, baseline=True, drift=False)),
        ("baseline,drift,items", Gate(thresholds=False, baseline=True, drift=True, items=True)),
        ("items", Gate(thresholds=False, baseline=False, drift=False, items=True)),
    ],
)
def test_every_documented_value_parses_into_what_it_says(value: str, gate: Gate) -> None:
    parsed = Gate.parse(value)
    assert parsed == gate
    # its own spelling parses back to it, and its words name every kind it follows
    assert Gate.parse(parsed.option_value()) == parsed
    words = parsed.describe()
    assert ("thresholds" in words) == gate.thresholds
    assert ("baseline comparison" in words) == gate.baseline
    assert ("drift" in words) == gate.drift
    assert ("items" in words) == gate.items
    assert gate.needs_baseline == (gate.baseline or gate.drift or gate.items)


@pytest.mark.parametrize("value", ["", ",", "drfit", "baseline,baseline", "all", "item"])
def test_anything_else_is_refused_naming_the_legal_values(value: str) -> None:
    with pytest.raises(ValueError, match="use a comma list of") as error:
        Gate.parse(value)
    assert all(legal in str(error.value) for legal in GATE_WORDS)


def test_every_value_in_the_help_parses() -> None:
    assert all(Gate.parse(value) for value in GATE_VALUES)


def test_drift_fails_the_run_only_where_the_gate_names_it() -> None:
    assert decide(ExitFindings(moved=["m-vs-b-profile-drift[care]"])).code == 1
    assert decide(ExitFindings()).code == 0


def test_a_check_not_computed_never_passes_the_gate() -> None:
    incomplete = decide(ExitFindings(not_judged=["m-profile-icc2_1"]))
    assert incomplete.code == 6
    assert "not judged" in incomplete.reason
    # a failed check decides the gate, and the reason says it is also incomplete
    failed = decide(ExitFindings(not_judged=["m-profile-icc2_1"], failed_thresholds=["m-profile-cv"]))
    assert failed.code == 1
    assert "incomplete" in failed.reason


@pytest.mark.parametrize(("status", "word"), [(2, "interrupted"), (3, "internal"), (4, "usage"), (5, "no test")])
def test_pytest_own_statuses_are_stated_as_they_are(status: int, word: str) -> None:
    # whatever the session found, pytest's own status is the one the last line states
    decision = decide(ExitFindings(pytest_status=status, not_measured={"no recording": 3}))
    assert decision.code == status
    assert word in decision.reason


def test_a_run_whose_unanswered_conditions_all_wait_in_a_batch_says_the_batch_is_pending() -> None:
    """--snap-batch=submit: nothing was meant to be answered yet, so nothing rests on part of the design."""
    pending = decide(ExitFindings(not_measured={"pending in a batch": 600}))
    assert pending.code == 6
    assert pending.reason.startswith("the batch is pending: 600 condition(s)")
    assert "part of the design" not in pending.reason
    mixed = decide(ExitFindings(not_measured={"pending in a batch": 10, "no recording": 2}))
    assert "could not measure" in mixed.reason
