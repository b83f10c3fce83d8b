"""Does the upgrade gate decide whether the model changed? Both error rates of ``--snap-gate=baseline,drift,items``
on the small questionnaires teams write, over independent pairs of recordings.

A simulated questionnaire in YAML (the generic questionnaire kind, so every metric a team's own file gets is
compared): constructs of 3 items on a 1-5 agreement scale, one item of each construct reverse-keyed, asked
under the questionnaire defaults (4 system prompts x temperatures 0 and 1 x 3 runs: 24 conditions an item).
The answerer has a keyed true score per item (uniform on 1.5-4.5) and a small effect of each prompt on each
item (SD 0.3), fixed for the bench (seeded); at temperature 0 it answers the rounded score every run, at
temperature 1 the rounded score plus normal noise (SD ``--noise``, default 1.0 scale point: the shipped
models' run-to-run SD at t1 is 0.99 to 1.24), clipped to 1-5. Each replicate draws the baseline's recording
and the new model's afresh (independent pairs, neither reused) and judges them with the session's own code
(``judge_session`` with the shipped thresholds and margins, then the exit status the session would set).

What must pass (an unchanged model, the same answerer asked again): at the 12-item design and at the designs
frontier models force (temperature 1 only, one system prompt, two runs), a 50-item questionnaire, and half
of the answers unscored. What must not pass: the run noise doubled, one construct moved one keyed point,
two items moved 1.5 points each. For each it prints the share of pairs by exit status (0 pass, 1 a change
shown, 6 incomplete, 7 undecided) and, for the unchanged model, each check's coverage: how often its interval
held the true difference, 0 (95 % intervals for comparisons, 90 % for drift).

    .venv/bin/python -m bench.gate_decides [--replicates 100] [--resamples 1000] [--seed 20261127]
    .venv/bin/python -m bench.gate_decides --quick        # 40 replicates, 400 resamples
    .venv/bin/python -m bench.gate_decides --scenario unchanged --design "temperature 1 only"
    .venv/bin/python -m bench.gate_decides --scenario unchanged --runs auto   # at the planner's runs
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from bench.fixed_design import CONFIG, questionnaire_yaml, thresholds_of_kind
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.analysis.planner import scored_observation
from snap_bench.instruments import Instrument, questionnaire_kind
from snap_bench.instruments.base import Selection
from snap_bench.judging.baseline import BaselineSpec
from snap_bench.judging.exit_status import decide, findings
from snap_bench.judging.gate import Gate
from snap_bench.judging.judgement import judge_session
from snap_bench.judging.verdicts import ThresholdConfig
from snap_bench.observations.observation import Condition, Observation

OLD, NEW = "baseline", "new"
LOW, HIGH = 1, 5
GATE = Gate.parse("baseline,drift,items")


@dataclass(frozen=True)
class Design:
    """A questionnaire's size and the factors a run asks."""

    name: str
    items: int = 12
    temperatures: tuple[float, ...] = (0.0, 1.0)
    prompts: tuple[str, ...] = ("NEU", "DIR", "PER", "ABS")
    runs: int = 3
    unscored: float = 0.0


DESIGNS = {
    design.name: design
    for design in (
        Design("12 items"),
        Design("temperature 1 only", temperatures=(1.0,)),
        Design("one system prompt", prompts=("NEU",)),
        Design("runs = 2", runs=2),
        Design("50 items", items=50),
        Design("50 % unscored", unscored=0.5),
    )
}
# What must pass, and what must not: (name, noise factor of the new model, construct moved, items moved).
SCENARIOS = {
    "unchanged": (1.0, False, False),
    "noise doubled": (2.0, False, False),
    "construct moved 1 point": (1.0, True, False),
    "two items moved 1.5 points": (1.0, False, True),
}


# Every scenario at the 12-item design; at 50 items the doubled noise too (a margin that the small design's
# noise forces must not let a larger design pass it); the other designs the unchanged model.
DEFAULT_SCENARIOS = {"12 items": list(SCENARIOS), "50 items": ["unchanged", "noise doubled"]}


