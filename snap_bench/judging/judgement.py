"""A session's judgement: every model analysed, judged against its thresholds, ranked and compared with
the baseline, each check kept as one record (nothing here is shown or written)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snap_bench.analysis.coverage import Coverage, judge_coverage
from snap_bench.design.serving import serving_of
from snap_bench.judging.changes import ChangeSummary, changed_conditions
from snap_bench.judging.checks import (
    CheckRecord,
    comparison_record,
    drift_record,
    item_record,
    serving_record,
    threshold_record,
)
from snap_bench.judging.drift import Drift, position_drift
from snap_bench.judging.gate import THRESHOLDS_ONLY, Gate
from snap_bench.judging.item_changes import ItemChange, item_changes
from snap_bench.judging.outcomes import is_computed
from snap_bench.judging.serving_check import FAIL, NOT_JUDGED, UNDECIDED
from snap_bench.observations.logprobs import logprob_summaries
from snap_bench.observations.observation import Observation

if TYPE_CHECKING:
    from typing import Protocol

    from snap_bench.analysis.metric_tables import AnalysisSettings
    from snap_bench.judging.pairing_methods import Compared
    from snap_bench.judging.serving_levels import FactorStudy

    class Judged(Compared, Protocol):
        """What judging asks of an instrument: its analysis and metrics (:class:`Compared`), and the range of its
        keyed scores (for drift, where it has one)."""

        @property
        def keyed_range(self) -> tuple[float, float] | None: ...

    from snap_bench.judging.baseline import BaselineSpec
    from snap_bench.judging.verdicts import ThresholdConfig


@dataclass(frozen=True)
class Judgement:
    """What the analysis and the judgement produced, for the summary, the report and analysis.json: one value,
    made once by :func:`judge_session` and completed once by the end of the session (where analysis.json went,
    what the results store said, the document written); everything shown or written afterwards reads it."""

    analyses: dict[tuple[str, str], Any] = field(default_factory=dict)
    verdicts: dict[tuple[str, str], Any] = field(default_factory=dict)
    baseline: list[Any] = field(default_factory=list)
    json_path: Path | None = None
    document: dict[str, Any] = field(default_factory=dict)
    # Problems the session should hear of that cost no answer (e.g. the results store was not written).
    notes: list[str] = field(default_factory=list)
    # Why the results store could not be written ('' when it was): the report then reads it no more.
    store_problem: str = ""
    failed_thresholds: list[str] = field(default_factory=list)
    failed_comparisons: list[str] = field(default_factory=list)
    # Comparisons that could not be made: the comparison with the baseline is incomplete (never a pass).
    not_compared: list[str] = field(default_factory=list)
    # Threshold checks whose figure could not be computed (undefined, too little of the design): never a pass.
    not_judged: list[str] = field(default_factory=list)
    # (model, instrument) -> how sure the answers were, where the endpoint gave log-probabilities.
    logprobs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # Every check with its figures, for the JUnit properties and the report's table of checks.
    checks: list[CheckRecord] = field(default_factory=list)
    # Against a baseline with per-condition answers: which conditions changed, and whether positions moved.
    changes: list[ChangeSummary] = field(default_factory=list)
    # Per item, whether its answers changed beyond the run-to-run noise (false discovery rate 5 %).
    item_changes: list[ItemChange] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)
    # Drift checks that showed the position moved past the margin (they fail the run only where --snap-gate names
    # drift), and those that could show neither that nor equivalence (undecided: never a pass).
    moved: list[str] = field(default_factory=list)
    drift_undecided: list[str] = field(default_factory=list)
    # Comparisons whose interval straddles the margin: non-inferiority neither shown nor refuted.
    undecided: list[str] = field(default_factory=list)
    # Items whose answers moved beyond the run noise (false discovery rate 5 %), and items not tested.
    changed_items: list[str] = field(default_factory=list)
    untested_items: list[str] = field(default_factory=list)
    # The serving factors (providers, reasoning efforts) of each base model asked through several servings
    # (snap_bench.judging.serving_levels), and their checks whose interval straddles the threshold (never a pass).
    servings: list[FactorStudy] = field(default_factory=list)
    serving_undecided: list[str] = field(default_factory=list)


def check_name(model: str, instrument: str, metric: str) -> str:
    """``gpt-5.2-profile-icc2_1``: every instrument's checks are named alike."""
    return f"{model}-{instrument}-{metric}"


def comparison_name(comparison: Any) -> str:
    return f"{comparison.model}-vs-{comparison.baseline}-{comparison.instrument}-{comparison.metric}"


