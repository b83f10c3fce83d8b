"""Drift: has the new model's position moved from the baseline's, even where its answers stay consistent?

Per construct (the profile's traits and foundations, the compass's axes, the perturbation's gold classes:
each observation's ``construct``), the mean keyed score of the new model against the baseline's, paired
over the conditions both answered with a score. The construct's items and the design's cells are fixed,
so the difference's interval reads its noise off what varies when a model is asked again: the paired
differences of each cell's runs (snap_bench.stats.stratified_difference: a stratified variance with
Satterthwaite's degrees of freedom; a cell both scored once borrows the noise of its own temperature's
cells, never temperature 0's), clipped to the widest difference the answer scale allows. A temperature
whose few differences all agree (fewer than three) shows nothing of its noise: no interval, so
undecided. A t interval
over the items' means (three items per construct: two degrees of freedom) was too wide for an unchanged
model ever to show it had not moved. Where no cell was asked twice, the conditions of an item at one
temperature stand in for repetitions (then a true effect of prompt counts as noise: wider, never
narrower). It is judged against an equivalence margin (thresholds.yaml ``drift_margin``, scale points):
``no drift`` when the whole 90 % interval lies within +-margin (two one-sided tests at 5 % each:
Schuirmann's equivalence test, so "no drift" is wrongly claimed of a construct moved by the margin at most
5 % of the time), ``drift`` when it lies wholly outside, ``undecided`` otherwise (never a pass, and not a
shown drift: it says how many runs would decide it, snap_bench.judging.deciding). The gate's 95 % interval
failed 7 % of unchanged models on a 12-item questionnaire at the shipped models' noise (bench.drift_items);
the 90 % one fails 2.5 %.

Items that move in opposite directions leave a construct's position where it was; each such item is found
by the item-level test (snap_bench.judging.item_changes).

A change of position is a finding, not always a regression: drift is reported always and fails the run
only when ``--snap-gate`` names it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from statistics import fmean
from typing import Any

from snap_bench.observations.observation import Observation

NO_DRIFT = "no drift"
DRIFT = "drift"
UNDECIDED = "undecided"
# Two one-sided tests at 5 % each (the equivalence test) read off one 90 % interval.
CONFIDENCE = 0.90


@dataclass(frozen=True)
class Drift:
    model: str
    baseline: str
    instrument: str
    construct: str
    new_mean: float
    baseline_mean: float
    difference: float
    ci_low: float | None
    ci_high: float | None
    margin: float | None
    outcome: str
    n_conditions: int
    n_items: int
    message: str
    # For an undecided construct: the runs that would decide it at the observed noise and difference.
    runs_to_decide: int | None = None

    @property
    def moved(self) -> bool:
        """The position was shown to have moved past the margin."""
        return self.outcome == DRIFT

    @property
    def undecided(self) -> bool:
        """Neither equivalence nor a move past the margin was shown: never a pass."""
        return self.outcome == UNDECIDED

    @property
    def name(self) -> str:
        return f"{self.model}-vs-{self.baseline}-{self.instrument}-drift[{self.construct}]"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def position_drift(
    observations: Sequence[Observation],
    baseline_model: str,
    margins: Mapping[str, float | None],
    ranges: Mapping[str, tuple[float, float] | None] | None = None,
) -> list[Drift]:
    """Every (new model, instrument, construct) against the baseline's position; ``margins`` per instrument,
    ``ranges`` the lowest and highest keyed score of each instrument's answers (to bound the interval)."""
    baseline = {
        (o.instrument, o.condition_id): o
        for o in observations
        if o.model == baseline_model and o.keyed_score is not None
    }
    pairs: dict[tuple[str, str, str], list[Pair]] = defaultdict(list)
    for new in observations:
        if new.model == baseline_model or new.keyed_score is None or new.construct is None:
            continue
        old = baseline.get((new.instrument, new.condition_id))
        if old is not None and old.keyed_score is not None:
            pairs[(new.model, new.instrument, new.construct)].append(
                Pair(new.item, new.cell, _temperature(new), new.keyed_score, old.keyed_score)
            )
    bounds = {instrument: _span(scale) for instrument, scale in (ranges or {}).items()}
    return [
        _drift(model, baseline_model, instrument, construct, rows, margins.get(instrument), bounds.get(instrument))
        for (model, instrument, construct), rows in sorted(pairs.items())
    ]


