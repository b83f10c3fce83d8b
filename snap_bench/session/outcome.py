"""At the end of the benchmark run, on the controller: judge the session, keep its history, write analysis.json,
and say what became of each check.

Each (model, metric) judgement is a :class:`CheckOutcome`; the plugin makes each one a test report of its own
(``thresholds[gpt-5.2-icc2_1]``), so the terminal, the JUnit XML and the HTML report all show it, and a failed one
makes the exit status non-zero the ordinary way.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snap_bench.history.address import StoreAddress
from snap_bench.history.database import Store
from snap_bench.history.store import keep_headlines
from snap_bench.judging.checks import CheckRecord
from snap_bench.judging.gate import THRESHOLDS_ONLY, Gate
from snap_bench.judging.judgement import Judgement, judge_session
from snap_bench.judging.outcomes import is_computed
from snap_bench.observations.observation import Observation
from snap_bench.report.analysis_document import analysis_document, write_analysis_document
from snap_bench.report.changes_file import CHANGES_FILE, write_changes
from snap_bench.report.item_changes_file import ITEM_CHANGES_FILE, write_item_changes

if TYPE_CHECKING:
    from snap_bench.analysis.coverage import Coverage
    from snap_bench.analysis.metric_tables import AnalysisSettings
    from snap_bench.instruments.base import Instrument
    from snap_bench.judging.baseline import BaselineSpec
    from snap_bench.judging.verdicts import ThresholdConfig

# The outcomes of a check that was not computed, or could not tell: never a pass (the plugin's report categories).
NOT_JUDGED = "not judged"
NOT_COMPARED = "not compared"
UNDECIDED = "undecided"
NOT_GATED = "ungated"


@dataclass(frozen=True)
class CheckOutcome:
    """One check as the run shows it: passed, failed (and whether that fails the run) or an outcome of its own."""

    name: str
    passed: bool
    message: str
    gated: bool
    record: CheckRecord
    # not judged, not compared, undecided: an outcome of its own, which is never a pass; None for pass or fail
    category: str | None = None

    @property
    def fails_run(self) -> bool:
        return not self.passed and self.gated


def check_outcomes(result: Judgement, gate: Gate) -> Iterator[CheckOutcome]:
    """Every check of ``result`` in the order of its records; ``gate`` says which kinds may fail the run."""
    records = iter(result.checks)
    for verdict in result.verdicts.values():
        for check in verdict.checks:
            record = next(records)
            if not is_computed(check, verdict):
                # Never a pass: an outcome of its own, and the gate is incomplete where it follows thresholds.
                yield CheckOutcome(record.name, True, check.message, gate.thresholds, record, NOT_JUDGED)
            else:
                yield CheckOutcome(record.name, check.passed, check.message, gate.thresholds, record)
    for record in records:
        # A comparison, a drift, an item or a serving check: its record's decision says it all. Not compared, not
        # judged (a serving pair with nothing matched) and undecided are never a pass: outcomes of their own (the
        # gate is incomplete, or could not tell), never a failed test beside an exit status that says so.
        category = {"not compared": NOT_COMPARED, "not judged": NOT_JUDGED, "undecided": UNDECIDED}.get(record.decision)
        passed = record.decision in ("pass", "not compared", "not judged", "undecided")
        yield CheckOutcome(record.name, passed, record.message, record.decision != "ungated", record, category)


def end_session(
    observations: list[Observation],
    instruments: Mapping[str, Instrument],
    settings: AnalysisSettings,
    thresholds: Callable[[str], ThresholdConfig],
    baseline: BaselineSpec | None,
    outputs: SessionOutputs,
    *,
    gate: Gate = THRESHOLDS_ONLY,
    coverage: Mapping[str, Coverage] | None = None,
    models: Sequence[str] = (),
) -> Judgement:
    """Judge, keep the history and write analysis.json; ``gate`` says which kinds of check may fail the run:
    the others are ``ungated``."""
    judged = judge_session(
        observations, instruments, settings, thresholds, baseline, gate=gate, coverage=coverage, models=models
    )
    # One connection for the session's writes; one that cannot be opened fails each later write at once.
    store = Store(outputs.history, session=uuid.uuid4().hex[:12]) if outputs.history is not None else None
    problems: list[str] = []
    try:
        if store is not None:
            problems += _keep_history(store, judged, observations, instruments, outputs.session_meta)
            recorded_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            # each model's headline figures, beside what the instruments keep, with each model's coverage, so
            # that an incomplete session is kept as incomplete
            stored = keep_headlines(store, judged, outputs.session_meta, recorded_at, coverage)
            problems += [stored] if stored else []
    finally:
        if store is not None:
            store.close()
    # An unreachable or unwritable store is one warning line, however many writes it refused.
    result = dataclasses.replace(
        judged,
        json_path=outputs.json_path,
        notes=[*judged.notes, *problems[:1]],
        store_problem=problems[0] if problems else "",
    )
    if result.changes:
        write_changes(outputs.out_dir / CHANGES_FILE, result.changes)
    if result.item_changes:
        write_item_changes(outputs.out_dir / ITEM_CHANGES_FILE, result.item_changes)
    result = dataclasses.replace(
        result, document=analysis_document(result, instruments, outputs.session_meta, coverage)
    )
    write_analysis_document(outputs.json_path, result.document)
    return result


@dataclass(frozen=True)
class SessionOutputs:
    """Where the end of a session writes: analysis.json, the output folder (changes.csv, item_changes.csv), the results
    history, and what the session says of itself."""

    json_path: Path
    out_dir: Path
    session_meta: dict[str, Any]
    history: StoreAddress | None


def _keep_history(
    store: Store,
    result: Judgement,
    observations: list[Observation],
    instruments: Mapping[str, Instrument],
    session_meta: dict[str, Any],
) -> list[str]:
    """Let each instrument append its analyses to the results store (the compass keeps its placements)."""
    problems = []
    # Grouped in one pass: a pass per (model, instrument) made this quadratic in the number of models.
    groups: dict[tuple[str, str], list[Observation]] = {}
    for observation in observations:
        groups.setdefault((observation.model, observation.instrument), []).append(observation)
    for (model, instrument), analysis in result.analyses.items():
        own = groups.get((model, instrument), [])
        problem = instruments[instrument].keep_history(store, analysis, own, session_meta)
        if problem is not None:
            problems.append(problem)
    return problems
