"""How often two servings of one model answer a condition differently, beyond how often one serving answers it
differently when asked again: the *excess flip rate* of a pair of levels, with a 95 % interval.

A model asked at a temperature above 0 answers a condition differently run to run, so two providers (or two
efforts) of the same model differ on many conditions even where they serve the same weights. The between-level
flip rate counts the matched conditions (same condition id and run, both scored) whose answers differ between
levels a and b; the within-level flip rate counts the pairs of runs of one cell whose answers differ, within a
and within b, and averages the two. Under "the levels serve the same answerer" both estimate the same
probability (two independent draws of one cell's answer differ), so their difference, the excess, is about 0;
a level that moves answers adds its moves to the between rate only.

The interval resamples items (a cluster bootstrap: an item's conditions and runs stay together, since they share
the item's wording and answer distribution), seeded, so a replay gives the same interval. With one run no cell was
asked twice and the within-level rate is unknown; the between rate is then an upper bound of the excess (the
within rate is never negative), and its interval is what the check reads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

from snap_bench.observations.observation import Observation

CONFIDENCE = 0.95
RESAMPLES = 2000
# Fixed, so a replay of the same recordings gives the same interval.
SEED = 20260548
# What the interval is of: the excess (both levels asked twice somewhere) or, with one run, the raw between rate.
EXCESS, BETWEEN = "excess", "between"
# Per item: between flips, matched conditions, within-a flips, within-a run pairs, within-b flips, within-b pairs.
_COLUMNS = 6


@dataclass(frozen=True)
class FlipRate:
    """The flip rates of one pair of levels (a, b) and the interval of the figure the check reads."""

    matched: int  # conditions both levels answered with a score (same condition id and run)
    items: int  # items those conditions belong to (the bootstrap's units)
    runs: int  # the most runs any matched cell was asked in
    between: float | None  # share of the matched conditions answered differently by a and b
    within: float | None  # mean of a's and b's run-to-run flip rates (None: no cell was asked twice in both)
    excess: float | None  # between - within (None without a within rate)
    bounded: str  # EXCESS, or BETWEEN where the within rate is unknown and the between rate bounds the excess
    ci_low: float | None  # the 95 % interval of the ``bounded`` figure (None: fewer than two items, or none matched)
    ci_high: float | None

    @property
    def judged(self) -> float | None:
        """The figure the check reads: the excess, or the between rate that bounds it."""
        return self.excess if self.bounded == EXCESS else self.between

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def flip_rate(
    a: Sequence[Observation], b: Sequence[Observation], *, resamples: int = RESAMPLES, seed: int = SEED
) -> FlipRate:
    """The flip rates of the observations of level ``a`` against those of level ``b`` (one instrument)."""
    counts, runs = _item_counts(a, b)
    totals = [sum(row[column] for row in counts.values()) for column in range(_COLUMNS)]
    flips, matched, a_flips, a_pairs, b_flips, b_pairs = totals
    if not matched:
        return FlipRate(0, 0, 0, None, None, None, BETWEEN, None, None)
    between = flips / matched
    known = bool(a_pairs and b_pairs)
    within = (a_flips / a_pairs + b_flips / b_pairs) / 2 if known else None
    excess = between - within if within is not None else None
    low, high = _interval(list(counts.values()), known, resamples, seed)
    return FlipRate(
        matched=int(matched),
        items=len(counts),
        runs=runs,
        between=between,
        within=within,
        excess=excess,
        bounded=EXCESS if known else BETWEEN,
        ci_low=low,
        ci_high=high,
    )


def _item_counts(a: Sequence[Observation], b: Sequence[Observation]) -> tuple[dict[str, list[int]], int]:
    """Per item of the matched conditions, the six counts; and the most runs a matched cell has."""
    scored_a = {o.condition_id: o for o in a if o.score is not None}
    scored_b = {o.condition_id: o for o in b if o.score is not None}
    counts: dict[str, list[int]] = {}
    for condition in sorted(scored_a.keys() & scored_b.keys()):
        left, right = scored_a[condition], scored_b[condition]
        row = counts.setdefault(left.item, [0] * _COLUMNS)
        row[0] += left.score != right.score
        row[1] += 1
    runs = 0
    for offset, scored in ((2, scored_a), (4, scored_b)):
        cells: dict[tuple[str, str], list[int]] = defaultdict(list)
        for observation in scored.values():
            if observation.item in counts:
                cells[(observation.item, observation.cell)].append(int(observation.score or 0))
        for (item, _), answers in cells.items():
            runs = max(runs, len(answers))
            for first, second in combinations(answers, 2):
                counts[item][offset] += first != second
                counts[item][offset + 1] += 1
    return counts, runs


def _interval(rows: list[list[int]], known: bool, resamples: int, seed: int) -> tuple[float | None, float | None]:
    """The cluster bootstrap's percentile interval over items; None where it cannot be drawn (one item, or a
    rate undefined on too many resamples)."""
    if len(rows) < 2:
        return None, None
    import numpy as np  # the controller, at session end

    from snap_bench.stats.bootstrap import bootstrap_ci
    from snap_bench.stats.errors import UndefinedStatistic

    def statistic(matrix: Any, weights: Any) -> Any:
        sums = weights @ matrix
        with np.errstate(divide="ignore", invalid="ignore"):
            between = sums[:, 0] / sums[:, 1]
            if not known:
                return between
            return between - (sums[:, 2] / sums[:, 3] + sums[:, 4] / sums[:, 5]) / 2

    try:
        result = bootstrap_ci(
            statistic,
            np.asarray(rows, dtype=np.float64),
            n_resamples=resamples,
            confidence=CONFIDENCE,
            seed=seed,
            vectorized=True,
        )
    except UndefinedStatistic:
        return None, None
    return float(result.low), float(result.high)
