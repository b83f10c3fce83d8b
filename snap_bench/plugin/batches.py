"""The batch step on the controller, before any worker starts and any test asks (``--snap-batch``; and in
every session, the collection of what earlier batches finished).

Which models take part: a remote model that can be asked (a key) whose dialect has a batch API, recording
what is missing (the record mode ``once``). The conditions are the design's conditions of the run's
instruments for it (the run's paths, --model, --snap-items/-temperatures/-prompts/-runs and --snap-shard
narrow them; ``-k`` does not: it selects tests after the batch step). Under xdist this runs once, on the
controller, in its session start: the workers are started after it (xdist's own session start runs last).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest

from snap_bench.asking.batch.ledger import batches_folder
from snap_bench.asking.batch.registry import batch_api
from snap_bench.asking.batch.step import BatchOutcome, BatchReport, BatchStep, ModelBatches
from snap_bench.asking.credentials import configured_scrubber
from snap_bench.recordings.cassettes import RecordMode, cassette_path
from snap_bench.wire.request import ConditionRequest
from snap_bench.wire.scrub import Scrubber

if TYPE_CHECKING:
    from snap_bench.asking.asker import Endpoint
    from snap_bench.design.models import ModelSpec
    from snap_bench.instruments.base import Instrument
    from snap_bench.observations.case import Case
    from snap_bench.observations.observation import Condition
    from snap_bench.plugin.session_options import SessionOptions

ConditionsOf = Callable[[str], Iterable[tuple["Instrument", "Condition"]]]


class BatchingSession(Protocol):
    """What the batch step reads of a session (the SnapSession provides it)."""

    config: pytest.Config
    options: SessionOptions
    models: list[ModelSpec]

    @property
    def endpoints(self) -> Mapping[str, Endpoint]: ...

    @property
    def in_run(self) -> Mapping[str, Path | None]: ...

    @property
    def not_asked(self) -> Mapping[str, str]: ...

    def instrument(self, name: str) -> Instrument: ...

    def cases(self, instrument_name: str) -> Iterable[Case]: ...


def run_batch_step(session: BatchingSession) -> BatchOutcome:
    """--snap-batch, and the collection of earlier batches: before any test asks (the workers start after)."""
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        terminal.write_line(f"snap-bench batch: {line}") if terminal is not None else print(line)

    def conditions_of(model: str) -> Iterator[tuple[Instrument, Condition]]:
        """Every condition of the run's instruments (its paths, less what the selection leaves out) for ``model``."""
        for name in session.in_run:
            if name in session.not_asked:
                continue
            instrument = session.instrument(name)
            yield from ((instrument, case.condition) for case in session.cases(name) if case.model == model)

    report, synchronous = batch_step(session.options, session.models, session.endpoints, conditions_of, say)
    return BatchOutcome(report, [*synchronous, *report.problems, *report.pending_lines()])


def batch_step(
    options: SessionOptions,
    models: list[ModelSpec],
    endpoints: Mapping[str, Endpoint],
    conditions_of: ConditionsOf,
    say: Callable[[str], None],
) -> tuple[BatchReport, list[str]]:
    """Collect, submit and wait as the options say; what it did, and the lines said once of the models whose
    endpoint has no batch API (asked synchronously)."""
    synchronous: list[str] = []
    work: list[ModelBatches] = []
    for model in models:
        endpoint = endpoints[model.name]
        api = None if model.is_local else batch_api(model.dialect)
        has_batches = batches_folder(options.cassette_dir, model.name).is_dir()
        if api is None:
            if options.batch is not None:
                synchronous.append(
                    f"{model.name}: its endpoint ({model.dialect}) has no batch API, so --snap-batch asks it "
                    "synchronously"
                )
            continue
        if not (has_batches or options.batch is not None) or not endpoint.live:
            continue
        records = options.record_mode in (None, RecordMode.ONCE)
        to_submit = _unrecorded(options, endpoint, conditions_of) if options.batch is not None and records else []
        work.append(ModelBatches(model, api, endpoint.base_url, endpoint.api_key, to_submit))
    if not work:
        return BatchReport(), synchronous
    for line in synchronous:
        say(line)
    keys = [endpoint.api_key for endpoint in endpoints.values()]
    configured = configured_scrubber([model.api_key_env for model in models], options.rootdir / ".env")
    scrub = Scrubber([*configured.secrets, *keys])
    step = BatchStep(options.cassette_dir, scrub, say, options.batch_poll_s, options.batch_timeout_s)
    try:
        return step.run(work, options.batch), synchronous
    except ValueError as error:  # a ledger that cannot be read (snap_bench.asking.batch.ledger)
        raise pytest.UsageError(str(error)) from None


def _unrecorded(
    options: SessionOptions, endpoint: Endpoint, conditions_of: ConditionsOf
) -> list[tuple[ConditionRequest, Path]]:
    """The model's conditions with no cassette (a stale or damaged one is the synchronous path's to judge)."""
    found = []
    for instrument, condition in conditions_of(endpoint.model.name):
        path = cassette_path(options.cassette_dir, endpoint.model.name, instrument.name, condition.id)
        if not path.exists():
            found.append((endpoint.request(instrument, condition), path))
    return found
