"""The dry run's lines on the gate against a baseline: whether the design decides each gated check for an
unchanged model, and the runs that would (snap_bench.judging.run_planner)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from snap_bench.judging.deciding import MOST_RUNS
from snap_bench.judging.run_planner import TARGET, short_file, undecidable, widen

if TYPE_CHECKING:
    from snap_bench.judging.gate import Gate
    from snap_bench.judging.run_planner import CheckPlan, GatePlan, RunPlan


def gate_plan_lines(found: GatePlan, gate: Gate, models: Sequence[str]) -> list[str]:
    """The plan in words: the whole gate, then each gated check the planned runs leave short of the target."""
    plan = found.plan
    who = f" for {', '.join(models)}" if models else ""
    head = f"gate plan against {found.baseline} (--snap-gate={gate.option_value()}){who}:"
    if plan is None:
        return [head, f"  no plan: {found.why_not}"]
    if not any(kind in gate.kinds for kind in ("baseline", "drift", "items")):
        return [head, "  the gate follows no comparison with the baseline: nothing to plan"]
    lines = [head, f"  {_method(plan)}"]
    at_planned = plan.pass_rate.get(plan.planned)
    rate = "" if at_planned is None else f"; an unchanged model passes {at_planned:.0%} of pairs at {plan.planned} runs"
    short_of = f"  NOT decidable at {plan.planned} runs per cell{rate}"
    if plan.decidable:
        lines.append(f"  decidable: the design as planned ({plan.planned} runs per cell) decides the gate{rate}")
    elif plan.needed is None:
        lines.append(f"{short_of}; {undecidable(plan)}; {widen()}")
    elif found.file_runs is not None and plan.needed > found.file_runs:
        lines.append(f"{short_of}; {short_file(found.file_runs, plan.needed)}")
    else:
        reached = plan.pass_rate.get(plan.needed)
        share = "" if reached is None else f" ({reached:.0%} of pairs)"
        lines.append(f"{short_of}; {plan.needed} runs decide it{share}: --snap-runs={plan.needed}, or --snap-runs=auto")
    short = [check for check in plan.checks if not _decided_at(check, plan.planned)]
    for check in short:
        lines.append(f"    {check.kind} {check.instrument} {check.metric}: {_check_words(check, plan)}")
    decided = len(plan.checks) - len(short)
    if decided and short:
        lines.append(f"    the other {decided} gated check(s) are decided at {plan.planned} runs")
    return lines


def _method(plan: RunPlan) -> str:
    if plan.method == "analytic":
        return (
            "analytic (the design is too large to simulate in a dry run): one replayed pair judged at the planned "
            "runs, each undecided interval narrowed as one over the square root of the runs"
        )
    tried = ", ".join(str(runs) for runs in plan.pass_rate)
    return (
        f"simulated: {plan.pairs} pairs of replays of the baseline's own answers judged as the gate judges them, at "
        f"{tried} runs per cell (up to {MOST_RUNS}; target {TARGET:.0%} of pairs passed)"
    )


def _decided_at(check: CheckPlan, runs: int) -> bool:
    return check.needed is not None and check.needed <= runs


def _check_words(check: CheckPlan, plan: RunPlan) -> str:
    at = check.passed.get(plan.planned)
    shown = "" if at is None else f"passes {at:.0%} at {plan.planned} runs; "
    if check.needed is not None:
        return f"{shown}decided at {check.needed} runs"
    why = f" ({check.why})" if check.why else ""
    return f"{shown}no number of runs up to {max(plan.pass_rate, default=plan.planned)} decides it{why}"