def judge_session(
    observations: list[Observation],
    instruments: Mapping[str, Judged],
    settings: AnalysisSettings,
    thresholds: Callable[[str], ThresholdConfig],
    baseline: BaselineSpec | None,
    *,
    gate: Gate = THRESHOLDS_ONLY,
    coverage: Mapping[str, Coverage] | None = None,
    models: Sequence[str] = (),
) -> Judgement:
    """Analyse every (model, instrument), judge it, rank each instrument's models and compare with the
    baseline; ``gate`` says which kinds of check may fail the run; ``models``: the run's models (one that
    answered nothing is named against the baseline too)."""
    # Imported here: pandas and the stats are needed on the controller at the end, never in workers.
    from snap_bench.analysis.metric_tables import analyse
    from snap_bench.judging.baseline_scope import scope_baseline
    from snap_bench.judging.comparison import compare_with_baseline
    from snap_bench.judging.verdicts import judge, rank

    scope = None
    if baseline is not None:
        new_models = [m for m in (models or sorted({o.model for o in observations})) if m != baseline.model]
        saved = None if baseline.saved is None else list(baseline.saved)
        scope = scope_baseline(observations, baseline.model, saved, list(instruments), new_models)
        observations = list(scope.observations)
    analyses = analyse(observations, instruments, settings)
    verdicts: dict[tuple[str, str], Any] = {}
    per_instrument: dict[str, list[Any]] = {}
    for key, analysis in analyses.items():
        if baseline is not None and analysis.model == baseline.model:
            continue
        # A model that did not cover its design is INCOMPLETE, its checks not judged (snap_bench.analysis.coverage).
        verdict = judge_coverage(judge(analysis, thresholds(analysis.instrument)), (coverage or {}).get(analysis.model))
        verdicts[key] = verdict
        per_instrument.setdefault(analysis.instrument, []).append(verdict)
    for ranked in per_instrument.values():
        rank(ranked)
    comparisons: list[Any] = []
    changes: list[ChangeSummary] = []
    changed_items: list[ItemChange] = []
    drifts: list[Drift] = []
    if baseline is not None and scope is not None:
        held = scope.baseline_instruments
        compared = [o for o in observations if o.instrument in held]
        comparisons = [*compare_with_baseline(compared, baseline, instruments, settings, thresholds), *scope.gaps]
        if any(o.model == baseline.model for o in observations):  # per-condition answers (not a saved analysis)
            changes = changed_conditions(observations, baseline.model)
            changed_items = item_changes(observations, baseline.model)
            asked = sorted({o.instrument for o in observations})
            margins = {i: thresholds(i).drift_margin for i in asked}
            ranges = {i: instruments[i].keyed_range for i in asked if i in instruments}
            drifts = position_drift(observations, baseline.model, margins, ranges)
    result = Judgement(
        servings=_serving_studies(observations, instruments, thresholds),
        analyses=analyses,
        verdicts=verdicts,
        baseline=comparisons,
        logprobs=logprob_summaries(observations),
        changes=changes,
        item_changes=changed_items,
        drift=drifts,
    )
    _record_checks(result, gate)
    return result


def _serving_studies(
    observations: list[Observation], instruments: Mapping[str, Judged], thresholds: Callable[[str], ThresholdConfig]
) -> list[FactorStudy]:
    """The serving factors' studies, where the session asked a model through several servings (none otherwise:
    the G studies and bootstraps cost nothing for a design without them)."""
    if not any(serving_of(model) is not None for model in {o.model for o in observations}):
        return []
    from snap_bench.judging.serving_levels import serving_studies
    from snap_bench.judging.verdicts import flip_rate_threshold

    asked = sorted({o.instrument for o in observations})
    return serving_studies(
        observations,
        lambda instrument, factor: flip_rate_threshold(thresholds(instrument), factor),
        drift_margins={i: thresholds(i).drift_margin for i in asked},
        ranges={i: instruments[i].keyed_range for i in asked if i in instruments},
        min_coverage={i: thresholds(i).min_coverage for i in asked},
    )


def _record_checks(result: Judgement, gate: Gate) -> None:
    """Each check of the judgement once, in its lists (filled here, before the value leaves judge_session)."""
    for (_, instrument), verdict in result.verdicts.items():
        for check in verdict.checks:
            name = check_name(verdict.model, instrument, check.metric)
            result.checks.append(threshold_record(name, instrument, check, gate.thresholds))
            if not is_computed(check, verdict):
                result.not_judged.append(name)
            elif not check.passed:
                result.failed_thresholds.append(name)
    for comparison in result.baseline:
        name = comparison_name(comparison)
        result.checks.append(comparison_record(name, comparison, gate.baseline))
        if comparison.not_compared:
            result.not_compared.append(name)
        elif comparison.regressed:
            result.failed_comparisons.append(name)
        elif comparison.undecided:
            result.undecided.append(name)
    for drift in result.drift:
        result.checks.append(drift_record(drift, gate.drift))
        if drift.moved:
            result.moved.append(drift.name)
        elif drift.undecided:
            result.drift_undecided.append(drift.name)
    for change in result.item_changes:
        result.checks.append(item_record(change, gate.items))
        if change.q is None:
            result.untested_items.append(change.name)
        elif change.reliable:
            result.changed_items.append(change.name)
    for study in result.servings:
        for check in study.checks:
            # A serving check is judged against a threshold of the instrument's: gated with the thresholds.
            result.checks.append(serving_record(check, gate.thresholds))
            if check.outcome == NOT_JUDGED:
                result.not_judged.append(check.name)
            elif check.outcome == FAIL:
                result.failed_thresholds.append(check.name)
            elif check.outcome == UNDECIDED:
                result.serving_undecided.append(check.name)
