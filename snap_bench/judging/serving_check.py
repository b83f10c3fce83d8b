"""The check of one pair of serving levels: is their excess flip rate within the instrument's threshold
(thresholds.yaml ``provider_flip_rate`` / ``effort_flip_rate``)?

PASS when the 95 % interval's upper end is at most the threshold and no item moved, FAIL when its lower end is above
it or an item's answers moved beyond the run noise (the paired exact test with a 5 % false discovery rate over items,
snap_bench.judging.item_changes) or a construct's position moved past its drift margin (snap_bench.judging.drift):
a flip rate within the threshold can hide a move of two items (at temperature 1 a one-point move flips few more
answers than the run noise does), and a gate that passes a model whose answers moved misses the change it exists
for. A flip rate within the threshold beside a construct whose shift straddles its margin is UNDECIDED, as is
anything else (never a pass: it says how many items would decide it), NOT JUDGED when no condition was matched or no
threshold is set (never a pass either), and where a pass would rest on a minority of the conditions the levels were
asked (fewer than the instrument's ``min_coverage`` answered with a score by both, e.g. a provider whose answers were
mostly served by another): agreement on the few conditions both answered shows nothing of the rest. A failure shown
on that minority still stands, as for a baseline comparison. With one run the interval is the between-level flip
rate's, an upper bound of the excess: its upper end at most the threshold still passes, anything else is undecided
until a second run shows the within-level noise (``--snap-runs=2``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from snap_bench.analysis.coverage import THIN_COVERAGE
from snap_bench.design.serving import EFFORT_PREFIX, PROVIDER, SEPARATOR
from snap_bench.judging.serving_flips import BETWEEN, FlipRate

if TYPE_CHECKING:
    from snap_bench.judging.drift import Drift

PASS, FAIL, UNDECIDED, NOT_JUDGED = "pass", "fail", "undecided", "not judged"


@dataclass(frozen=True)
class ServingCheck:
    """One pair's check, named ``BASE-INSTRUMENT-FACTOR_flip_rate[A-vs-B]`` (``...[A-vs-B]@effort-high`` where the
    other factor is varied too: the level it was held at)."""

    name: str
    base: str
    instrument: str
    factor: str
    metric: str  # provider_flip_rate / effort_flip_rate
    level_a: str
    level_b: str
    serving_a: str  # the servings' model names
    serving_b: str
    threshold: float | None
    outcome: str  # PASS / FAIL / UNDECIDED / NOT_JUDGED
    message: str
    flips: FlipRate
    # For an undecided check: the items that would decide it at the observed noise and difference, where a number can.
    items_to_decide: int | None = None

    @property
    def margin(self) -> float | None:
        """How far the interval's upper end lies below the threshold (negative: above it)."""
        if self.threshold is None or self.flips.ci_high is None:
            return None
        return self.threshold - self.flips.ci_high

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "margin": self.margin}


def metric_of(factor: str) -> str:
    """The threshold's (and the check's metric's) name for a factor: ``provider_flip_rate``."""
    return f"{factor}_flip_rate"