@dataclass(frozen=True)
class Pair:
    """One condition both answered: where it sits in the design, and both keyed scores."""

    item: str
    cell: str
    temperature: str
    new: float
    old: float


def _drift(
    model: str,
    baseline: str,
    instrument: str,
    construct: str,
    rows: list[Pair],
    margin: float | None,
    bound: float | None,
) -> Drift:
    difference = fmean(row.new - row.old for row in rows)
    low, high = _interval(rows, bound)
    outcome = _outcome(low, high, margin)
    advice, needed = "", None
    if outcome == UNDECIDED:
        if low is None or high is None:
            advice = "; no interval: no cell was asked twice (--snap-runs=2 or more decides it)"
        elif margin is None:
            advice = "; add drift_margin to thresholds.yaml to decide it"
        else:
            from snap_bench.judging.deciding import runs_to_decide

            runs = max(1, max(Counter(row.cell for row in rows).values()))
            deciding = runs_to_decide(difference, low, high, margin, runs=runs, equivalence=True)
            advice, needed = f"; {deciding.advice}", deciding.runs
    new_mean, old_mean = fmean(row.new for row in rows), fmean(row.old for row in rows)
    n_items = len({row.item for row in rows})
    interval = "no interval" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"
    margin_text = "no margin: add drift_margin to thresholds.yaml" if margin is None else f"margin +-{margin:g}"
    message = (
        f"{outcome}: {model} vs {baseline} {instrument} {construct}: mean {new_mean:.3f} vs {old_mean:.3f}, "
        f"difference {difference:+.3f} {interval}, {margin_text}; {len(rows)} conditions on {n_items} items{advice}"
    )
    return Drift(
        model=model,
        baseline=baseline,
        instrument=instrument,
        construct=construct,
        new_mean=new_mean,
        baseline_mean=old_mean,
        difference=difference,
        ci_low=low,
        ci_high=high,
        margin=margin,
        outcome=outcome,
        n_conditions=len(rows),
        n_items=n_items,
        message=message,
        runs_to_decide=needed,
    )


def _interval(rows: list[Pair], bound: float | None) -> tuple[float | None, float | None]:
    """The stratified interval over the cells' runs; where no cell was asked twice, an item's conditions
    at one temperature are the repetitions, then an item's conditions; with none of those, no interval.
    The strata are the temperatures (a cell asked once borrows the noise of its own temperature's cells),
    but for an item's conditions, which span them."""
    from snap_bench.stats.stratified_difference import (  # scipy: session end only
        NoiseUnreadable,
        stratified_mean_difference_ci,
    )

    for key, by_temperature in ((_by_cell, True), (_by_item_and_temperature, True), (_by_item, False)):
        groups: dict[tuple[str, ...], list[float]] = defaultdict(list)
        temperatures: dict[tuple[str, ...], str] = {}
        for row in rows:
            groups[key(row)].append(row.new - row.old)
            temperatures[key(row)] = row.temperature if by_temperature else ""
        if any(len(values) > 1 for values in groups.values()):
            try:
                interval = stratified_mean_difference_ci(
                    list(groups.values()),
                    strata=[temperatures[group] for group in groups],
                    confidence=CONFIDENCE,
                    bound=bound,
                )
            except NoiseUnreadable:  # a temperature's few answers agree: no sign of how noisy they are
                return None, None
            return interval.low, interval.high
    if len({row.new - row.old for row in rows}) == 1:  # one difference throughout: nothing varies
        only = rows[0].new - rows[0].old
        return only, only
    return None, None


def _by_cell(row: Pair) -> tuple[str, ...]:
    return (row.cell,)


def _by_item_and_temperature(row: Pair) -> tuple[str, ...]:
    return (row.item, row.temperature)


def _by_item(row: Pair) -> tuple[str, ...]:
    return (row.item,)


def _temperature(observation: Observation) -> str:
    return observation.factors.get("temperature", str(observation.temperature))


def _span(scale: tuple[float, float] | None) -> float | None:
    """The widest possible difference of two keyed scores (high - low), None where unknown or degenerate."""
    if scale is None or not scale[1] > scale[0]:
        return None
    return scale[1] - scale[0]


def _outcome(low: float | None, high: float | None, margin: float | None) -> str:
    if low is None or high is None or margin is None:
        return UNDECIDED
    if -margin < low and high < margin:
        return NO_DRIFT
    if low > margin or high < -margin:
        return DRIFT
    return UNDECIDED
