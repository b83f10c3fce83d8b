"""What would decide an undecided check: how many runs (or items) the interval needs, at the noise and the
difference observed, to lie wholly on one side of the margin.

An interval whose noise is the models' run-to-run noise narrows as each cell is asked more often: its
half-width goes as one over the square root of the runs. So a half-width ``h`` at ``r`` runs becomes
``h * sqrt(r / r')`` at ``r'`` runs, and the check is decided once that is smaller than the room between the
estimate and the margin (the estimate's distance from the line it must not cross). This is the planning
figure of a non-inferiority or equivalence trial (the sample size at which the observed effect and spread
would give a decision), not a promise: the next runs' estimate moves too, so the figure is a lower bound of
what will be needed about half of the time. Where the estimate itself lies past the margin no number of runs
shows the check passed: more runs would show the change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The most runs a suggestion names (and the gate's planner searches, snap_bench.judging.run_planner): beyond it
# the design, not the runs, is what to change.
MOST_RUNS = 30


@dataclass(frozen=True)
class Deciding:
    """What would decide a check: ``runs`` (None where no number would show it passed) and the words."""

    runs: int | None
    advice: str


def runs_to_decide(
    estimate: float,
    low: float,
    high: float,
    margin: float,
    *,
    runs: int,
    better: str = "higher",
    equivalence: bool = False,
    unit: str = "runs",
) -> Deciding:
    """How many ``unit`` (runs per cell, or items) the check needs at the observed noise and difference.

    ``equivalence``: the interval must lie within +-margin (drift); otherwise above -margin (``better``
    higher) or below +margin (lower): non-inferiority. ``runs``: how many it rests on now."""
    half = (high - low) / 2
    # The distance from the difference to the line its interval must not cross.
    room = margin - abs(estimate) if equivalence else estimate + margin if better == "higher" else margin - estimate
    if room <= 0:
        return Deciding(
            None,
            f"the difference itself lies past the margin, so more {unit} would show the change, not a pass",
        )
    if half <= 0 or runs <= 0:
        return Deciding(None, "it has no spread to narrow")
    needed = max(runs + 1, math.ceil(runs * (half / room) ** 2))
    if needed > MOST_RUNS:
        return Deciding(
            needed,
            f"about {needed} {unit} would decide it at the observed noise and difference: more than a run can "
            f"afford; a wider margin or a design with less noise (temperature 0) decides it",
        )
    option = f" (--snap-runs={needed})" if unit == "runs" else ""
    return Deciding(needed, f"about {needed} {unit} would decide it at the observed noise and difference{option}")
