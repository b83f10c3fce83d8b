"""What the baseline holds that this run did not measure, and what this run measured that the baseline lacks.

The gate is never green on less than its baseline: every instrument of the baseline that a model of this run
answered none of (not collected, renamed, removed, deselected, not recorded), and every instrument a model
answered that the baseline holds nothing of (new or renamed), is a comparison of its own that could not be
made (``not compared``, metric ``measured``), so it is named wherever the gate's checks are and leaves the gate
incomplete. Baseline rows of an instrument this run does not know are set aside before anything analyses
them: a renamed questionnaire's old rows have no instrument to be read by.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from snap_bench.judging.comparison import Comparison
from snap_bench.judging.outcomes import MEASURED, NOT_COMPARED
from snap_bench.observations.observation import Observation


@dataclass(frozen=True)
class BaselineScope:
    """The observations to judge (the run's, and the baseline's of instruments the run knows), the
    instruments the baseline holds, and one not-compared comparison per gap between the two."""

    observations: tuple[Observation, ...]
    baseline_instruments: frozenset[str]
    gaps: tuple[Comparison, ...]


def scope_baseline(
    observations: Sequence[Observation],
    baseline_model: str,
    saved_instruments: Collection[str] | None,
    known_instruments: Collection[str],
    new_models: Sequence[str],
) -> BaselineScope:
    """``observations`` holds the run's and the baseline's rows (``baseline_model``'s); ``saved_instruments``
    the instruments of a saved analysis.json (None for per-condition baselines); ``known_instruments`` the
    instruments this run can read; ``new_models`` the models judged against the baseline."""
    baseline_rows = [o for o in observations if o.model == baseline_model]
    held = (
        frozenset(saved_instruments)
        if saved_instruments is not None
        else frozenset(o.instrument for o in baseline_rows)
    )
    measured: dict[str, set[str]] = {model: set() for model in new_models}
    for observation in observations:
        if observation.model != baseline_model:
            measured.setdefault(observation.model, set()).add(observation.instrument)
    run_instruments = set().union(*measured.values()) if measured else set()
    gaps = []
    for model in sorted(measured):
        for instrument in sorted(held - measured[model]):
            known = (
                ""
                if instrument in known_instruments
                else f" (this run knows no instrument {instrument!r}: renamed or removed?)"
            )
            reason = (
                f"the baseline holds {instrument}, and {model} answered none of it in this run{known}: not "
                "collected, deselected, renamed or not recorded"
            )
            gaps.append(_gap(model, baseline_model, instrument, reason))
        for instrument in sorted(measured[model] - held):
            reason = (
                f"the baseline holds no answer of {instrument} (a new or renamed instrument): nothing to compare with"
            )
            gaps.append(_gap(model, baseline_model, instrument, reason))
    kept = tuple(
        o
        for o in observations
        if o.model != baseline_model or (o.instrument in known_instruments and o.instrument in run_instruments)
    )
    return BaselineScope(kept, held, tuple(gaps))


def _gap(model: str, baseline: str, instrument: str, reason: str) -> Comparison:
    return Comparison(
        model=model,
        baseline=baseline,
        instrument=instrument,
        metric=MEASURED,
        new_value=None,
        baseline_value=None,
        difference=None,
        ci_low=None,
        ci_high=None,
        margin=None,
        better="higher",
        paired=False,
        n=0,
        regressed=False,
        message=f"{NOT_COMPARED}: {reason}; {model} vs {baseline} {instrument}",
        outcome=NOT_COMPARED,
        reason=reason,
        unit="instrument",
    )
