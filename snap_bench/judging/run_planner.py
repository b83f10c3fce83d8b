"""Plan before paying: from a baseline's recorded answers, whether the run's design can decide each gated check
against an unchanged model, and the runs per cell that would (``--snap-dry-run`` with ``--baseline``, and
``--snap-runs=auto``).

An unchanged model is the baseline asked again. So the planner draws pairs of replays of the baseline, each
cell's ``r`` answers redrawn (with replacement) from the baseline's own recorded answers to that cell (a cell
the baseline answered once keeps its answer), names one side the baseline and the other the new model, and
judges the pair with the session's own code (:func:`snap_bench.judging.judgement.judge_session`, the same
comparisons, drift and item tests under the run's gate). The whole gate passes a pair when every gated check
of kind baseline, drift or items passes (thresholds judge the new model alone: no number of runs of a pair
changes them). The runs planned are the fewest ``r`` (on a ladder from the planned runs up to ``MOST_RUNS``)
at which all but ``allowed_failures`` of ``PAIRS`` pairs pass (19 of 20: at least ``TARGET``), with the same
seeds at every ``r`` (common random numbers, so the pass rate rises with ``r`` rather than with luck).

Drawn from its own ``n`` answers, a cell's redrawn answers would vary by ``(n - 1) / n`` of the cell's variance
(the plug-in variance of a resample; half of it for a cell asked twice), so a replay at ``r`` runs would be as
quiet as the model at ``r n / (n - 1)`` runs. The draw restores it instead (:func:`restored_draw`), so the runs
simulated are the runs named.

Where the simulation would cost more than :data:`MOST_ANSWERS` redrawn answers per pair the planner does
not simulate: it judges one replayed pair at the planned runs and reads each undecided check's analytic figure
(:func:`snap_bench.judging.deciding.runs_to_decide`, the interval's half-width going as one over the square
root of the runs), and says which it used. Imported on use: judging loads numpy, scipy and pandas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from snap_bench.judging.baseline import BaselineSpec
from snap_bench.judging.deciding import MOST_RUNS
from snap_bench.judging.gate import Gate
from snap_bench.observations.observation import Condition, Observation, Scored

if TYPE_CHECKING:
    from snap_bench.judging.judgement import Judged, Judgement
    from snap_bench.judging.verdicts import ThresholdConfig

# The share of unchanged pairs the whole gate must pass at the runs planned (the gate's own target: an
# unchanged model passes at least 95 % of the time).
TARGET = 0.95
# The rungs the planner climbs above the planned runs, up to deciding.MOST_RUNS (beyond which the design, not the
# runs, is what to change): roughly geometric, since an interval's half-width goes as one over the square root of
# the runs (the next rung narrows it by a similar share).
LADDER = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 30)
# Simulated pairs per number of runs, and the bootstrap resamples of each pair's intervals: enough to tell 95 %
# from 80 % at a dry run's cost (19 of 20 pairs pass a design whose true rate is 95 % three times in four, one
# whose rate is 80 % about one time in fourteen).
PAIRS = 20
RESAMPLES = 200
# Above this many redrawn answers per pair (both sides, at the most runs searched) the planner reads the
# analytic figure instead of simulating: a 12-item questionnaire at 2 temperatures x 4 prompts (96 cells, 5,760)
# is simulated, the shipped BFI-25 (300 cells) and the profile are not.
MOST_ANSWERS = 8_000
# The kinds of check a pair can fail (a threshold judges the new model alone).
PAIRED_KINDS = ("baseline", "drift", "items")
# The replay that stands for the new model in the simulated pairs.
NEW = "unchanged replay"


@runtime_checkable
class Scorer(Protocol):
    """An instrument that scores an answer's text: what a replay's restored answers are read by."""

    def score(self, condition: Condition, answer: str) -> Scored: ...


@dataclass(frozen=True)
class CheckPlan:
    """One gated check across the simulated pairs: the share it passed at each number of runs tried, and the
    fewest runs at which it passed ``TARGET`` of them (None: none tried did)."""

    kind: str
    instrument: str
    metric: str
    passed: Mapping[int, float]
    needed: int | None
    # Why no number of runs decides it (e.g. it was never compared), '' otherwise.
    why: str = ""


@dataclass(frozen=True)
class RunPlan:
    """What the planner found for one baseline under one gate."""

    planned: int  # the runs per cell the run's design asks
    recorded: int  # the most runs per cell the baseline holds
    method: str  # "simulated" or "analytic"
    pairs: int
    pass_rate: Mapping[int, float]  # the whole gate's, at each number of runs tried
    needed: int | None  # the fewest runs per cell that pass TARGET of the pairs (None: none up to MOST_RUNS)
    checks: tuple[CheckPlan, ...]

    @property
    def decidable(self) -> bool:
        """The design as planned passes an unchanged model at least TARGET of the time."""
        return self.needed is not None and self.needed <= self.planned


def recorded_runs(baseline: Sequence[Observation]) -> int:
    """The most answers the baseline holds to one cell."""
    counts: dict[tuple[str, str], int] = {}
    for row in baseline:
        counts[(row.instrument, row.cell)] = counts.get((row.instrument, row.cell), 0) + 1
    return max(counts.values(), default=0)


def restored_draw(
    answers: Sequence[Observation], scorer: Scorer | None
) -> tuple[list[Observation], npt.NDArray[np.float64]]:
    """The answers a cell's replay draws from and their probabilities, whose variance is the cell's unbiased
    variance ``s^2``, not the plug-in ``(n - 1) / n s^2`` of its ``n`` recorded answers.

    A discrete smoothed bootstrap: the recorded answers (each 1 / n) mixed with a two-point draw one scale point
    outside their range (``lo = min - 1``, ``hi = max + 1``, each kept only where the instrument reads it back as
    that score, else the recorded extreme), with the cell's mean: its variance ``q = (m - lo)(hi - m)`` exceeds the
    plug-in ``p``, and a weight ``w = (k - 1) p / (q - p)`` of it (``k = n / (n - 1)``) gives ``(1 - w) p + w q =
    k p``; the mean is unchanged. Scaling each answer's distance from the mean by ``sqrt(k)`` and rounding to the
    scale, the other way to restore it, restores nothing for a cell asked twice: 2 and 3 become 1.79 and 3.21,
    rounded back to 2 and 3. The new answers are texts the instrument scores (``scorer``), as a model's are.
    Recorded as they were (no restoration): a cell asked once, one whose answers agree or are not all scored
    numbers, an instrument that reads no number back, and a cell whose answers already span what it reads
    (``w`` would exceed 1: its variance is the most the scale allows)."""
    recorded = list(answers)
    uniform = np.full(len(recorded), 1.0 / len(recorded))
    scores = [row.score for row in recorded]
    if scorer is None or len(recorded) < 2 or any(row.code is not None or row.score is None for row in recorded):
        return recorded, uniform
    values = np.asarray(scores, dtype=np.float64)
    mean, plug_in = float(values.mean()), float(values.var())
    if plug_in <= 0:
        return recorded, uniform
    low = _read_back(recorded[0], int(values.min()) - 1, scorer) or recorded[int(values.argmin())]
    high = _read_back(recorded[0], int(values.max()) + 1, scorer) or recorded[int(values.argmax())]
    lo, hi = float(low.score or 0), float(high.score or 0)
    spread = (mean - lo) * (hi - mean)
    k = len(recorded) / (len(recorded) - 1)
    if spread <= plug_in or (k - 1) * plug_in > spread - plug_in:
        return recorded, uniform
    weight = (k - 1) * plug_in / (spread - plug_in)
    up = (mean - lo) / (hi - lo)  # the two-point draw's chance of ``hi``, so that its mean is the cell's
    probabilities = np.concatenate([(1 - weight) * uniform, [weight * (1 - up), weight * up]])
    return [*recorded, low, high], probabilities


def _read_back(template: Observation, value: int, scorer: Scorer) -> Observation | None:
    """``template``'s cell answered ``value``, scored by the instrument from its text; None where the instrument
    does not read it back as that score (off the scale)."""
    levels = tuple(template.factors.items())
    condition = Condition(template.instrument, template.item, levels, template.temperature, template.run)
    scored = scorer.score(condition, str(value))
    if scored.code is not None or scored.score != value:
        return None
    return replace(
        template, raw_answer=str(value), score=scored.score, keyed_score=scored.keyed_score, reason=scored.reason
    )


def replay(
    baseline: Sequence[Observation],
    model: str,
    runs: int | None,
    rng: np.random.Generator,
    scorers: Mapping[str, Scorer] | None = None,
) -> list[Observation]:
    """One replay of the baseline as ``model``: each cell's ``runs`` answers (None: as many as it holds) redrawn
    from the baseline's answers to that cell, as noisy as the model's (:func:`restored_draw`, with the
    instrument's scorer from ``scorers``); a cell it answered once keeps that answer in every run."""
    cells: dict[tuple[str, str], list[Observation]] = {}
    for row in baseline:
        cells.setdefault((row.instrument, row.cell), []).append(row)
    rows = []
    for (instrument, cell), answers in sorted(cells.items()):
        count = len(answers) if runs is None else runs
        pool, probabilities = restored_draw(answers, (scorers or {}).get(instrument))
        drawn = rng.choice(len(pool), size=count, p=probabilities)
        for run, index in enumerate(drawn, start=1):
            rows.append(replace(pool[int(index)], model=model, run=run, condition_id=f"{cell}-r{run}"))
    return rows


@dataclass(frozen=True)
class Planner:
    """The baseline's answers (restricted to what the run asks), the instruments and thresholds to judge them
    with, and the run's gate."""

    baseline: Sequence[Observation]
    instruments: Mapping[str, Judged]
    thresholds: Callable[[str], ThresholdConfig]
    gate: Gate
    label: str = "baseline"
    pairs: int = PAIRS
    resamples: int = RESAMPLES
    seed: int = 20261127

    def judged_pair(self, runs: int, index: int) -> Judgement:
        """Pair ``index`` at ``runs`` runs per cell: two replays, judged (the same seed at every ``runs``)."""
        from snap_bench.analysis.metric_tables import AnalysisSettings
        from snap_bench.judging.judgement import judge_session

        rng = np.random.default_rng([self.seed, index])
        scorers = {name: kind for name, kind in self.instruments.items() if isinstance(kind, Scorer)}
        observations = [
            *replay(self.baseline, self.label, runs, rng, scorers),
            *replay(self.baseline, NEW, runs, rng, scorers),
        ]
        settings = AnalysisSettings(n_resamples=self.resamples, seed=self.seed + index)
        return judge_session(
            observations, self.instruments, settings, self.thresholds, BaselineSpec(self.label), gate=self.gate
        )

    def gated(self, judgement: Judgement) -> dict[tuple[str, str, str], str]:
        """(kind, instrument, metric) -> decision of every check the gate follows that a pair can fail."""
        kinds = self.gate.kinds & set(PAIRED_KINDS)
        return {(r.kind, r.instrument, r.metric): r.decision for r in judgement.checks if r.kind in kinds}

    def shares(self, runs: int) -> tuple[float, dict[tuple[str, str, str], float], int]:
        """The whole gate's pass rate at ``runs`` and each gated check's, over the pairs judged: they stop once
        more than ``allowed_failures`` failed (the rate is then short of the target whatever the rest do)."""
        whole, failed, judged = 0, 0, 0
        passed, seen = dict[tuple[str, str, str], int](), dict[tuple[str, str, str], int]()
        for index in range(self.pairs):
            decisions = self.gated(self.judged_pair(runs, index))
            judged += 1
            good = all(decision == "pass" for decision in decisions.values())
            whole, failed = whole + good, failed + (not good)
            for key, decision in decisions.items():
                seen[key] = seen.get(key, 0) + 1
                passed[key] = passed.get(key, 0) + (decision == "pass")
            if failed > self.allowed_failures:
                break
        return whole / judged, {key: passed.get(key, 0) / seen[key] for key in seen}, judged

    @property
    def allowed_failures(self) -> int:
        """The pairs that may fail at runs that pass: TARGET of them must pass (1 of 20 at 95 %)."""
        return math.floor(self.pairs * (1 - TARGET) + 1e-9)

    def answers_per_pair(self) -> int:
        cells = {(row.instrument, row.cell) for row in self.baseline}
        return 2 * len(cells) * MOST_RUNS

    def plan(self, planned: int) -> RunPlan:
        """The runs that decide the gate, simulated where affordable (else the analytic figure).

        The search climbs from the planned runs (a design that decides needs no more; one that does not is
        not decided by fewer) up the LADDER to MOST_RUNS: a number that fails stops at its second failed pair,
        so only the number that passes costs every pair."""
        if not self.baseline:
            raise ValueError("the baseline holds no per-condition answers to plan from")
        if self.answers_per_pair() > MOST_ANSWERS:
            return self.analytic(planned)
        tried: dict[int, tuple[float, dict[tuple[str, str, str], float], int]] = {}
        found: int | None = None
        for runs in self._ladder(planned):
            tried[runs] = self.shares(runs)
            rate, _, judged = tried[runs]
            if judged == self.pairs and rate >= 1 - self.allowed_failures / self.pairs:
                found = runs
                break
        keys = sorted({key for _, per_check, _ in tried.values() for key in per_check})
        checks = []
        for key in keys:
            passed = {runs: per_check.get(key, 0.0) for runs, (_, per_check, _) in tried.items()}
            enough = [runs for runs, share in passed.items() if share >= TARGET]
            why = "" if any(passed.values()) else "it passed in no simulated pair (not compared, or never decided)"
            checks.append(CheckPlan(*key, passed=passed, needed=min(enough, default=None), why=why))
        return RunPlan(
            planned=planned,
            recorded=recorded_runs(self.baseline),
            method="simulated",
            pairs=self.pairs,
            pass_rate={runs: rate for runs, (rate, _, _) in tried.items()},
            needed=found,
            checks=tuple(checks),
        )

    @staticmethod
    def _ladder(planned: int) -> list[int]:
        """The runs to try, fewest first: the planned runs, then each rung of LADDER above them."""
        return [planned, *(runs for runs in LADDER if planned < runs <= MOST_RUNS)]

    def analytic(self, planned: int) -> RunPlan:
        """One replayed pair at the planned runs, each undecided check's runs read off its interval."""
        judgement = self.judged_pair(planned, 0)
        needs: dict[tuple[str, str, str], int | None] = {}
        for comparison in judgement.baseline:
            if self.gate.baseline:
                key = ("baseline", comparison.instrument, comparison.metric)
                shown = not (comparison.regressed or comparison.undecided or comparison.not_compared)
                needs[key] = planned if shown else comparison.runs_to_decide
        for drift in judgement.drift:
            if self.gate.drift:
                key = ("drift", drift.instrument, f"drift[{drift.construct}]")
                needs[key] = planned if not (drift.moved or drift.undecided) else drift.runs_to_decide
        checks = tuple(
            CheckPlan(*key, passed={}, needed=need, why="" if need is not None else "no analytic figure")
            for key, need in sorted(needs.items())
        )
        known = [need for need in needs.values() if need is not None]
        needed = None if len(known) < len(needs) or max(known, default=2) > MOST_RUNS else max([2, *known])
        return RunPlan(
            planned=planned,
            recorded=recorded_runs(self.baseline),
            method="analytic",
            pairs=1,
            pass_rate={},
            needed=needed,
            checks=checks,
        )


@dataclass(frozen=True)
class GatePlan:
    """The plan against one baseline: ``plan`` where one could be made, else why not; ``file_runs`` the runs
    per cell a baseline file holds (None for a replayed model, asked the plan's runs as well)."""

    baseline: str
    plan: RunPlan | None
    why_not: str = ""
    file_runs: int | None = None


def auto_runs(found: GatePlan) -> tuple[int | None, str]:
    """--snap-runs=auto: the runs to ask, or None and the usage error that names why and the fix."""
    head = f"--snap-runs=auto against {found.baseline}"
    plan = found.plan
    if plan is None:
        return None, (
            f"{head}: {found.why_not}. Fix: --baseline=MODEL (a model with recordings) or a baseline file "
            "(--snap-save-baseline), or give a number: --snap-runs=N"
        )
    if plan.needed is None:
        return None, f"{head}: {undecidable(plan)}. Fix: {widen()}, or give a number: --snap-runs=N"
    if found.file_runs is not None and plan.needed > found.file_runs:
        return None, f"{head}: {short_file(found.file_runs, plan.needed)}"
    return plan.needed, ""


def undecidable(plan: RunPlan) -> str:
    """Why no number of runs the planner tried decides the gate: the checks that never reached the target."""
    short = [check for check in plan.checks if check.needed is None]
    names = ", ".join(f"{check.kind} {check.metric}" for check in short[:4]) + (" ..." if len(short) > 4 else "")
    top = max(plan.pass_rate, default=plan.planned)
    rate = plan.pass_rate.get(top)
    at = f" (an unchanged model passes {rate:.0%} at {top} runs)" if rate is not None else ""
    return (
        f"no number of runs up to {MOST_RUNS} decides it at this design{at}: "
        f"{names or 'the gate'} stay{'s' if len(short) == 1 else ''} short of {TARGET:.0%}"
    )


def widen() -> str:
    return (
        "a design with less run noise (--snap-temperatures with 0 as well) or more cells (more system prompts, items)"
    )


def short_file(file_runs: int, needed: int) -> str:
    return (
        f"the baseline file holds {file_runs} run(s) per cell, and the gate pairs only the runs both hold, so more "
        f"runs of the new model decide nothing; {needed} runs would. Fix: record the baseline at {needed} runs "
        f"(--snap-runs={needed} --snap-save-baseline=baselines/{{model}}.json) and gate both at --snap-runs={needed}"
    )


def planned_runs(conditions: Sequence[Condition]) -> int:
    """The runs per cell a design asks: the most any cell is asked."""
    counts: dict[tuple[str, str], int] = {}
    for condition in conditions:
        key = (condition.instrument, condition.cell)
        counts[key] = counts.get(key, 0) + 1
    return max(counts.values(), default=1)


def gate_plan(
    baseline: BaselineSpec,
    answers: Sequence[Observation],
    instruments: Mapping[str, Judged],
    thresholds: Callable[[str], ThresholdConfig],
    gate: Gate,
    planned: int,
    seed: int,
) -> GatePlan:
    """The plan against ``baseline`` from its ``answers`` to the cells the run asks (a baseline file's rows, or
    a replayed model's recordings), or why there is none."""
    if baseline.saved is not None:
        return GatePlan(baseline.model, None, "a saved analysis.json holds no per-condition answers to plan from")
    if not answers:
        return GatePlan(baseline.model, None, "the baseline holds no answer to the conditions this run asks")
    used = {row.instrument for row in answers}
    judged = {name: kind for name, kind in instruments.items() if name in used}
    file_runs = recorded_runs(answers) if baseline.observations else None
    planner = Planner(answers, judged, thresholds, gate, label=baseline.model, seed=seed)
    # Against a file, the new model's runs beyond the file's pair with nothing: plan at the file's runs.
    return GatePlan(baseline.model, planner.plan(file_runs or planned), file_runs=file_runs)
