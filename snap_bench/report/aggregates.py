"""The few figures the charts need from the raw observations, in plain Python.

Means per item and factor level and score counts are one pass over the observations; doing them
without pandas keeps the report from importing it (half a second) for a handful of group means.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from snap_bench.observations.observation import Observation
from snap_bench.report.formatting import ANSWER_CODES

# The default Likert range; a wider range in the data widens the histogram.
LIKERT_LOW, LIKERT_HIGH = 1, 5
MAX_SCORE_POINTS = 11


def by_model(observations: Iterable[Observation]) -> dict[str, list[Observation]]:
    groups: dict[str, list[Observation]] = defaultdict(list)
    for observation in observations:
        groups[observation.model].append(observation)
    return dict(groups)


@dataclass(frozen=True)
class LevelMeans:
    """Mean keyed score per (item, level) of one factor, with the levels in design order."""

    items: list[str]
    levels: list[str]
    means: list[list[float | None]]


def level_means(observations: Sequence[Observation], factor: str) -> LevelMeans | None:
    sums: dict[tuple[str, str], float] = defaultdict(float)
    counts: Counter[tuple[str, str]] = Counter()
    levels: dict[str, float] = {}
    items: set[str] = set()
    for observation in observations:
        level = observation.factors.get(factor)
        if level is None:
            continue
        items.add(observation.item)
        # temperatures read best in numeric order; other factors keep the order the design lists them in
        # (the provider's default, ``tdefault``, after every number)
        order = observation.temperature if observation.temperature is not None else float("inf")
        levels.setdefault(level, order if factor == "temperature" else len(levels))
        if observation.keyed_score is not None:
            sums[observation.item, level] += observation.keyed_score
            counts[observation.item, level] += 1
    if not levels:
        return None
    ordered_levels = sorted(levels, key=lambda level: levels[level])
    ordered_items = sorted(items)
    means: list[list[float | None]] = [
        [sums[item, level] / counts[item, level] if counts[item, level] else None for level in ordered_levels]
        for item in ordered_items
    ]
    return LevelMeans(ordered_items, ordered_levels, means)


@dataclass(frozen=True)
class ScoreCounts:
    scores: list[int]
    raw: list[int]
    keyed: list[int]
    unscored: dict[str, int]
    total: int


def score_counts(observations: Sequence[Observation]) -> ScoreCounts:
    raw = Counter(o.score for o in observations if o.score is not None)
    # keyed scores are floats (reversed items); they are whole points on the scale, so rounding only drops ".0"
    keyed = Counter(round(o.keyed_score) for o in observations if o.keyed_score is not None)
    seen = [*raw, *keyed]
    low = min([LIKERT_LOW, *seen])
    # a wild score (a bug upstream, a hand-edited file) must not stretch the axis to hundreds of bars
    high = min(max([LIKERT_HIGH, *seen]), low + MAX_SCORE_POINTS - 1)
    scores = list(range(low, high + 1))
    unscored = Counter(ANSWER_CODES.get(o.code, f"code {o.code}") for o in observations if o.code is not None)
    ordered = {reason: unscored[reason] for reason in (*ANSWER_CODES.values(), *sorted(unscored)) if unscored[reason]}
    return ScoreCounts(
        scores, [raw[score] for score in scores], [keyed[score] for score in scores], ordered, len(observations)
    )
