"""What a session leaves in its output folder besides the observations and the analysis: session.json,
each instrument's audit of what it chose from the data, and the baseline files asked for; and the previous
run's files, removed before a run starts.

An output folder holds one run's files: a run that asks anything starts by removing what an earlier run
wrote there under the names a run writes (never another file, nor the results history or the shared state),
so a run that writes less than the last one (nothing collected, nothing judged, no baseline) never leaves
an earlier run's analysis, summary or changes beside its own observations.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from snap_bench.design.config import ConfigError
from snap_bench.instruments.base import Instrument, Selection
from snap_bench.observations.observation import Observation
from snap_bench.recordings.state import Recordings

if TYPE_CHECKING:
    from snap_bench.design.models import ModelSpec
    from snap_bench.judging.baseline import BaselineSpec
    from snap_bench.plugin.session_options import SessionOptions


class FinishedSession(Protocol):
    """What the end of a session writes from (the SnapSession provides it)."""

    options: SessionOptions
    models: list[ModelSpec]
    baseline: BaselineSpec | None
    recordings: Recordings

    @property
    def observations(self) -> list[Observation]: ...

    @property
    def instruments(self) -> dict[str, Instrument]: ...

    def session_meta(self) -> dict[str, Any]: ...

    def instrument(self, name: str) -> Instrument: ...

    def selection(self, instrument: Instrument) -> Selection: ...


# What a run writes in its output folder under fixed names (besides analysis.json, whose path is an option, and
# the HTML report, which pytest-html writes whole at every run).
RUN_FILES = (
    "observations.jsonl",
    "observations.csv",
    "session.json",
    "summary.md",
    "changes.csv",
    "item_changes.csv",
    "exit-status",
)
AUDIT_PATTERN = "*-audit.json"


class Artefacts:
    def __init__(self, out_dir: Path, invocation_dir: Path) -> None:
        self.out_dir = out_dir
        self._invocation_dir = invocation_dir
        self.saved_baselines: list[Path] = []

    def clear_previous_run(self, analysis_path: Path) -> list[Path]:
        """Remove what an earlier run wrote (the files of RUN_FILES, the audits, ``analysis_path``); the paths
        removed."""
        candidates = [*(self.out_dir / name for name in RUN_FILES), analysis_path]
        if self.out_dir.is_dir():
            candidates += sorted(self.out_dir.glob(AUDIT_PATTERN))
        removed = []
        for path in candidates:
            if path.is_file():
                path.unlink()
                removed.append(path)
        return removed

    def write_session_end(self, session: FinishedSession) -> None:
        """session.json, the audits of the instruments that were asked, and the baselines asked for."""
        self.write_session_meta(session.session_meta())
        observed = sorted({observation.instrument for observation in session.observations})
        self.write_audits(
            [session.instrument(name) for name in observed],
            [model.name for model in session.models],
            {name: session.selection(session.instrument(name)) for name in observed},
            session.recordings,
        )
        if session.options.save_baseline and session.observations:
            versions = {name: instrument.version for name, instrument in session.instruments.items()}
            baseline = session.baseline
            judged = [m.name for m in session.models if baseline is None or m.name != baseline.model]
            self.save_baselines(session.options.save_baseline, judged, session.observations, versions)

    def write_session_meta(self, meta: Mapping[str, Any]) -> None:
        path = self.out_dir / "session.json"
        path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")

    def write_audits(
        self,
        instruments: Sequence[Instrument],
        models: list[str],
        selection: Mapping[str, Selection],
        recordings: Recordings,
    ) -> None:
        """What instruments chose from the data (phase-2 examples, best variants), for a reader to check."""
        for instrument in instruments:
            try:
                audit = instrument.audit(models, selection[instrument.name], recordings)
            except ConfigError as error:  # nothing was asked in that stage then; say so instead of failing the run
                audit = {"instrument": instrument.name, "error": str(error)}
            if audit is not None:
                path = self.out_dir / f"{instrument.name}-audit.json"
                path.write_text(json.dumps(audit, indent=2) + "\n", encoding="utf-8")

    def save_baselines(
        self, template: str, models: list[str], observations: list[Observation], versions: dict[str, str]
    ) -> None:
        """One baseline file per model (``{model}`` in the template names it), relative to where pytest ran."""
        from snap_bench.judging.baseline import baseline_document, baseline_path, write_baseline

        for model in models:
            path = baseline_path(template, model)
            path = path if path.is_absolute() else self._invocation_dir / path
            write_baseline(path, baseline_document(model, observations, versions))
            self.saved_baselines.append(path)
