"""How often two servings of one model answer a condition differently, beyond how often one serving answers it
differently when asked again: the *excess flip rate* of a pair of levels, with a 95 % interval.

A model asked at a temperature above 0 answers a condition differently run to run, so two providers (or two
efforts) of the same model differ on many conditions even where they serve the same weights. The between-level
flip rate of a cell both levels answered (an item under one prompt, temperature, ...) is the share of its pairs of
runs, one of each level, whose scored answers differ (every pair, not only runs of the same number: the runs of a
cell are exchangeable, and all pairs halve the estimate's noise); its within-level flip rate is the share of its
pairs of runs whose answers differ within a, and within b, averaged. Both are averaged over the cells both levels
were asked at least twice, each cell weighing alike in both (the rest cannot show their own run noise). Under "the
levels serve the same answerer" both estimate the same probability (two independent draws of one cell's answer
differ), so their difference, the excess, is about 0; a level that moves answers adds its moves to the between
rate only.

The items and the design's cells are fixed (the questionnaire is the questionnaire, as for drift:
snap_bench.stats.stratified_difference): what varies when the levels are asked again is each answer, run to run.
So the interval resamples cells within each stratum of an item at one temperature (a stratified bootstrap; a cell's
runs stay together), never the items themselves, seeded, so a replay gives the same interval. Where an item has one
cell at a temperature (one prompt, one context), a stratum of one cell would show no noise at all: the cells are
then resampled across the items at each temperature. At temperature 0 a
deterministic model's cells agree run to run, and such a stratum adds no noise. With one run no cell was asked
twice and the within-level rate is unknown; the between rate is then an upper bound of the excess (the within
rate is never negative), and its interval is what the check reads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Any

from snap_bench.observations.observation import Observation

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

CONFIDENCE = 0.95
RESAMPLES = 2000
# Fixed, so a replay of the same recordings gives the same interval.
SEED = 20260548
# What the interval is of: the excess (both levels asked twice somewhere) or, with one run, the raw between rate.
EXCESS, BETWEEN = "excess", "between"


@dataclass(frozen=True)
class FlipRate:
    """The flip rates of one pair of levels (a, b) and the interval of the figure the check reads."""

    matched: int  # conditions both levels answered with a score (same condition id and run)
    asked: int  # conditions either level was asked (answered, unscored or refused): what ``matched`` is a share of
    items: int  # items of the cells both levels answered
    runs: int  # the most runs any matched cell was asked in
    between: float | None  # share of the pairs of runs (one of each level, same cell) answered differently
    within: float | None  # mean of a's and b's run-to-run flip rates (None: no cell was asked twice in both)
    excess: float | None  # between - within (None without a within rate)
    bounded: str  # EXCESS, or BETWEEN where the within rate is unknown and the between rate bounds the excess
    ci_low: float | None  # the 95 % interval of the ``bounded`` figure (None: none matched, or undefined)
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
    cells, matched, runs = _cell_counts(a, b)
    asked = len({o.condition_id for o in (*a, *b)})
    if not cells:
        return FlipRate(0, asked, 0, 0, None, None, None, BETWEEN, None, None)
    import numpy as np  # the controller, at session end: never a worker at collection

    rows = np.asarray([counts for _, counts in cells], dtype=np.float64)
    between_cells = rows[:, 0] / rows[:, 1]
    # Where both levels were asked a cell twice, its run-to-run flips are known and the excess is read there, each
    # cell weighing alike: weighting the between rate by its pairs of runs and the within rate by its own would
    # weigh the cells differently in the two wherever runs are unequal (an unscored answer), and bias the excess.
    twice = (rows[:, 3] > 0) & (rows[:, 5] > 0)
    known = bool(twice.any())
    if known:
        kept = np.flatnonzero(twice)
        within_cells = (rows[kept, 2] / rows[kept, 3] + rows[kept, 4] / rows[kept, 5]) / 2
        values = between_cells[kept] - within_cells
        between, within = float(between_cells[kept].mean()), float(within_cells.mean())
        excess: float | None = between - within
    else:
        kept = np.arange(len(cells))
        values = between_cells
        between, within, excess = float(between_cells.mean()), None, None
    strata = [cells[index][0] for index in kept]
    low, high = _interval(values, strata, resamples, seed)
    return FlipRate(
        matched=matched,
        asked=asked,
        items=len({stratum[0] for stratum in strata}),
        runs=runs,
        between=between,
        within=within,
        excess=excess,
        bounded=EXCESS if known else BETWEEN,
        ci_low=low,
        ci_high=high,
    )


def _cell_counts(
    a: Sequence[Observation], b: Sequence[Observation]
) -> tuple[list[tuple[tuple[str, str], list[int]]], int, int]:
    """Per cell both levels scored: its stratum (item, temperature) and the six counts (between flips and pairs,
    within-a flips and pairs, within-b flips and pairs); the conditions both scored (same condition id); and the
    most runs a cell of either level holds."""
    answers: list[dict[tuple[str, str], list[int]]] = []
    strata: dict[tuple[str, str], tuple[str, str]] = {}
    for level in (a, b):
        by_cell: dict[tuple[str, str], list[int]] = defaultdict(list)
        for o in level:
            if o.score is not None:
                by_cell[(o.item, o.cell)].append(o.score)
                strata[(o.item, o.cell)] = (o.item, str(o.temperature))
        answers.append(by_cell)
    left, right = answers
    cells = []
    for cell in sorted(left.keys() & right.keys()):
        x, y = left[cell], right[cell]
        counts = [
            sum(p != q for p in x for q in y),
            len(x) * len(y),
            sum(p != q for p, q in combinations(x, 2)),
            len(x) * (len(x) - 1) // 2,
            sum(p != q for p, q in combinations(y, 2)),
            len(y) * (len(y) - 1) // 2,
        ]
        cells.append((strata[cell], counts))
    scored_a = {o.condition_id for o in a if o.score is not None}
    matched = len(scored_a & {o.condition_id for o in b if o.score is not None})
    runs = max((len(runs) for by_cell in answers for runs in by_cell.values()), default=0)
    return cells, matched, runs


def _interval(
    values: npt.NDArray[np.float64], strata: list[tuple[str, str]], resamples: int, seed: int
) -> tuple[float | None, float | None]:
    """The stratified bootstrap's percentile interval of the cells' mean ``values``: each stratum's cells drawn with
    replacement, as many as it has."""
    import numpy as np

    rng = np.random.default_rng(seed)
    counts = np.zeros((resamples, len(strata)), dtype=np.float64)
    members: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for index, stratum in enumerate(strata):
        members[stratum].append(index)
    if any(len(indices) < 2 for indices in members.values()):
        # An item asked in one cell per temperature (one prompt, one context) shows no spread among its cells: its
        # noise is read across the items at that temperature instead (a wider interval, never a narrower one).
        members = defaultdict(list)
        for index, (_, temperature) in enumerate(strata):
            members[(temperature,)].append(index)
    for indices in members.values():
        counts[:, indices] = rng.multinomial(len(indices), [1 / len(indices)] * len(indices), size=resamples)
    means = counts @ values / counts.sum(axis=1)
    alpha = (1 - CONFIDENCE) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return float(low), float(high)
