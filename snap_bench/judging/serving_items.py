"""Per item and per construct, the levels of a serving factor side by side: how often an item's answers agree
across the levels, and where each level places each construct."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import fmean
from typing import Any

from snap_bench.observations.observation import Observation


@dataclass(frozen=True)
class ItemAgreement:
    """One item across the levels: of the conditions every level scored, the share all levels answered alike; of
    the conditions each pair of levels scored, the share answered differently."""

    item: str
    conditions: int  # conditions every level answered with a score
    agreement: float | None
    flip_rate: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "conditions": self.conditions,
            "agreement": self.agreement,
            "flip_rate": self.flip_rate,
        }


@dataclass(frozen=True)
class LevelPosition:
    """A construct's mean keyed answer at one level (the pairs' ``shifts`` carry the intervals of the differences)."""

    level: str
    construct: str
    mean: float
    n: int

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level, "construct": self.construct, "mean": self.mean, "n": self.n}


def item_agreement(rows: Mapping[str, Sequence[Observation]]) -> list[ItemAgreement]:
    """Per item, across the levels (``rows``: level -> its observations), the agreement and the flip rate."""
    answers: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))  # item -> cond -> level
    for level, observations in rows.items():
        for o in observations:
            if o.score is not None:
                answers[o.item][o.condition_id][level] = o.score
    levels = list(rows)
    result = []
    for item, conditions in sorted(answers.items()):
        complete = [by_level for by_level in conditions.values() if len(by_level) == len(levels)]
        flips = [
            by_level[a] != by_level[b]
            for by_level in conditions.values()
            for a, b in combinations(levels, 2)
            if a in by_level and b in by_level
        ]
        result.append(
            ItemAgreement(
                item=item,
                conditions=len(complete),
                agreement=fmean(len(set(c.values())) == 1 for c in complete) if complete else None,
                flip_rate=fmean(flips) if flips else None,
            )
        )
    return result


def level_positions(rows: Mapping[str, Sequence[Observation]]) -> list[LevelPosition]:
    """Each level's mean keyed answer per construct."""
    result = []
    for level, observations in rows.items():
        by_construct: dict[str, list[float]] = defaultdict(list)
        for o in observations:
            if o.keyed_score is not None and o.construct is not None:
                by_construct[o.construct].append(o.keyed_score)
        result += [LevelPosition(level, c, fmean(v), len(v)) for c, v in sorted(by_construct.items())]
    return result
