"""At the end of the benchmark run, on the controller: judge the session, keep its history, report each
check as a test, and write analysis.json.

Each (model, metric) judgement becomes a test report of its own (``thresholds[gpt-5.2-icc2_1]``),
sent through ``pytest_runtest_logreport`` like any test's, so the terminal, the JUnit XML and the
HTML report all show it, and a failed one makes the exit status non-zero the ordinary way.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from snap_bench.history.address import StoreAddress
from snap_bench.history.database import Store
from snap_bench.history.store import keep_headlines
from snap_bench.judging.checks import CheckRecord
from snap_bench.judging.gate import THRESHOLDS_ONLY, Gate
from snap_bench.judging.judgement import Judgement, judge_session
from snap_bench.judging.outcomes import is_computed
from snap_bench.observations.observation import Observation
from snap_bench.plugin.ledger import CHECKS_LOCATION
from snap_bench.plugin.reporting import CHECK_CATEGORY_ATTRIBUTE, NOT_COMPARED, NOT_GATED, NOT_JUDGED, UNDECIDED
from snap_bench.report.analysis_document import analysis_document, write_analysis_document
from snap_bench.report.changes_file import CHANGES_FILE, write_changes
from snap_bench.report.item_changes_file import ITEM_CHANGES_FILE, write_item_changes

if TYPE_CHECKING:
    from snap_bench.analysis.coverage import Coverage
    from snap_bench.analysis.metric_tables import AnalysisSettings
    from snap_bench.design.models import ModelSpec
    from snap_bench.instruments.base import Instrument
    from snap_bench.judging.baseline import BaselineSpec
    from snap_bench.judging.verdicts import ThresholdConfig
    from snap_bench.plugin.session_options import SessionOptions


class EndingSession(Protocol):
    """What judging at the end of a session reads of it (the plugin's session provides it)."""

    config: pytest.Config
    options: SessionOptions
    models: list[ModelSpec]
    baseline: BaselineSpec | None

    @property
    def observations(self) -> list[Observation]: ...

    @property
    def instruments(self) -> dict[str, Instrument]: ...

    def thresholds(self, instrument: str) -> ThresholdConfig: ...

    def session_meta(self) -> dict[str, Any]: ...

    def coverage(self) -> dict[str, Coverage]: ...


def judge_at_end(ending: EndingSession, session: pytest.Session) -> Judgement:
    """The session's observations (the baseline's beside them) judged, the checks emitted, the outputs written."""
    from snap_bench.analysis.metric_tables import AnalysisSettings  # numpy, scipy, pandas: the controller only

    options = ending.options
    settings = AnalysisSettings(n_resamples=options.resamples, seed=options.seed)
    baseline_rows = list(ending.baseline.observations) if ending.baseline is not None else []
    outputs = SessionOutputs(options.json_path, options.out_dir, ending.session_meta(), options.history)
    return end_session(
        ending.config,
        [*ending.observations, *baseline_rows],
        ending.instruments,
        settings,
        ending.thresholds,
        ending.baseline,
        outputs,
        gate=options.gate,
        session=session,
        models=[model.name for model in ending.models],
        coverage=ending.coverage(),
    )


def end_session(
    config: pytest.Config,
    observations: list[Observation],
    instruments: Mapping[str, Instrument],
    settings: AnalysisSettings,
    thresholds: Callable[[str], ThresholdConfig],
    baseline: BaselineSpec | None,
    outputs: SessionOutputs,
    *,
    gate: Gate = THRESHOLDS_ONLY,
    session: pytest.Session | None = None,
    coverage: Mapping[str, Coverage] | None = None,
    models: Sequence[str] = (),
) -> Judgement:
    """Judge, keep the history, emit every check as a test outcome and write analysis.json; ``gate``
    says which kinds of check may fail the run: the others are ``ungated``."""
    judged = judge_session(
        observations, instruments, settings, thresholds, baseline, gate=gate, coverage=coverage, models=models
    )
    # One connection for the session's writes; one that cannot be opened fails each later write at once.
    store = Store(outputs.history, session=uuid.uuid4().hex[:12]) if outputs.history is not None else None
    problems: list[str] = []
    try:
        if store is not None:
            problems += _keep_history(store, judged, observations, instruments, outputs.session_meta)
        _emit_checks(config, judged, gate, session)
        if store is not None:  # each model's headline figures, beside what the instruments keep
            recorded_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            # with each model's coverage, so that an incomplete session is kept as incomplete
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


def _emit_checks(config: pytest.Config, result: Judgement, gate: Gate, session: pytest.Session | None) -> None:
    if session is not None:
        # The checks are outcomes the progress counter did not know of at collection: count them in,
        # so that it ends at 100 %.
        session.testscollected += len(result.checks)
    records = iter(result.checks)
    for verdict in result.verdicts.values():
        for check in verdict.checks:
            record = next(records)
            if not is_computed(check, verdict):
                # Never a pass: an outcome of its own, and the gate is incomplete where it follows thresholds.
                _emit(config, record.name, True, check.message, gate.thresholds, record, category=NOT_JUDGED)
            else:
                _emit(config, record.name, check.passed, check.message, gate.thresholds, record)
    for record in records:
        # A comparison, a drift or an item check: its record's decision says it all. Not compared and
        # undecided are never a pass: outcomes of their own (the gate is incomplete, or could not tell).
        category = {"not compared": NOT_COMPARED, "undecided": UNDECIDED}.get(record.decision)
        passed = record.decision in ("pass", "not compared", "undecided")
        _emit(config, record.name, passed, record.message, record.decision != "ungated", record, category=category)


def _emit(
    config: pytest.Config,
    name: str,
    passed: bool,
    message: str,
    gated: bool,
    record: CheckRecord,
    *,
    category: str | None = None,
) -> None:
    """One check as a test's reports; ``category`` (not judged, not compared) gives its call an outcome of
    its own, which is never a pass."""
    nodeid = f"{CHECKS_LOCATION}::thresholds[{name}]"
    location = (CHECKS_LOCATION, None, f"thresholds[{name}]")
    config.hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    fails_run = not passed and gated
    properties: list[tuple[str, object]] = [("threshold", message), *record.properties()]
    # A check that was not computed is skipped (JUnit's <skipped>, pytest-html's Skipped): never a pass.
    call = "skipped" if category is not None else "failed" if fails_run else "passed"
    phases = {"setup": "passed", "call": call, "teardown": "passed"}
    # Setup and teardown as well as the call, as a test's are: pytest-html writes a row on the teardown.
    for when, outcome in phases.items():
        longrepr: Any = None
        if when == "call" and category is not None:
            longrepr = (CHECKS_LOCATION, 0, message)
        elif when == "call" and fails_run:
            longrepr = message
        report = pytest.TestReport(
            nodeid=nodeid,
            location=location,
            keywords={"thresholds": 1},
            outcome=outcome,  # type: ignore[arg-type]
            longrepr=longrepr,
            when=when,  # type: ignore[arg-type]
            sections=[("snap-bench threshold", message)] if when == "call" and call == "passed" else [],
            duration=0.0,
            user_properties=properties,  # JUnit XML writes them from the teardown report
        )
        if when == "call" and category is not None:
            setattr(report, CHECK_CATEGORY_ATTRIBUTE, category)
        elif when == "call" and not passed and not gated:
            setattr(report, CHECK_CATEGORY_ATTRIBUTE, NOT_GATED)
        config.hook.pytest_runtest_logreport(report=report)
    config.hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
