"""What the exit status of a benchmark session says, and why: it follows the judgement, not the answers.

pytest's own codes stand for what they always mean (2 interrupted, 3 internal error, 4 usage error,
5 nothing collected or selected), and the session states them as they are. A session that ran decides
between three:

- 0: every check that the exit status follows (``--snap-gate``) was computed and passed;
- 1: a threshold check failed, or a comparison with the baseline showed a change: a regression past its
  margin, a construct's position moved past its margin, an item's answers moved beyond the run noise;
- 7: no check failed, but a comparison could not decide: its interval straddles its margin (undecided).
  It is never a pass, and not a shown change either: the line says how many runs would decide it;
- 6: the run could not measure what it was asked to (a condition without an observation: no
  recording, budget spent, a crash; or a model none of whose answers arrived), or a gated check could not
  be computed (a figure undefined on these data or resting on too little of the design: not judged; a
  comparison with no shared data, or an instrument or model of the baseline this run did not measure: not
  compared) and no check failed: the gate is incomplete, since it passes only when every check passes.
  Not measuring wins over 0, 1 and 7; an incomplete gate wins over 0 and 7 (a check not computed is a gap
  in the gate, an undecided one a gap in the evidence), since a failed check decides the gate whatever the
  others say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING

from snap_bench.asking.batch.ledger import PENDING_IN_A_BATCH
from snap_bench.judging.gate import Gate

if TYPE_CHECKING:
    from snap_bench.judging.judgement import Judgement


class BenchExit(IntEnum):
    PASSED = 0
    CHECKS_FAILED = 1
    NOT_MEASURED = 6
    UNDECIDED = 7


@dataclass
class ExitFindings:
    """What the session saw that decides its exit status."""

    failed_thresholds: list[str] = field(default_factory=list)
    failed_comparisons: list[str] = field(default_factory=list)
    # baseline comparisons the gate could not make (counted only where the exit status follows the gate)
    not_compared: list[str] = field(default_factory=list)
    # threshold checks that could not be computed (counted only where the exit status follows the thresholds)
    not_judged: list[str] = field(default_factory=list)
    # reason -> how many conditions (e.g. "no recording" -> 3)
    not_measured: dict[str, int] = field(default_factory=dict)
    other_failures: int = 0
    # drift checks that showed a move past the margin (counted only where the exit status follows drift)
    moved: list[str] = field(default_factory=list)
    # comparisons and drift checks whose interval straddles the margin (where the gate follows them), with the
    # runs that would decide the one that needs the most (None: none shows a pass at the observed difference)
    undecided: list[str] = field(default_factory=list)
    runs_to_decide: int | None = None
    # items whose answers moved beyond the run noise, and items not tested (where the gate follows items)
    changed_items: list[str] = field(default_factory=list)
    untested_items: list[str] = field(default_factory=list)
    judged: bool = True  # False under --snap-no-analysis: nothing was judged
    # How many checks of the kinds the exit status follows were made (None: not counted); none is no pass
    gated_checks: int | None = None
    # Whether any benchmark condition was collected and selected: a run at the root of a repository whose
    # testpaths are its own tests asks nothing, and the fix is to name the benchmarks folder
    benchmarks_collected: bool = True
    # pytest's own status when it is none of ours (2 interrupted, 3 internal error, 4 usage error, 5 nothing
    # ran), with what pytest or the session said of it
    pytest_status: int = 0
    pytest_reason: str = ""


@dataclass(frozen=True)
class ExitDecision:
    code: int
    reason: str


def findings(
    judgement: Judgement | None,
    gate: Gate,
    not_measured: dict[str, int],
    other_failures: int,
    analysed: bool,
    pytest_status: int = 0,
) -> ExitFindings:
    """What decides the exit status: the judgement's checks of the kinds the gate follows, what was not
    measured, the other tests that failed, and pytest's own status."""
    return ExitFindings(
        failed_thresholds=list(judgement.failed_thresholds) if judgement is not None and gate.thresholds else [],
        failed_comparisons=list(judgement.failed_comparisons) if judgement is not None and gate.baseline else [],
        not_compared=list(judgement.not_compared) if judgement is not None and gate.baseline else [],
        not_judged=list(judgement.not_judged) if judgement is not None and gate.thresholds else [],
        not_measured=not_measured,
        other_failures=other_failures,
        moved=list(judgement.moved) if judgement is not None and gate.drift else [],
        undecided=_undecided(judgement, gate),
        runs_to_decide=_runs_to_decide(judgement, gate),
        changed_items=list(judgement.changed_items) if judgement is not None and gate.items else [],
        untested_items=list(judgement.untested_items) if judgement is not None and gate.items else [],
        judged=analysed,
        pytest_status=pytest_status,
        gated_checks=sum(record.kind in gate.kinds for record in judgement.checks) if judgement is not None else 0,
    )


def _undecided(judgement: Judgement | None, gate: Gate) -> list[str]:
    if judgement is None:
        return []
    return [
        *(judgement.undecided if gate.baseline else []),
        *(judgement.drift_undecided if gate.drift else []),
        *(judgement.serving_undecided if gate.thresholds else []),
    ]


