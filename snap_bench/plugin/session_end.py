"""At the end of the benchmark run, on the controller: analyse, judge, and report the judgements as tests.

Each (model, metric) judgement becomes a test report of its own (``thresholds[gpt-5.2-icc2_1]``),
sent through ``pytest_runtest_logreport`` like any test's, so the terminal, the JUnit XML and the
HTML report all show it, and a failed one makes the exit status non-zero the ordinary way.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from snap_bench.analysis.coverage import NOT_JUDGED, Coverage, judge_coverage
from snap_bench.history.store import keep_headlines
from snap_bench.judging.checks import CheckRecord, comparison_record, threshold_record
from snap_bench.judging.verdicts import to_json
from snap_bench.observations.logprobs import logprob_summaries
from snap_bench.observations.observation import Observation
from snap_bench.plugin.outcomes import CHECK_CATEGORY_ATTRIBUTE, NOT_COMPARED, NOT_GATED

if TYPE_CHECKING:
    from snap_bench.instruments import Instrument

CHECKS_LOCATION = "snap-bench"


@dataclass
class Judgement:
    """What the analysis and the judgement produced, for the summary, the report and analysis.json."""

    analyses: dict[tuple[str, str], Any] = field(default_factory=dict)
    verdicts: dict[tuple[str, str], Any] = field(default_factory=dict)
    baseline: list[Any] = field(default_factory=list)
    json_path: Path | None = None
    document: dict[str, Any] = field(default_factory=dict)
    # Problems the session should hear of that cost no answer (e.g. the results store was not written).
    notes: list[str] = field(default_factory=list)
    failed_thresholds: list[str] = field(default_factory=list)
    failed_comparisons: list[str] = field(default_factory=list)
    # Comparisons the gate could not make: it is incomplete (never a pass).
    not_compared: list[str] = field(default_factory=list)
    # (model, instrument) -> how sure the answers were, where the endpoint gave log-probabilities.
    logprobs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # Every check with its figures, for the JUnit properties and the report's table of checks.
    checks: list[CheckRecord] = field(default_factory=list)


def run_gate(
    config: pytest.Config,
    observations: list[Observation],
    instruments: Mapping[str, Instrument],
    settings: Any,
    thresholds: Any,
    baseline: Any | None,
    json_path: Path,
    session_meta: dict[str, Any],
    history_path: Path | None = None,
    *,
    gated: tuple[bool, bool] = (True, True),
    session: pytest.Session | None = None,
    coverage: dict[str, Coverage] | None = None,
) -> Judgement:
    """Analyse, judge and emit every check as a test outcome; ``gated`` says which kinds (thresholds,
    baseline comparisons) may fail the run: the others are reported as ``ungated``."""
    # Imported here: pandas and the stats are needed on the controller at the end, never in workers.
    from snap_bench.analysis.metric_tables import analyse
    from snap_bench.judging.comparison import compare_with_baseline
    from snap_bench.judging.verdicts import judge, rank

    result = Judgement(json_path=json_path)
    result.analyses = analyse(observations, instruments, settings)
    result.logprobs = logprob_summaries(observations)
    per_instrument: dict[str, list[Any]] = {}
    for key, analysis in result.analyses.items():
        if baseline is not None and analysis.model == baseline.model:
            continue
        # A model that did not cover its design is INCOMPLETE, its checks not judged (snap_bench.analysis.coverage).
        verdict = judge_coverage(judge(analysis, thresholds(analysis.instrument)), (coverage or {}).get(analysis.model))
        result.verdicts[key] = verdict
        per_instrument.setdefault(analysis.instrument, []).append(verdict)
    for verdicts in per_instrument.values():
        rank(verdicts)
    if history_path is not None:
        _keep_history(history_path, result, observations, instruments, session_meta)
    if baseline is not None:
        result.baseline = compare_with_baseline(observations, baseline, instruments, settings, thresholds)

    gate_thresholds, gate_baseline = gated
    if session is not None:
        # The checks are outcomes the progress counter did not know of at collection: count them in,
        # so that it ends at 100 %.
        checks = sum(len(verdict.checks) for verdict in result.verdicts.values()) + len(result.baseline)
        session.testscollected += checks
    for (_, instrument), verdict in result.verdicts.items():
        for check in verdict.checks:
            name = check_name(verdict.model, instrument, check.metric)
            result.checks.append(threshold_record(name, instrument, check, gate_thresholds))
            judged = check.status != NOT_JUDGED
            _emit(config, name, check.passed, check.message, gate_thresholds, result.checks[-1], judged=judged)
            if not check.passed:
                result.failed_thresholds.append(name)
    for comparison in result.baseline:
        name = f"{comparison.model}-vs-{comparison.baseline}-{comparison.instrument}-{comparison.metric}"
        result.checks.append(comparison_record(name, comparison, gate_baseline))
        if comparison.not_compared:
            # Never a pass: an outcome of its own, and the gate is incomplete.
            _emit(config, name, True, comparison.message, gate_baseline, result.checks[-1], category=NOT_COMPARED)
            result.not_compared.append(name)
            continue
        _emit(config, name, not comparison.regressed, comparison.message, gate_baseline, result.checks[-1])
        if comparison.regressed:
            result.failed_comparisons.append(name)

    if history_path is not None:  # each model's headline figures, beside what the instruments keep
        stored = keep_headlines(
            history_path, result, session_meta, dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        )
        result.notes += [stored] if stored else []

    # Every instrument alike: analysis.json keeps each under "instruments", with its models.
    document: dict[str, Any] = {
        "session": session_meta,
        "instruments": {
            name: {"title": instruments[name].title, "models": _instrument_models(result, name, coverage)}
            for name in sorted({instrument for _, instrument in result.analyses})
        },
        "baseline": [comparison.to_json() for comparison in result.baseline],
        "coverage": {model: entry.to_json() for model, entry in sorted((coverage or {}).items())},
    }
    result.document = document
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(document, indent=2, allow_nan=False, default=_plain) + "\n", encoding="utf-8")
    return result


def _keep_history(
    path: Path,
    result: Judgement,
    observations: list[Observation],
    instruments: Mapping[str, Instrument],
    session_meta: dict[str, Any],
) -> None:
    """Let each instrument append its analyses to its results store (the compass keeps its placements)."""
    for (model, instrument), analysis in result.analyses.items():
        own = [o for o in observations if o.model == model and o.instrument == instrument]
        problem = instruments[instrument].keep_history(path, analysis, own, session_meta)
        if problem is not None:
            result.notes.append(problem)


def check_name(model: str, instrument: str, metric: str) -> str:
    """``gpt-5.2-profile-icc2_1``: every instrument's checks are named alike."""
    return f"{model}-{instrument}-{metric}"


