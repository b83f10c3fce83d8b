"""The batch step of a session, before any test asks: collect what earlier batches finished, submit every
unrecorded condition of a model whose endpoint has a batch API, and (unless only submitting) wait for them.

Each result is written into its condition's cassette atomically, as a synchronous ask records it, so that a
replay cannot tell the two apart. A request that ends errored, expired or cancelled is written nowhere: its
condition stays unrecorded and is asked synchronously by its test, like any unrecorded condition (a second
batch could take another day, and the synchronous path retries, then records an API error code: never a score
from the error). Spend is counted at the batch price: the billed ``usage.cost`` where the answer carries it
(OpenRouter), else half the entry's synchronous price (OpenAI's, Anthropic's and Gemini's batch discount).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from snap_bench.asking.batch.ledger import (
    COLLECTED,
    PENDING,
    BatchRecord,
    LedgerItem,
    read_records,
    write_record,
)
from snap_bench.design.models import ModelSpec
from snap_bench.providers.batches import BatchApi, BatchApiError, BatchItem, BatchState
from snap_bench.recordings.exchanges import answered_interaction, write_cassette
from snap_bench.wire.request import ConditionRequest
from snap_bench.wire.scrub import Scrubber

# Batch APIs bill half the synchronous price (OpenAI, Anthropic, Gemini; OpenRouter "typically", and it says what it
# billed).
BATCH_PRICE_FACTOR = 0.5
WAIT, SUBMIT = "wait", "submit"
# A batch's statuses when it ended as a whole without its answers (OpenAI's and OpenRouter's spellings).
FAILED_AS_A_WHOLE = frozenset({"failed", "expired", "cancelled", "canceled"})


@dataclass(frozen=True)
class ModelBatches:
    """One model's batch work: its API and endpoint, and the unrecorded conditions to submit (none: collect only)."""

    model: ModelSpec
    api: BatchApi
    base_url: str
    api_key: str | None
    to_submit: Sequence[tuple[ConditionRequest, Path]] = ()


@dataclass
class BatchReport:
    """What the step did: spend of the answers collected now, batches still pending, failed items."""

    spend: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: list[tuple[str, str, int, int]] = field(default_factory=list)  # model, batch id, done, total
    failed: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def pending_lines(self) -> list[str]:
        return [
            f"{model}: batch {batch_id} pending ({done}/{total} done); run again, with or without --snap-batch, to "
            "collect it (its conditions are not asked meanwhile)"
            for model, batch_id, done, total in self.pending
        ]


@dataclass(frozen=True)
class BatchOutcome:
    """What the batch step did: its report (spend, pending batches, problems) and the lines said once of it."""

    report: BatchReport = field(default_factory=BatchReport)
    notices: list[str] = field(default_factory=list)