def _runs_to_decide(judgement: Judgement | None, gate: Gate) -> int | None:
    """The runs that would decide every gated undecided check: the most any of them needs, None where one
    cannot be decided by runs at the observed difference (or there is none)."""
    if judgement is None:
        return None
    needs: list[int | None] = [
        *(c.runs_to_decide for c in judgement.baseline if gate.baseline and c.undecided),
        *(d.runs_to_decide for d in judgement.drift if gate.drift and d.undecided),
        # A serving check is decided by more items or runs, counted in its own line: no one --snap-runs says it.
        *(None for _ in (judgement.serving_undecided if gate.thresholds else [])),
    ]
    if not needs or any(need is None for need in needs):
        return None
    return max(need for need in needs if need is not None)


# What pytest's own statuses mean, in the words of the last line.
PYTEST_STATUS_REASONS = {
    2: "interrupted (Ctrl-C, or an error during collection): the run is incomplete, nothing was judged",
    3: "internal error: the run is incomplete, nothing was judged",
    4: "usage error: nothing was asked",
    5: "no test was collected or selected: nothing was measured",
}


def _named(names: list[str], shown: int = 3) -> str:
    """The first few check names, and how many more."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def decide(findings: ExitFindings) -> ExitDecision:
    if findings.pytest_status not in (0, 1):
        reason = findings.pytest_reason or PYTEST_STATUS_REASONS.get(findings.pytest_status, "pytest's own status")
        return ExitDecision(findings.pytest_status, reason)
    if set(findings.not_measured) == {PENDING_IN_A_BATCH}:
        # --snap-batch=submit, or batches still running: nothing was meant to be answered yet.
        pending = findings.not_measured[PENDING_IN_A_BATCH]
        return ExitDecision(
            BenchExit.NOT_MEASURED,
            f"the batch is pending: {pending} condition(s) submitted and not ended yet; run again, with or without "
            "--snap-batch, to collect and judge them",
        )
    if findings.not_measured:
        parts = ", ".join(f"{count} {reason}" for reason, count in sorted(findings.not_measured.items()))
        return ExitDecision(
            BenchExit.NOT_MEASURED, f"could not measure: {parts}; the verdicts rest on part of the design"
        )
    unknown = [
        *([f"{len(findings.not_judged)} gated check(s) not judged"] if findings.not_judged else []),
        *([f"{len(findings.not_compared)} comparison(s) not compared"] if findings.not_compared else []),
        *([f"{len(findings.untested_items)} item(s) not tested"] if findings.untested_items else []),
    ]
    incomplete = f"the gate is incomplete: {' and '.join(unknown)} (a check that was not computed never passes)"
    failed = []
    if findings.failed_thresholds:
        failed.append(f"{len(findings.failed_thresholds)} threshold check(s) failed")
    if findings.failed_comparisons:
        failed.append(f"{len(findings.failed_comparisons)} baseline comparison(s) failed")
    if findings.moved:
        failed.append(f"{len(findings.moved)} position(s) moved from the baseline's past the drift margin")
    if findings.changed_items:
        named = _named(findings.changed_items)
        failed.append(f"{len(findings.changed_items)} item(s) changed beyond the run noise ({named})")
    if findings.other_failures:
        failed.append(f"{findings.other_failures} other test(s) failed")
    if failed:
        # A failed check decides the gate whatever the checks not computed would have said.
        return ExitDecision(BenchExit.CHECKS_FAILED, "; ".join([*failed, *[incomplete] * bool(unknown)]))
    if unknown:
        # The gate passes only when every check was computed and passed: a missing one leaves it incomplete.
        return ExitDecision(BenchExit.NOT_MEASURED, incomplete)
    if findings.undecided:
        # Computed, but the interval straddles the margin: neither a pass nor a shown change.
        if findings.runs_to_decide is not None:
            advice = f"about --snap-runs={findings.runs_to_decide} would decide them at the observed noise"
        else:
            advice = "no number of runs decides them all at the observed difference (each check's line says what would)"
        return ExitDecision(
            BenchExit.UNDECIDED,
            f"undecided: {len(findings.undecided)} gated check(s) could not tell a change from the run noise "
            f"({_named(findings.undecided)}); {advice}",
        )
    if not findings.judged:
        return ExitDecision(BenchExit.PASSED, "nothing judged (--snap-no-analysis)")
    if findings.gated_checks == 0 and not findings.benchmarks_collected:
        return ExitDecision(
            BenchExit.NOT_MEASURED,
            "no benchmark test was collected or selected, so nothing was asked or judged (pytest ran only the "
            "paths it was given, or its testpaths). Fix: name the benchmarks folder, e.g. pytest benchmarks",
        )
    if findings.gated_checks == 0:
        # A gate with nothing in it has shown nothing: no answer to judge, or no check of the kind it follows.
        return ExitDecision(BenchExit.NOT_MEASURED, "no check the exit status follows was made: nothing was judged")
    return ExitDecision(BenchExit.PASSED, "every gated check was computed and passed")