def serving_check(
    base: str,
    instrument: str,
    factor: str,
    levels: tuple[str, str],
    servings: tuple[str, str],
    flips: FlipRate,
    threshold: float | None,
    moved_items: tuple[str, ...] = (),
    shifts: Sequence[Drift] = (),
    min_coverage: float = THIN_COVERAGE,
    held: str | None = None,
) -> ServingCheck:
    """Judge one pair's flip rate against ``threshold`` (None: the instrument sets none), the items whose answers
    the pair was shown to move, and its constructs' shifts (level b's position against level a's, those with a
    margin); a pass needs ``min_coverage`` of the conditions asked matched (thresholds.yaml ``min_coverage``)."""
    metric = metric_of(factor)
    name = f"{base}-{instrument}-{metric}[{levels[0]}-vs-{levels[1]}]{_held_suffix(factor, held)}"
    outcome, advice, needed = _decide(flips, threshold, metric)
    moved = [shift.construct for shift in shifts if shift.margin is not None and shift.moved]
    open_ = [shift for shift in shifts if shift.margin is not None and shift.undecided]
    if (moved_items or moved) and outcome != FAIL:
        outcome, needed = FAIL, None
        shown = [*([f"items moved beyond the run noise (FDR 5 %): {', '.join(moved_items)}"] if moved_items else [])]
        shown += [f"constructs moved past their drift margin: {', '.join(moved)}"] if moved else []
        advice = "; " + "; ".join(shown)
    elif open_ and outcome == PASS:
        outcome, needed = UNDECIDED, None
        advice = (
            f"; the flip rate is within it, but {', '.join(s.construct for s in open_)}'s shift straddles its drift "
            f"margin (+-{open_[0].margin:g}): more runs decide it (a position moved without flipping many answers)"
        )
    if outcome == PASS and flips.asked and flips.matched / flips.asked < min_coverage:
        outcome, needed = NOT_JUDGED, None
        advice = (
            f"; only {flips.matched} of {flips.asked} conditions both levels answered with a score ({min_coverage:.0%} "
            "needed): not judged, never a pass on a minority of the design; the unscored answers' codes say why "
            "(an answer served by another provider than the one pinned, an API error)"
        )
    message = (
        f"{outcome}: {base} {instrument} {factor} {levels[0]} vs {levels[1]}: {_figures(flips, threshold)}{advice}"
    )
    return ServingCheck(
        name=name,
        base=base,
        instrument=instrument,
        factor=factor,
        metric=metric,
        level_a=levels[0],
        level_b=levels[1],
        serving_a=servings[0],
        serving_b=servings[1],
        threshold=threshold,
        outcome=outcome,
        message=message,
        flips=flips,
        items_to_decide=needed,
    )


def _held_suffix(factor: str, held: str | None) -> str:
    """The other factor's level the pair was compared at, spelled as in a serving's name (``@effort-high``, ``@groq``):
    with both factors varied, p1 vs p2 is compared at each effort, and each check needs a name of its own."""
    if held is None:
        return ""
    return SEPARATOR + (EFFORT_PREFIX + held if factor == PROVIDER else held.replace("/", "--"))


def _decide(flips: FlipRate, threshold: float | None, metric: str) -> tuple[str, str, int | None]:
    """The outcome, what would decide it (``; ...``) and the items that would, where a number can."""
    if not flips.matched:
        return NOT_JUDGED, "; no condition both levels answered with a score: not judged, never a pass", None
    if threshold is None:
        return NOT_JUDGED, f"; no threshold: add {metric} to the instrument's thresholds.yaml section", None
    low, high, judged = flips.ci_low, flips.ci_high, flips.judged
    if low is None or high is None or judged is None:
        return UNDECIDED, f"; no interval on {flips.items} item(s): more items decide it", None
    if high <= threshold:
        return PASS, "", None
    if flips.bounded == BETWEEN:
        # The within-level noise is unknown: the between rate only bounds the excess from above.
        return UNDECIDED, "; one run shows no run-to-run noise to net out: --snap-runs=2 decides it", None
    if low > threshold:
        return FAIL, "", None
    from snap_bench.judging.deciding import runs_to_decide

    deciding = runs_to_decide(judged, low, high, threshold, runs=flips.items, better="lower", unit="items")
    return UNDECIDED, f"; {deciding.advice} (more runs per condition narrow it too)", deciding.runs


def _figures(flips: FlipRate, threshold: float | None) -> str:
    if not flips.matched:
        return "0 conditions matched"
    rule = "no threshold" if threshold is None else f"threshold {threshold:g}"
    interval = "no interval" if flips.ci_low is None else f"95% [{flips.ci_low:+.3f}, {flips.ci_high:+.3f}]"
    between = f"between-level flip rate {flips.between:.3f}"
    if flips.bounded == BETWEEN:
        figures = f"{between} {interval} (one run: it bounds the excess from above)"
    else:
        figures = f"excess flip rate {flips.excess:+.3f} {interval} ({between}, within-level {flips.within:.3f})"
    return f"{figures}, {rule}; {flips.matched} conditions on {flips.items} items, {flips.runs} run(s)"
