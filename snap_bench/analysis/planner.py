"""The repetitions planner: from a model's recorded answers (a pilot run), how many runs or paraphrases a
reading must average to reach a target coefficient, printed by ``--snap-dry-run`` before paying for more.

It scores the recordings with the instrument, runs the instrument's analysis and reads the decision study
the analysis keeps per temperature (``details["g_study"][level]["planner"]``); an instrument without a G
study prints nothing. Imported on use: the analysis loads numpy, scipy and pandas.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snap_bench.observations.observation import Condition, Observation
from snap_bench.recordings.state import Recordings

if TYPE_CHECKING:
    from typing import Protocol

    from snap_bench.analysis.metric_tables import Analyser
    from snap_bench.asking.observing import Answered

    class Planned(Answered, Analyser, Protocol):
        """What the planner asks of an instrument: its answers scored (:class:`Answered`) and analysed."""


# The interval bootstraps of the original design's figures are not what the planner reads.
PLANNER_RESAMPLES = 10
_RUN = re.compile(r"-r(\d+)$")


def scored_observation(instrument: Planned, model: str, condition: Condition, text: str) -> Observation:
    """An answer's text scored by the instrument, as the observation a replayed run records (no messages)."""
    from snap_bench.asking.client import ChatReply
    from snap_bench.asking.observing import observation_of

    return observation_of(model, instrument, condition, [], ChatReply(text, None, 200, 0.0, 1), True)


def recorded_observations(
    instrument: Planned, model: str, conditions: Sequence[Condition], recordings: Path
) -> list[Observation]:
    """The conditions whose cassette holds an answer, scored; the others are left out (a pilot is partial)."""
    recorded = Recordings(recordings)
    observations = []
    for condition in conditions:
        text = recorded.answer(model, instrument.name, condition.id)
        if text is not None:
            observations.append(scored_observation(instrument, model, condition, text))
    return observations


def planner_lines(instrument: Planned, model: str, conditions: Sequence[Condition], recordings: Path) -> list[str]:
    """Per temperature: the pilot's single-answer dependability and the counts that reach each target."""
    from snap_bench.analysis.metric_tables import AnalysisSettings

    observations = recorded_observations(instrument, model, conditions, recordings)
    if len(observations) < 2:
        return []
    analysis = instrument.analyse(model, observations, AnalysisSettings(n_resamples=PLANNER_RESAMPLES))
    studies: dict[str, Any] = analysis.details.get("g_study") or {}
    if not studies:
        return []
    lines = [f"  planner for {model} (decision study on {len(observations)} recorded answers):"]
    for level, study in studies.items():
        metric = analysis.metrics.get(f"dependability[{level}]")
        if metric is None or metric.value is None or not study.get("planner"):
            lines.append(f"    {level}: no G study ({study.get('undefined', 'constant answers')})")
            continue
        reach = "; ".join(
            f"{plan['facet']}s for {'/'.join(plan['phi'])}: {'/'.join(_count(n) for n in plan['phi'].values())} "
            f"(ceiling {plan['phi_ceiling']:.2f})"
            for plan in study["planner"]
        )
        # A component on its boundary can leave the interval undefined: said, not formatted as a number.
        interval = (
            f"[{metric.ci_low:.2f}, {metric.ci_high:.2f}]"
            if metric.ci_low is not None and metric.ci_high is not None
            else "(no interval)"
        )
        lines.append(f"    {level}: dependability of one answer {metric.value:.2f} {interval}; {reach}")
    return lines


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def recorded_runs_of(
    model: str,
    asked: Mapping[str, Sequence[Condition]],
    instruments: Mapping[str, Planned],
    at_runs: Callable[[str, int], Sequence[Condition]],
    recordings: Path,
) -> list[Observation]:
    """Every recorded run of ``model`` to the cells the run asks (``asked``: instrument -> conditions), scored:
    the baseline's answers the gate's run planner draws from (snap_bench.judging.run_planner). ``at_runs(name,
    runs)``: the instrument's asked conditions at that many runs (the recordings may hold more than the run asks)."""
    rows: list[Observation] = []
    for name, conditions in asked.items():
        folder = Recordings(recordings).folder(model, name)
        runs = [int(found.group(1)) for path in folder.glob("*.json") if (found := _RUN.search(path.stem))]
        if not runs or not conditions:
            continue
        cells = {condition.cell for condition in conditions}
        wanted = [condition for condition in at_runs(name, max(runs)) if condition.cell in cells]
        rows.extend(recorded_observations(instruments[name], model, wanted, recordings))
    return rows
