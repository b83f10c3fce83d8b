"""What a session leaves in its output folder besides the observations and the analysis, and what it says of
itself there.

- **The files.** session.json, each instrument's audit of what it chose from the data, and the baseline files
  asked for; and the previous run's files, removed before a run starts. An output folder holds one run's files:
  a run that asks anything starts by removing what an earlier run wrote there under the names a run writes
  (never another file, nor the results history or the shared state), so a run that writes less than the last
  one (nothing collected, nothing judged, no baseline) never leaves an earlier run's analysis, summary or
  changes beside its own observations.
- **What the session says of itself** (session.json and analysis.json's ``session``): its models and design,
  coverage, settings, provenance, spend, the endpoints' catalogue entries, who served, and its notices.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from snap_bench.analysis.coverage import Coverage
from snap_bench.analysis.design_subset import SUBSETS_KEY, DesignSubset, design_subset, subsets_json
from snap_bench.asking.batch.step import BatchOutcome
from snap_bench.asking.model_facts import ModelFacts, notices
from snap_bench.design.config import ConfigError
from snap_bench.design.models import ModelSpec
from snap_bench.design.temperatures import DEFAULT
from snap_bench.history.store import provenance
from snap_bench.instruments import INSTRUMENT_FILE_KEYS
from snap_bench.instruments.base import Instrument, Selection
from snap_bench.judging.exit_status import ExitDecision
from snap_bench.judging.judgement import Judgement
from snap_bench.observations.case import Case
from snap_bench.observations.export import csv_bytes
from snap_bench.observations.observation import Condition, Observation
from snap_bench.observations.spend import serving_by_model, serving_notices, spend_by_model, with_batch_spend
from snap_bench.recordings.state import Recordings
from snap_bench.report.ci_outputs import write_ci_summary
from snap_bench.report.ci_summary import SUMMARY_FILE
from snap_bench.session.ledger import ConditionLedger
from snap_bench.session.settings import SessionSettings
from snap_bench.wire.atomic import write_atomically
from snap_bench.wire.end_files import EndFiles

if TYPE_CHECKING:
    from snap_bench.judging.baseline import BaselineSpec


# -- the output folder's files ---------------------------------------------------------------------------


class FinishedSession(Protocol):
    """What the end of a session writes from (the BenchmarkSession provides it)."""

    options: SessionSettings
    models: list[ModelSpec]
    baseline: BaselineSpec | None
    recordings: Recordings
    judgement: Judgement | None

    @property
    def observations(self) -> list[Observation]: ...

    @property
    def instruments(self) -> dict[str, Instrument]: ...

    def session_meta(self) -> dict[str, Any]: ...

    def instrument(self, name: str) -> Instrument: ...

    def selection(self, instrument: Instrument) -> Selection: ...

    @property
    def ledger(self) -> ConditionLedger: ...

    def cases(self, instrument_name: str) -> list[Case]: ...

    def model_conditions(self, instrument: Instrument, model: str, selection: Selection) -> list[Condition]: ...


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
    def __init__(self, out_dir: Path, root: Path) -> None:
        self.out_dir = out_dir
        # The project root: a relative --snap-save-baseline path is written below it, as config/ is read.
        self._root = root
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

    def write_session_end(
        self, session: FinishedSession, files: EndFiles, decision: ExitDecision, *, with_observations: bool
    ) -> None:
        """The job summary, observations.csv (``with_observations``: the session kept them), session.json, the
        audits of the instruments that were asked, and the baselines asked for, each whole, through ``files``
        (which writes none once a second Ctrl-C is seen)."""
        # Always: the job summary of a run that judged nothing still says how it ended.
        judged = session.judgement or Judgement()
        files.write(SUMMARY_FILE, lambda: write_ci_summary(self.out_dir, judged, decision))
        if with_observations:
            files.write("observations.csv", lambda: write_csv(self.out_dir / "observations.csv", session.observations))
        files.write("session.json", lambda: self.write_session_meta(session.session_meta()))
        observed = [session.instrument(name) for name in sorted({o.instrument for o in session.observations})]
        models = [model.name for model in session.models]
        selection = {instrument.name: session.selection(instrument) for instrument in observed}
        for path, audit in self.audits(observed, models, selection, session.recordings).items():
            files.write(
                path.name, partial(write_atomically, path, (json.dumps(audit, indent=2) + "\n").encode("utf-8"))
            )
        template = session.options.save_baseline
        if template and session.observations:
            versions = {name: instrument.version for name, instrument in session.instruments.items()}
            baseline = session.baseline
            for model in [m.name for m in session.models if baseline is None or m.name != baseline.model]:
                save = partial(self.save_baselines, template, [model], session.observations, versions)
                files.write(str(self.baseline_file(template, model)), save)

    def write_session_meta(self, meta: Mapping[str, Any]) -> None:
        write_atomically(self.out_dir / "session.json", (json.dumps(meta, indent=2) + "\n").encode("utf-8"))

    def audits(
        self,
        instruments: Sequence[Instrument],
        models: list[str],
        selection: Mapping[str, Selection],
        recordings: Recordings,
    ) -> dict[Path, dict[str, Any]]:
        """What instruments chose from the data (phase-2 examples, best variants), for a reader to check: the
        audit files to write (an instrument that chose nothing has none)."""
        audits = {}
        for instrument in instruments:
            try:
                audit = instrument.audit(models, selection[instrument.name], recordings)
            except ConfigError as error:  # nothing was asked in that stage then; say so instead of failing the run
                audit = {"instrument": instrument.name, "error": str(error)}
            if audit is not None:
                audits[self.out_dir / f"{instrument.name}-audit.json"] = audit
        return audits

    def save_baselines(
        self, template: str, models: list[str], observations: list[Observation], versions: dict[str, str]
    ) -> None:
        """One baseline file per model (``{model}`` in the template names it), relative to the project root."""
        from snap_bench.judging.baseline import baseline_document, write_baseline

        for model in models:
            path = self.baseline_file(template, model)
            write_baseline(path, baseline_document(model, observations, versions))
            self.saved_baselines.append(path)

    def baseline_file(self, template: str, model: str) -> Path:
        from snap_bench.judging.baseline import baseline_path

        path = baseline_path(template, model)
        return path if path.is_absolute() else self._root / path


def write_csv(path: Path, observations: list[Observation]) -> None:
    """observations.csv, whole or not at all: an interrupt or a kill while it is written leaves the previous file
    or none."""
    write_atomically(path, csv_bytes(observations))


# -- what the session says of itself ---------------------------------------------------------------------


def instruments_run(built: Mapping[str, str], observations: Sequence[Observation]) -> dict[str, str]:
    """The instruments the session built (name -> item bank version) that ran: answered at least one condition.
    The session builds others too (an instrument of the run's paths with no recording offline, or whose
    conditions were all left out), which session.json and the report must not list as run."""
    ran = {observation.instrument for observation in observations}
    return {name: version for name, version in built.items() if name in ran}


def subsets(session: FinishedSession) -> dict[tuple[str, str], DesignSubset]:
    """What of each model's design of each instrument it answered the session left out, by (model, instrument)
    (the rule: snap_bench.analysis.design_subset): the conditions it set out to ask (selected, in its shard,
    collected and not deselected) against those the design holds for the model (nothing selected; the follow-up
    stage as asked, since it is asked on demand). A pair asked whole is absent."""
    expected = session.ledger.expected_case_ids()
    found: dict[tuple[str, str], DesignSubset] = {}
    for name in sorted({observation.instrument for observation in session.observations}):
        instrument = session.instrument(name)
        whole = Selection(follow_up=session.selection(instrument).follow_up)
        asked: dict[str, list[Condition]] = {}
        for case in session.cases(name):
            if case.id in expected:
                asked.setdefault(case.model, []).append(case.condition)
        for model, own in asked.items():
            subset = design_subset(session.model_conditions(instrument, model, whole), own)
            if subset is not None:
                found[model, name] = subset
    return found


def session_meta(
    options: SessionSettings,
    models: Sequence[ModelSpec],
    instrument_versions: Mapping[str, str],
    ledger: ConditionLedger,
    coverage: Mapping[str, Coverage],
    facts: Mapping[str, ModelFacts],
    batch: BatchOutcome,
    subsets: Mapping[tuple[str, str], DesignSubset] | None = None,
) -> dict[str, Any]:
    observations = ledger.observations
    return {
        "models": [model.name for model in models],
        "instruments": dict(instrument_versions),
        "record_mode": options.record_mode.value if options.record_mode else "auto",
        "observations": len(observations),
        "missing_reports": sorted(ledger.missing_reports()),
        "coverage": {model: entry.to_json() for model, entry in coverage.items()},
        # what of each model's design the session left out ({}: it asked every design whole)
        SUBSETS_KEY: subsets_json(subsets or {}),
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
    options: SessionSettings, facts: Mapping[str, ModelFacts], observations: Sequence[Observation]
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