@cache
def instrument(items: int) -> Instrument:
    """The questionnaire in YAML (bench.fixed_design's, at ``items`` items), written once per size."""
    path = Path(tempfile.mkdtemp(prefix="gate-decides-")) / f"quiz{items}.yaml"
    path.write_text(questionnaire_yaml(items=items), encoding="utf-8")
    return questionnaire_kind(path, CONFIG)(CONFIG)


@cache
def thresholds_of(items: int) -> ThresholdConfig:
    return thresholds_of_kind(instrument(items))


def conditions(design: Design) -> list[Condition]:
    levels = {"system_prompt": frozenset(design.prompts)}
    selection = Selection(levels=levels, runs=design.runs)
    return [c for c in instrument(design.items).conditions(selection) if c.temperature in design.temperatures]


@dataclass(frozen=True)
class Answerer:
    """Keyed true score per (item, prompt); run-to-run noise SD at temperature 1."""

    truth: dict[tuple[str, str], float]
    noise: float

    def moved(self, items: Sequence[str], by: float) -> Answerer:
        """``items`` moved ``by`` keyed points towards the middle of the scale (so the move is not clipped)."""
        truth = dict(self.truth)
        for item in items:
            own = [key for key in truth if key[0] == item]
            mean = float(np.mean([truth[key] for key in own]))
            step = by if mean < (LOW + HIGH) / 2 else -by
            for key in own:
                truth[key] += step
        return Answerer(truth, self.noise)


def answerer(seed: int, items: int, noise: float) -> Answerer:
    rng = np.random.default_rng(seed)
    truth = {}
    for index in range(items):
        item = f"Q{index + 1:02d}"
        level = rng.uniform(1.5, 4.5)
        for prompt in ("NEU", "DIR", "PER", "ABS"):
            truth[(item, prompt)] = level + rng.normal(0, 0.3)
    return Answerer(truth, noise)


def recording(model: str, who: Answerer, design: Design, rng: np.random.Generator) -> list[Observation]:
    """One recording of the design by ``who``: every condition answered, a share left unscored."""
    kind = instrument(design.items)
    rows = []
    for condition in conditions(design):
        prompt = condition.level("system_prompt")
        keyed = who.truth[(condition.item, prompt)]
        if condition.temperature:
            keyed += rng.normal(0, who.noise)
        keyed_answer = int(np.clip(np.rint(keyed), LOW, HIGH))
        reverse = int(condition.item[1:]) % 3 == 0
        raw = LOW + HIGH - keyed_answer if reverse else keyed_answer
        # An unscored answer is one the questionnaire cannot read, as a model's that gives no number.
        text = "I would rather not say." if design.unscored and rng.random() < design.unscored else str(raw)
        rows.append(scored_observation(kind, model, condition, text))
    return rows


def one_replicate(args: tuple[str, str, int, int, float, int | None]) -> dict[str, Any]:
    """One independent pair: the baseline's recording and the new model's, judged; the exit status and each
    check's interval. ``runs``: both asked that many runs per cell instead of the design's."""
    design_name, scenario, seed, resamples, noise, runs = args
    design = DESIGNS[design_name] if runs is None else replace(DESIGNS[design_name], runs=runs)
    factor, construct_moved, items_moved = SCENARIOS[scenario]
    base = answerer(20261127, design.items, noise)
    new = replace(base, noise=noise * factor)
    if construct_moved:
        new = new.moved(("Q04", "Q05", "Q06"), 1.0)
    if items_moved:
        new = new.moved(("Q01", "Q08"), 1.5)
    rng = np.random.default_rng(seed)
    observations = [*recording(OLD, base, design, rng), *recording(NEW, new, design, rng)]
    kind = instrument(design.items)
    settings = AnalysisSettings(n_resamples=resamples, seed=seed)
    judgement = judge_session(
        observations, {kind.name: kind}, settings, lambda _: thresholds_of(design.items), BaselineSpec(OLD), gate=GATE
    )
    decision = decide(findings(judgement, GATE, {}, 0, True))
    # (check, low, high, decision); drift's constructs pooled under one name (each is exchangeable here)
    intervals = [
        (record.metric.partition("[")[0] if record.kind == "drift" else record.metric, low, high, record.decision)
        for record in judgement.checks
        if record.kind in ("baseline", "drift")
        and (low := record.ci_low) is not None
        and (high := record.ci_high) is not None
    ]
    items_flagged = [c.item for c in judgement.item_changes if c.reliable]
    return {"exit": decision.code, "reason": decision.reason, "intervals": intervals, "items": items_flagged}


