"""The batch step of a session (``--snap-batch``; and in every session, the collection of what earlier batches
finished), run on the controller before any worker starts and any test asks (snap_bench.plugin.process).

Which models take part: a remote model that can be asked (a key) whose dialect has a batch API, recording
what is missing (the record mode ``once``). The conditions are the design's conditions of the run's
instruments for it (the run's paths, --model, --snap-items/-temperatures/-prompts/-runs and --snap-shard
narrow them; ``-k`` does not: it selects tests after the batch step).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from snap_bench.asking.batch.ledger import batches_folder
from snap_bench.asking.batch.registry import batch_api
from snap_bench.asking.batch.step import BatchReport, BatchStep, ModelBatches
from snap_bench.asking.credentials import configured_scrubber
from snap_bench.asking.endpoints import ConditionsOf
from snap_bench.asking.settings import AskingSettings
from snap_bench.recordings.cassettes import RecordMode, cassette_path
from snap_bench.wire.request import ConditionRequest
from snap_bench.wire.scrub import Scrubber

if TYPE_CHECKING:
    from snap_bench.asking.asker import Endpoint
    from snap_bench.design.models import ModelSpec


def batch_step(
    options: AskingSettings,
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
    # A ledger that cannot be read raises ValueError (snap_bench.asking.batch.ledger): the plugin's usage error.
    return step.run(work, options.batch), synchronous


def _unrecorded(
    options: AskingSettings, endpoint: Endpoint, conditions_of: ConditionsOf
) -> list[tuple[ConditionRequest, Path]]:
    """The model's conditions with no cassette (a stale or damaged one is the synchronous path's to judge)."""
    found = []
    for instrument, condition in conditions_of(endpoint.model.name):
        path = cassette_path(options.cassette_dir, endpoint.model.name, instrument.name, condition.id)
        if not path.exists():
            found.append((endpoint.request(instrument, condition), path))
    return found
