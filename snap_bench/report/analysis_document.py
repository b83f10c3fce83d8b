"""analysis.json: a session's judgement as one document, every instrument alike under ``instruments``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from snap_bench.judging.verdicts import to_json
from snap_bench.wire.atomic import write_atomically

if TYPE_CHECKING:
    from snap_bench.analysis.coverage import Coverage
    from snap_bench.judging.judgement import Judgement


class Titled(Protocol):
    """What analysis.json names of an instrument: its title."""

    @property
    def title(self) -> str: ...


def analysis_document(
    result: Judgement,
    instruments: Mapping[str, Titled],
    session_meta: dict[str, Any],
    coverage: Mapping[str, Coverage] | None = None,
) -> dict[str, Any]:
    document = {
        "session": session_meta,
        "instruments": {
            name: {"title": instruments[name].title, "models": _instrument_models(result, name, coverage)}
            for name in sorted({instrument for _, instrument in result.analyses})
        },
        "baseline": [comparison.to_json() for comparison in result.baseline],
        # Every check that could not be computed (never a pass), by name, with why.
        "not_computed": [
            {"name": record.name, "kind": record.kind, "decision": record.decision, "message": record.message}
            for record in result.checks
            if record.decision in ("not judged", "not compared")
        ],
        # Against a baseline with per-condition answers: per item, whether it changed beyond the run noise.
        "changes": {"items": [change.to_json() for change in result.item_changes]},
        "coverage": {model: entry.to_json() for model, entry in sorted((coverage or {}).items())},
    }
    if result.servings:
        # Per base model, instrument and serving factor (provider, effort): its levels compared (a design without
        # servings has no such key, so its document is what it was).
        document["servings"] = [study.to_dict() for study in result.servings]
    return document


def write_analysis_document(path: Path, document: dict[str, Any]) -> None:
    text = json.dumps(document, indent=2, allow_nan=False, default=_plain) + "\n"
    write_atomically(path, text.encode("utf-8"))


def _instrument_models(
    result: Judgement, instrument: str, coverage: Mapping[str, Coverage] | None = None
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