def planned_runs(design_name: str, noise: float, seed: int) -> int | None:
    """What --snap-runs=auto would ask: the planner's runs from one baseline recorded at the design (its own
    seed, not a replicate's), printed with what it found and how long it took."""
    from snap_bench.judging.run_planner import Planner

    design = DESIGNS[design_name]
    started = time.perf_counter()
    recorded = recording(OLD, answerer(20261127, design.items, noise), design, np.random.default_rng(seed - 1))
    kind = instrument(design.items)
    planner = Planner(recorded, {kind.name: kind}, lambda _: thresholds_of(design.items), GATE, label=OLD, seed=seed)
    plan = planner.plan(design.runs)
    rates = ", ".join(f"{runs}: {rate:.0%}" for runs, rate in plan.pass_rate.items())
    print(
        f"{design_name}: planner ({plan.method}, {plan.pairs} pairs) from a baseline at "
        f"{design.runs} runs: {plan.needed or 'no number up to the cap'} runs (pass rate by runs tried: {rates}; "
        f"{time.perf_counter() - started:.0f} s)",
        flush=True,
    )
    return plan.needed


def report(design: str, scenario: str, results: list[dict[str, Any]]) -> list[str]:
    n = len(results)
    exits = Counter(r["exit"] for r in results)
    shares = ", ".join(f"exit {code}: {count / n:.0%}" for code, count in sorted(exits.items()))
    lines = [f"{design} | {scenario}: n = {n}; passed {exits[0] / n:.1%}, not passed {1 - exits[0] / n:.1%} ({shares})"]
    if scenario == "unchanged":
        held: dict[str, list[bool]] = defaultdict(list)
        decisions: dict[str, Counter[str]] = defaultdict(Counter)
        for r in results:
            for check, low, high, decision in r["intervals"]:
                held[check].append(low <= 0 <= high)
                decisions[check][decision] += 1
        for check in sorted(held):
            cover = float(np.mean(held[check]))
            tally = ", ".join(f"{d} {c}" for d, c in decisions[check].most_common())
            lines.append(f"    {check}: coverage {cover:.1%} over {len(held[check])} intervals ({tally})")
        flagged = Counter(item for r in results for item in r["items"])
        lines.append(f"    items named changed (false discoveries): {sum(flagged.values())} in {n} pairs")
    else:
        reasons = Counter(r["reason"].split(":")[0].split(";")[0] for r in results if r["exit"] != 0)
        lines.append(f"    why not passed: {dict(reasons.most_common(4))}")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=20261127)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="40 replicates, 400 resamples")
    parser.add_argument("--design", choices=sorted(DESIGNS), action="append")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), action="append")
    parser.add_argument(
        "--runs",
        default=None,
        help="runs per cell for both recordings instead of the design's: a number, or 'auto': the runs the "
        "planner (snap_bench.judging.run_planner) names from a baseline recorded at the design",
    )
    args = parser.parse_args(argv)
    replicates, resamples = (40, 400) if args.quick else (args.replicates, args.resamples)
    plan = [
        (design, scenario)
        for design in args.design or DESIGNS
        for scenario in args.scenario or DEFAULT_SCENARIOS.get(design, ["unchanged"])
    ]
    print(
        f"gate --snap-gate={GATE.option_value()}: {replicates} independent pairs each, {resamples} resamples, "
        f"noise SD {args.noise}"
    )
    for design, scenario in plan:
        started = time.perf_counter()
        runs = None if args.runs is None else int(args.runs) if args.runs != "auto" else None
        if args.runs == "auto":
            runs = planned_runs(design, args.noise, args.seed)
            if runs is None:
                continue
        jobs = [
            (design, scenario, args.seed + 7919 * index, resamples, args.noise, runs) for index in range(replicates)
        ]
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(one_replicate, jobs))
        for line in report(design if runs is None else f"{design} at {runs} runs", scenario, results):
            print(line, flush=True)
        print(f"    ({time.perf_counter() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
