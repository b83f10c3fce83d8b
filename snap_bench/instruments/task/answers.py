"""One model's baseline answers as arrays: a unit (sample, occasion) per row, a rewording (variant) per column.

Units: a *sample* is one labelled text; an *occasion* is one (temperature, run); a *variant* is one
rewording, a level of each of the task's dimensions (the sentiment study's formality-phrasing-order-synonyms).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from snap_bench.instruments.task.label_set import LabelSet
from snap_bench.instruments.task.labelled_data import read_gold
from snap_bench.observations.observation import Observation
from snap_bench.stats import FloatArray


def variant_levels(observation: Observation, dimensions: Sequence[str]) -> dict[str, str]:
    """The observation's level of each rewording dimension, in the design's order (an observation read back
    from a file may hold its factors in another order)."""
    return {f: observation.factors[f] for f in dimensions if f in observation.factors}


def variant_id(observation: Observation, dimensions: Sequence[str]) -> str:
    """The rewording an observation was asked through, e.g. formal-imp-task-syn1."""
    return "-".join(variant_levels(observation, dimensions).values())


@dataclass(frozen=True)
class Answers:
    """One model's baseline as arrays: ``values[u, v]`` is the encoding unit u got from variant v (NaN: none).

    A unit is a (sample, occasion); ``sample_of[u]`` indexes ``samples``.
    """

    samples: list[str]
    variants: list[str]
    variant_levels: list[dict[str, str]]
    sample_of: npt.NDArray[np.intp]
    values: FloatArray
    gold_low: FloatArray  # per unit
    gold_high: FloatArray
    gold_kind: str
    gold_labels: list[str]  # per unit
    label_set: LabelSet
    dimensions: tuple[str, ...]  # the rewording dimensions, in the design's order

    def units_of(self, sample_indices: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        """The units of the (resampled, possibly repeated) samples, in that order."""
        groups = self._groups()
        return np.concatenate([groups[index] for index in sample_indices])

    def _groups(self) -> list[npt.NDArray[np.intp]]:
        cached: list[npt.NDArray[np.intp]] | None = self.__dict__.get("_cached_groups")
        if cached is None:
            cached = [np.flatnonzero(self.sample_of == index) for index in range(len(self.samples))]
            object.__setattr__(self, "_cached_groups", cached)
        return cached


def answers_table(observations: Sequence[Observation], label_set: LabelSet, dimensions: Sequence[str]) -> Answers | str:
    """The baseline as arrays, or the reason it cannot be analysed (no gold, mixed gold kinds)."""
    if not observations:
        return "no baseline observations"
    golds = {o.item: read_gold(o.construct) for o in observations}
    if any(gold is None for gold in golds.values()):
        return "no gold label recorded with the answers"
    kinds = {gold[0] for gold in golds.values() if gold is not None}
    if len(kinds) != 1:
        return f"mixed kinds of gold {sorted(kinds)}"
    gold_kind = kinds.pop()
    variants: dict[str, dict[str, str]] = {}
    units: dict[tuple[str, float | None, int], dict[str, float]] = {}
    for o in observations:
        levels = variant_levels(o, dimensions)
        variant = "-".join(levels.values())
        variants.setdefault(variant, levels)
        value = math.nan if o.keyed_score is None or not o.is_scored else float(o.keyed_score)
        units.setdefault((o.item, o.temperature, o.run), {})[variant] = value
    samples = sorted({key[0] for key in units})
    # Alphabetical, whatever order the tests ran in (xdist, random order): the table, the tie-break
    # of the best variant (as in phase 2) and which level comes first in an effect follow from it.
    names = sorted(variants)
    keys = sorted(units)
    intervals = [label_set.gold_interval(gold_kind, _gold(golds[key[0]])) for key in keys]
    return Answers(
        samples=samples,
        variants=names,
        variant_levels=[variants[name] for name in names],
        sample_of=np.array([samples.index(key[0]) for key in keys], dtype=np.intp),
        values=np.array([[units[key].get(name, math.nan) for name in names] for key in keys]),
        gold_low=np.array([low for low, _ in intervals]),
        gold_high=np.array([high for _, high in intervals]),
        gold_kind=gold_kind,
        gold_labels=[_gold(golds[key[0]]) for key in keys],
        label_set=label_set,
        dimensions=tuple(dimensions),
    )


def _gold(gold: tuple[str, str] | None) -> str:
    if gold is None:  # answers_table returns early before this can happen
        raise ValueError("no gold")
    return gold[1]
