"""What a session leaves in its output folder besides the observations and the analysis: session.json,
each instrument's audit of what it chose from the data, and the baseline files asked for."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from snap_bench.design.config import ConfigError
from snap_bench.instruments.base import Instrument, Selection
from snap_bench.observations.observation import Observation
from snap_bench.recordings.state import Recordings


class Artefacts:
    def __init__(self, out_dir: Path, invocation_dir: Path) -> None:
        self.out_dir = out_dir
        self._invocation_dir = invocation_dir
        self.saved_baselines: list[Path] = []

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
