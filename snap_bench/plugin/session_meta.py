"""What a session says of itself in session.json and analysis.json's ``session``: its models and design,
coverage, settings, provenance, spend, the endpoints' catalogue entries, who served, and its notices."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from snap_bench.analysis.coverage import Coverage
from snap_bench.asking.batch.step import BatchOutcome
from snap_bench.asking.model_facts import ModelFacts, notices
from snap_bench.design.models import ModelSpec
from snap_bench.design.temperatures import DEFAULT
from snap_bench.history.store import provenance
from snap_bench.instruments import INSTRUMENT_FILE_KEYS
from snap_bench.observations.observation import Observation
from snap_bench.observations.spend import serving_by_model, serving_notices, spend_by_model, with_batch_spend
from snap_bench.plugin.ledger import ConditionLedger
from snap_bench.plugin.session_options import SessionOptions


def session_meta(
    options: SessionOptions,
    models: Sequence[ModelSpec],
    instrument_versions: Mapping[str, str],
    ledger: ConditionLedger,
    coverage: Mapping[str, Coverage],
    facts: Mapping[str, ModelFacts],
    batch: BatchOutcome,
) -> dict[str, Any]:
    observations = ledger.observations
    return {
        "models": [model.name for model in models],
        "instruments": dict(instrument_versions),
        "record_mode": options.record_mode.value if options.record_mode else "auto",
        "observations": len(observations),
        "missing_reports": sorted(ledger.missing_reports()),
        "coverage": {model: entry.to_json() for model, entry in coverage.items()},
        "baseline": options.baseline,
        "judge": options.judge or "thresholds.yaml",
        "resamples": options.resamples,
        "seed": options.seed,
        "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        **provenance(options.config, options.rootdir),
        "spend": with_batch_spend(spend_by_model(observations), batch.report.spend),
        "endpoints": {name: entry.to_json() for name, entry in sorted(facts.items()) if entry.source},
        "notices": [*batch.notices, *session_notices(options, facts, observations)],
        "serving": serving_by_model(observations),
    }


def session_notices(
    options: SessionOptions, facts: Mapping[str, ModelFacts], observations: Sequence[Observation]
) -> list[str]:
    """What the session says once about how it asked (a temperature left to the provider, several providers,
    cache hits, a catalogue that could not be read)."""
    return notices(facts, options.temperatures == [DEFAULT]) + serving_notices(observations)


def left_out_notices(not_asked: Mapping[str, str], other_files: Sequence[Path]) -> list[str]:
    """What the run's paths hold and the run does not measure, said once: instruments the selection left out,
    and YAML files that are no instrument file."""
    keys = ", ".join(INSTRUMENT_FILE_KEYS)
    files = [f"{path}: not an instrument file, so not run (it starts with none of: {keys})" for path in other_files]
    return [*not_asked.values(), *files]
