"""What the exit status of a benchmark session says, and why: it follows the judgement, not the answers.

pytest's own codes stand for what they always mean (2 interrupted, 3 internal error, 4 usage error,
5 nothing collected). A session that ran decides between three:

- 0: every judged check that the exit status follows (``--snap-gate``) passed;
- 1: a threshold check or a baseline comparison failed;
- 6: the run could not measure what it was asked to (a condition without an observation: no
  recording, budget spent, a crash; or a model none of whose answers arrived), or the baseline gate,
  where the exit status follows it, could not compare a judged metric and no check failed (the gate is
  incomplete: it passes only when every check passes). Not measuring wins over 0 and 1; an incomplete
  gate wins over 0 only, since a failed check decides the gate whatever the others say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

GATE_MODES = ("thresholds", "baseline", "both")
# Added to a mode (``--snap-gate=baseline,drift``): a construct whose position moved fails the run too.
DRIFT = "drift"


class BenchExit(IntEnum):
    PASSED = 0
    CHECKS_FAILED = 1
    NOT_MEASURED = 6


@dataclass
class ExitFindings:
    """What the session saw that decides its exit status."""

    failed_thresholds: list[str] = field(default_factory=list)
    failed_comparisons: list[str] = field(default_factory=list)
    # baseline comparisons the gate could not make (counted only where the exit status follows the gate)
    not_compared: list[str] = field(default_factory=list)
    # reason -> how many conditions (e.g. "no recording" -> 3)
    not_measured: dict[str, int] = field(default_factory=dict)
    other_failures: int = 0
    # drift checks whose equivalence was not shown (counted only where the exit status follows drift)
    moved: list[str] = field(default_factory=list)
    judged: bool = True  # False under --snap-no-analysis: nothing was judged


@dataclass(frozen=True)
class ExitDecision:
    code: int
    reason: str


def gates(mode: str) -> tuple[bool, bool]:
    """(thresholds gated, baseline gated) for a --snap-gate value (``both``, or ``baseline,drift``)."""
    parts = set(mode.split(","))
    return bool(parts & {"thresholds", "both"}), bool(parts & {"baseline", "both"})


def drift_gated(mode: str) -> bool:
    return DRIFT in mode.split(",")


def gate_mode(value: str) -> str:
    """A --snap-gate value: one of GATE_MODES, or drift, or one of them with ``,drift``."""
    parts = [part.strip() for part in value.split(",") if part.strip()]
    modes = [part for part in parts if part != DRIFT]
    if len(modes) > 1 or any(part not in GATE_MODES for part in modes) or not parts:
        legal = ", ".join([*GATE_MODES, DRIFT, "baseline,drift", "both,drift"])
        raise ValueError(f"{value!r} is not what the exit status can follow; use one of: {legal}")
    return ",".join([*modes, *([DRIFT] if DRIFT in parts else [])])


def decide(findings: ExitFindings) -> ExitDecision:
    if findings.not_measured:
        parts = ", ".join(f"{count} {reason}" for reason, count in sorted(findings.not_measured.items()))
        return ExitDecision(
            BenchExit.NOT_MEASURED, f"could not measure: {parts}; the verdicts rest on part of the design"
        )
    incomplete = f"the baseline gate is incomplete: {len(findings.not_compared)} metric(s) not compared"
    if findings.not_compared and not (findings.failed_comparisons or findings.failed_thresholds):
        # The gate passes only when every check shows non-inferiority: a missing one leaves it undecided.
        return ExitDecision(BenchExit.NOT_MEASURED, incomplete)
    failed = []
    if findings.failed_thresholds:
        failed.append(f"{len(findings.failed_thresholds)} threshold check(s) failed")
    if findings.failed_comparisons:
        failed.append(f"{len(findings.failed_comparisons)} baseline comparison(s) failed")
    if findings.moved:
        failed.append(f"{len(findings.moved)} position(s) drifted from the baseline (or drift was not ruled out)")
    if findings.other_failures:
        failed.append(f"{findings.other_failures} other test(s) failed")
    if failed:
        # A failed check decides the gate whatever the checks not compared would have said.
        return ExitDecision(BenchExit.CHECKS_FAILED, "; ".join([*failed, *[incomplete] * bool(findings.not_compared)]))
    if not findings.judged:
        return ExitDecision(BenchExit.PASSED, "nothing judged (--snap-no-analysis)")
    return ExitDecision(BenchExit.PASSED, "every gated check passed")