def _instrument_models(
    result: Judgement, instrument: str, coverage: dict[str, Coverage] | None = None
) -> dict[str, Any]:
    """analysis.json's per-model entries of one instrument (a baseline model carries no verdict)."""
    entries: dict[str, Any] = {}
    for key, analysis in result.analyses.items():
        if key[1] != instrument:
            continue
        if key in result.verdicts:
            entries[analysis.model] = {"instrument": instrument, **to_json(result.verdicts[key], analysis)}
            if key in result.logprobs:
                entries[analysis.model]["logprobs"] = result.logprobs[key]
            if coverage and analysis.model in coverage:
                entries[analysis.model]["coverage"] = coverage[analysis.model].to_json()
        else:
            entries[analysis.model] = {
                "instrument": instrument,
                "verdict": None,
                "role": "baseline",
                "metrics": {n: m.to_dict() for n, m in analysis.metrics.items()},
            }
    return entries


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _emit(
    config: pytest.Config,
    name: str,
    passed: bool,
    message: str,
    gated: bool,
    record: CheckRecord,
    *,
    judged: bool = True,
    category: str | None = None,
) -> None:
    """One check as a test's reports; ``category`` (not compared) gives its call an outcome of its own."""
    nodeid = f"{CHECKS_LOCATION}::thresholds[{name}]"
    location = (CHECKS_LOCATION, None, f"thresholds[{name}]")
    config.hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    fails_run = not passed and gated
    properties: list[tuple[str, object]] = [("threshold", message), *record.properties()]
    # A model that did not cover its design: the check is skipped, saying why.
    call = "skipped" if not judged else "failed" if fails_run else "passed"
    phases = {"setup": "passed", "call": call, "teardown": "passed"}
    # Setup and teardown as well as the call, as a test's are: pytest-html writes a row on the teardown.
    for when, outcome in phases.items():
        longrepr: Any = None
        if when == "call" and not judged:
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
            sections=[("snap-bench threshold", message)] if when == "call" and not fails_run else [],
            duration=0.0,
            user_properties=properties,  # JUnit XML writes them from the teardown report
        )
        if when == "call" and category is not None:
            setattr(report, CHECK_CATEGORY_ATTRIBUTE, category)
        elif when == "call" and not passed and not gated:
            setattr(report, CHECK_CATEGORY_ATTRIBUTE, NOT_GATED)
        config.hook.pytest_runtest_logreport(report=report)
    config.hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