class BatchStep:
    def __init__(
        self,
        cassette_root: Path,
        scrub: Scrubber,
        say: Callable[[str], None],
        poll_s: float,
        timeout_s: float,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._root = cassette_root
        self._scrub = scrub
        self._say = say
        self._poll_s = poll_s
        self._timeout_s = timeout_s
        self._sleep = sleep
        self._clock = clock
        self.report = BatchReport()
        # batch id -> (done, total) as last reported
        self._counts: dict[str, tuple[int, int]] = {}

    def run(self, work: Sequence[ModelBatches], mode: str | None) -> BatchReport:
        """Collect what has ended; with ``mode``, submit what is unrecorded and not pending; with ``wait``, wait."""
        clients = {
            entry.model.name: httpx.Client(headers=entry.api.headers(entry.api_key), timeout=120.0) for entry in work
        }
        try:
            self._poll(work, clients)
            if mode is not None:
                for entry in work:
                    self._submit(entry, clients[entry.model.name])
            if mode == WAIT:
                started = self._clock()
                while self._pending(work) and self._clock() - started < self._timeout_s:
                    self._sleep(self._poll_s)
                    self._poll(work, clients, progress=True)
            self.report.pending = [
                (record.model, record.batch_id, *self._counts.get(record.batch_id, (0, len(record.items))))
                for record in self._pending(work)
            ]
        finally:
            for client in clients.values():
                client.close()
        return self.report

    def _pending(self, work: Sequence[ModelBatches]) -> list[BatchRecord]:
        return [
            record
            for entry in work
            for record in read_records(self._root, entry.model.name)
            if record.status == PENDING
        ]

    def _poll(self, work: Sequence[ModelBatches], clients: dict[str, httpx.Client], *, progress: bool = False) -> None:
        """Ask after every pending batch once; collect those that ended."""
        for entry in work:
            for record in read_records(self._root, entry.model.name):
                if record.status != PENDING:
                    continue
                http = clients[entry.model.name]
                try:
                    state = entry.api.state(http, entry.base_url, record.batch_id)
                except BatchApiError as error:
                    self._problem(f"{entry.model.name}: batch {record.batch_id} could not be read: {error}")
                    continue
                self._counts[record.batch_id] = (state.done, state.total or len(record.items))
                if progress or state.ended:
                    minutes = _minutes_since(record.submitted_at)
                    self._say(
                        f"{entry.model.name}: batch {record.batch_id} {state.done}/{state.total or len(record.items)} "
                        f"done, {state.status}, {minutes}"
                    )
                if state.ended:
                    self._collect(entry, http, record, state)

    def _collect(self, entry: ModelBatches, http: httpx.Client, record: BatchRecord, state: BatchState) -> None:
        try:
            results = {result.custom_id: result for result in entry.api.results(http, entry.base_url, state)}
        except (BatchApiError, ValueError, KeyError) as error:
            if state.status not in FAILED_AS_A_WHOLE:
                self._problem(f"{entry.model.name}: the results of batch {record.batch_id} could not be read: {error}")
                return  # read again by the next look (or run)
            # It ended without results (failed, expired or cancelled as a whole): its requests are asked again.
            results = {}
        model = entry.model.name
        for custom_id, item in record.items.items():
            if custom_id in record.collected:
                continue  # written by a collection that was killed before it marked the batch collected
            result = results.get(custom_id)
            path = self._root / model / item.cassette
            if result is None or result.body is None:
                why = "no result for it" if result is None else str(result.failure)
                record.collected[custom_id] = {"outcome": "errored", "why": self._scrub(why)}
                self.report.failed[model] = self.report.failed.get(model, 0) + 1
                continue
            if path.exists():
                record.collected[custom_id] = {"outcome": "kept the recording found"}
                continue
            recorded = [answered_interaction(item.uri, item.body, result.body, self._scrub)]
            write_cassette(path, recorded, entry.model.dialect)
            cost, prompt, completion = self._cost(entry, result.body)
            record.collected[custom_id] = {"outcome": "recorded", "cost_usd": cost}
            spent = self.report.spend.setdefault(
                model, {"cost_usd": 0.0, "requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
            )
            spent["cost_usd"] += cost
            spent["requests"] += 1
            spent["prompt_tokens"] += prompt
            spent["completion_tokens"] += completion
        record.status = COLLECTED
        write_record(self._root, record)
        failed = sum(value.get("outcome") == "errored" for value in record.collected.values())
        if failed:
            self._say(
                f"{model}: {failed} request(s) of batch {record.batch_id} ended errored, expired or cancelled: "
                "their conditions are asked synchronously"
            )

    def _cost(self, entry: ModelBatches, body: str) -> tuple[float, int, int]:
        try:
            usage = entry.api.usage(body)
        except (ValueError, TypeError, AttributeError):
            return 0.0, 0, 0
        if usage.billed is not None:
            return usage.billed, usage.prompt_tokens, usage.completion_tokens
        price = entry.model.price
        if price is None:
            return 0.0, usage.prompt_tokens, usage.completion_tokens
        full = (
            usage.prompt_tokens * price.input_per_million + usage.completion_tokens * price.output_per_million
        ) / 1e6
        return full * BATCH_PRICE_FACTOR, usage.prompt_tokens, usage.completion_tokens

    def _submit(self, entry: ModelBatches, http: httpx.Client) -> None:
        """Submit the model's unrecorded conditions that no pending batch holds, split by the API's limits."""
        model = entry.model.name
        held = {
            self._root / model / item.cassette
            for record in read_records(self._root, model)
            if record.status == PENDING
            for item in record.items.values()
        }
        requests = [(request, path) for request, path in entry.to_submit if path not in held and not path.exists()]
        for chunk in _chunks(entry, requests):
            items = {f"c{number:06d}": pair for number, pair in enumerate(chunk)}
            batch = [BatchItem(cid, request.uri, request.body) for cid, (request, _path) in items.items()]
            try:
                batch_id = entry.api.submit(http, entry.base_url, entry.model.provider_id, batch)
            except (BatchApiError, KeyError, ValueError) as error:
                self._problem(
                    f"{model}: a batch of {len(batch)} request(s) was refused ({self._scrub(str(error))}); "
                    "its conditions are asked synchronously"
                )
                continue
            record = BatchRecord(
                batch_id=batch_id,
                api=entry.api.name,
                model=model,
                submitted_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                items={
                    cid: LedgerItem(
                        str(path.relative_to(self._root / model)),
                        request.uri,
                        self._scrub(request.body.decode("utf-8")),
                    )
                    for cid, (request, path) in items.items()
                },
            )
            write_record(self._root, record)  # at once: a kill from here on loses no submitted batch
            self._counts[batch_id] = (0, len(batch))
            self._say(f"{model}: batch {batch_id} submitted ({len(batch)} requests, {entry.api.name} batch API)")

    def _problem(self, line: str) -> None:
        # A provider may echo the key it was sent: scrubbed before it reaches the terminal or session.json.
        line = self._scrub(line)
        self.report.problems.append(line)
        self._say(line)


def _chunks(
    entry: ModelBatches, requests: list[tuple[ConditionRequest, Path]]
) -> list[list[tuple[ConditionRequest, Path]]]:
    """``requests`` in batches within the API's documented limits (count and bytes)."""
    chunks: list[list[tuple[ConditionRequest, Path]]] = []
    current: list[tuple[ConditionRequest, Path]] = []
    size = 0
    for request, path in requests:
        item_size = entry.api.item_bytes(BatchItem("c000000", request.uri, request.body), entry.model.provider_id)
        if current and (len(current) >= entry.api.max_requests or size + item_size > entry.api.max_bytes):
            chunks.append(current)
            current, size = [], 0
        current.append((request, path))
        size += item_size
    return [*chunks, current] if current else chunks


def _minutes_since(when: str) -> str:
    try:
        started = dt.datetime.fromisoformat(when)
    except ValueError:
        return "since ?"
    minutes = (dt.datetime.now(dt.UTC) - started).total_seconds() / 60
    return f"{minutes:.0f} min"
