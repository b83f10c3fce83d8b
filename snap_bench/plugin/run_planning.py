"""The session's side of planning before paying (snap_bench.judging.run_planner): the baseline's answers to the
cells the run asks, the plan, and ``--snap-runs=auto`` turned into a number of runs or a usage error."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from snap_bench.analysis.planner import recorded_observations
from snap_bench.instruments.base import Instrument, Selection
from snap_bench.observations.observation import Condition, Observation

if TYPE_CHECKING:
    from snap_bench.judging.baseline import BaselineSpec
    from snap_bench.judging.gate import Gate
    from snap_bench.judging.run_planner import GatePlan
    from snap_bench.judging.verdicts import ThresholdConfig
    from snap_bench.recordings.state import Recordings

# What the workers read the controller's plan from (planned once, handed to each worker by xdist).
PLANNED_RUNS_KEY = "snap_planned_runs"
_RUN = re.compile(r"-r(\d+)$")


def baseline_answers(
    baseline: BaselineSpec,
    asked: Mapping[str, Sequence[Condition]],
    instruments: Mapping[str, Instrument],
    recordings: Recordings,
) -> list[Observation]:
    """The baseline's answers to the cells the run asks (``asked``: instrument -> the new models' conditions):
    a baseline file's rows, or every recorded run of a replayed model."""
    cells = {(name, condition.cell) for name, conditions in asked.items() for condition in conditions}
    if baseline.observations:
        return [row for row in baseline.observations if (row.instrument, row.cell) in cells]
    rows: list[Observation] = []
    for name, conditions in asked.items():
        folder = recordings.folder(baseline.model, name)
        runs = [int(found.group(1)) for path in folder.glob("*.json") if (found := _RUN.search(path.stem))]
        if not runs or not conditions:
            continue
        instrument = instruments[name]
        levels: dict[str, set[str]] = {}
        for condition in conditions:
            for factor, level in condition.levels:
                levels.setdefault(factor, set()).add(level)
        selection = Selection(
            items=frozenset(condition.item for condition in conditions),
            levels={factor: frozenset(values) for factor, values in levels.items()},
            runs=max(runs),
        )
        wanted = [c for c in instrument.conditions(selection) if (name, c.cell) in cells]
        rows.extend(recorded_observations(instrument, baseline.model, wanted, recordings.root))
    return rows


def gate_plan(
    baseline: BaselineSpec,
    answers: Sequence[Observation],
    instruments: Mapping[str, Instrument],
    thresholds: Callable[[str], ThresholdConfig],
    gate: Gate,
    planned: int,
    seed: int,
) -> GatePlan:
    """Plan the runs against ``baseline`` from ``answers`` (:func:`baseline_answers`)."""
    from snap_bench.judging.run_planner import GatePlan, Planner, recorded_runs

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


def planned_runs(conditions: Sequence[Condition]) -> int:
    """The runs per cell a design asks: the most any cell is asked."""
    counts: dict[tuple[str, str], int] = {}
    for condition in conditions:
        key = (condition.instrument, condition.cell)
        counts[key] = counts.get(key, 0) + 1
    return max(counts.values(), default=1)
