"""Drift: has the new model's position moved from the baseline's, even where its answers stay consistent?

Per construct (the profile's traits and foundations, the compass's axes, the perturbation's gold classes:
each observation's ``construct``), the mean keyed score of the new model against the baseline's, paired
over the conditions both answered with a score. The difference's interval treats the items as the units
(each item's mean paired difference, a t interval on items - 1 degrees of freedom), since conditions of one
item move together; with a single item, on its conditions. It is judged against an equivalence margin
(thresholds.yaml ``drift_margin``, scale points): ``no drift`` when the whole interval lies within
+-margin, ``drift`` when it lies wholly outside, ``inconclusive`` otherwise (two one-sided tests read off
one 90 % interval would be the textbook equivalence test; the gate's 95 % interval is kept so that drift
and non-inferiority read alike).

A change of position is a finding, not always a regression: drift is reported always and fails the run
only when ``--snap-gate`` names it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from statistics import fmean
from typing import Any

from snap_bench.observations.observation import Observation

NO_DRIFT = "no drift"
DRIFT = "drift"
INCONCLUSIVE = "inconclusive"
CONFIDENCE = 0.95


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

    @property
    def moved(self) -> bool:
        """Equivalence to the baseline's position was not shown (drift, or inconclusive)."""
        return self.outcome != NO_DRIFT

    @property
    def name(self) -> str:
        return f"{self.model}-vs-{self.baseline}-{self.instrument}-drift[{self.construct}]"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def position_drift(
    observations: Sequence[Observation], baseline_model: str, margins: Mapping[str, float | None]
) -> list[Drift]:
    """Every (new model, instrument, construct) against the baseline's position; ``margins`` per instrument."""
    baseline = {
        (o.instrument, o.condition_id): o
        for o in observations
        if o.model == baseline_model and o.keyed_score is not None
    }
    pairs: dict[tuple[str, str, str], list[tuple[str, float, float]]] = defaultdict(list)
    for new in observations:
        if new.model == baseline_model or new.keyed_score is None or new.construct is None:
            continue
        old = baseline.get((new.instrument, new.condition_id))
        if old is not None and old.keyed_score is not None:
            pairs[(new.model, new.instrument, new.construct)].append((new.item, new.keyed_score, old.keyed_score))
    return [
        _drift(model, baseline_model, instrument, construct, rows, margins.get(instrument))
        for (model, instrument, construct), rows in sorted(pairs.items())
    ]


def _drift(
    model: str,
    baseline: str,
    instrument: str,
    construct: str,
    rows: list[tuple[str, float, float]],
    margin: float | None,
) -> Drift:
    by_item: dict[str, list[float]] = defaultdict(list)
    for item, new, old in rows:
        by_item[item].append(new - old)
    units = [fmean(values) for values in by_item.values()] if len(by_item) > 1 else [new - old for _, new, old in rows]
    difference = fmean(units)
    low, high = _t_interval(units)
    outcome = _outcome(low, high, margin)
    new_mean, old_mean = fmean(new for _, new, _ in rows), fmean(old for _, _, old in rows)
    interval = "no interval" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"
    margin_text = "no margin: add drift_margin to thresholds.yaml" if margin is None else f"margin +-{margin:g}"
    message = (
        f"{outcome}: {model} vs {baseline} {instrument} {construct}: mean {new_mean:.3f} vs {old_mean:.3f}, "
        f"difference {difference:+.3f} {interval}, {margin_text}; {len(rows)} conditions on {len(by_item)} items"
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
        n_items=len(by_item),
        message=message,
    )


def _t_interval(units: list[float]) -> tuple[float | None, float | None]:
    """The mean's t interval on len(units) - 1 degrees of freedom: the delete-one jackknife of a mean is
    exactly s / sqrt(n) (stats.paired.jackknife_ci, tested so)."""
    if len(units) < 2:
        return None, None
    from snap_bench.stats.paired import jackknife_ci  # numpy and scipy: the controller only, at session end

    total = sum(units)
    interval = jackknife_ci(fmean(units), [(total - unit) / (len(units) - 1) for unit in units], CONFIDENCE)
    return interval.low, interval.high


def _outcome(low: float | None, high: float | None, margin: float | None) -> str:
    if low is None or high is None or margin is None:
        return INCONCLUSIVE
    if -margin < low and high < margin:
        return NO_DRIFT
    if low > margin or high < -margin:
        return DRIFT
    return INCONCLUSIVE
