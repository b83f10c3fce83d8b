"""Ask one condition: render, replay or record through its cassette, parse, build the Observation.

One :class:`Asker` lives in each process that runs tests (each xdist worker, or the only process).
It owns an event loop (``asyncio.Runner``) and one :class:`ChatClient` per endpoint, so connections
are reused across the tests of that process while the tests themselves stay synchronous.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from snap_bench.asking.ask_ahead import AskAhead, Job, Outcome
from snap_bench.asking.attempts import AttemptGuard, BudgetReached
from snap_bench.asking.client import ChatClient, ChatReply, RetryPolicy
from snap_bench.asking.interruption import InterruptFlag
from snap_bench.asking.observing import Answered, observation_of
from snap_bench.asking.pacing import Pacer
from snap_bench.asking.replay import replay
from snap_bench.asking.spend import cost_usd, worst_case_usd
from snap_bench.asking.stops import NOT_ASKED, Request, StopBoard
from snap_bench.asking.throttle import Budget
from snap_bench.design.models import ModelSpec
from snap_bench.observations.observation import Condition, Observation
from snap_bench.recordings.cassettes import (
    CassetteState,
    RecordMode,
    make_vcr,
    restore,
)
from snap_bench.recordings.state import Recordings
from snap_bench.wire.dialects import dialect_named
from snap_bench.wire.request import Asked, ConditionRequest, condition_request
from snap_bench.wire.scrub import Scrubber


@dataclass(frozen=True)
class Endpoint:
    """Where a model's requests go, what the cassettes call that place, and whether we may go there.

    ``live`` is False when there is nothing to pay with (no key) or no server to ask: then nothing
    touches the network, and ``offline_reason`` says how to change that.
    """

    model: ModelSpec
    base_url: str
    canonical_url: str
    api_key: str | None
    live: bool
    offline_reason: str
    # The endpoint's catalogue ids nearest to the model's (for a stop naming a retired id), where it was read.
    closest_ids: tuple[str, ...] = ()

    def request(self, instrument: Asked, condition: Condition) -> ConditionRequest:
        """The condition's request to this model, as its recordings name the endpoint (built once: sent,
        looked up and recorded as it is)."""
        return condition_request(self.model, self.canonical_url, instrument, condition)

    def stop_request(self, body: bytes) -> Request:
        """What a stop of this model names: the model, its endpoint and key, the parameters and routing sent."""
        try:
            sent = [key for key in json.loads(body) if key not in ("model", "messages", "provider", "contents")]
        except ValueError:
            sent = []
        return Request(
            model=self.model.name,
            model_id=self.model.provider_id,
            url=self.base_url,
            key_variable=self.model.api_key_env,
            parameters=sorted(sent),
            routing=self.model.routing,
            closest_ids=self.closest_ids,
        )


class RecordingUnavailable(Exception):
    """The condition cannot be answered: no usable recording and no way (or no leave) to record."""


class BatchPending(Exception):
    """The condition is in a batch that has not ended: not asked again; a later run collects its answer."""


class Asker:
    def __init__(
        self,
        cassette_root: Path,
        record_mode: RecordMode | None,
        policy: RetryPolicy,
        endpoints: dict[str, Endpoint],
        pacers: dict[str, Pacer],
        budget: Budget,
        scrubber: Scrubber | None = None,
        stops: StopBoard | None = None,
        ahead: Callable[[Scrubber], AskAhead] | None = None,
        interrupt: InterruptFlag | None = None,
        pending: Mapping[Path, str] | None = None,
    ) -> None:
        self._recordings = Recordings(cassette_root)
        # The cassette of each condition in a batch not collected yet -> the batch (snap_bench.asking.batch).
        self._pending = dict(pending or {})
        self._explicit_mode = record_mode
        self._policy = policy
        self._endpoints = endpoints
        self._pacers = pacers
        self._budget = budget
        self._stops = stops
        self._interrupt = interrupt
        self._runner = asyncio.Runner()
        self._clients: dict[str, ChatClient] = {}
        keys = [endpoint.api_key for endpoint in endpoints.values() if endpoint.api_key]
        # Everything an observation carries passes through this before it leaves the process.
        self._scrub = Scrubber([*(scrubber.secrets if scrubber else []), *keys])
        canonical = {e.base_url: e.canonical_url for e in endpoints.values() if e.base_url != e.canonical_url}
        # Each recording names the provider it was recorded through (its model's folder names the model).
        providers = {name: endpoint.model.dialect for name, endpoint in endpoints.items()}

        def provider_of(cassette: Path) -> str | None:
            return providers.get(cassette.parent.parent.name)

        self._vcrs = {mode: make_vcr(mode, self._scrub.secrets, canonical, provider_of) for mode in RecordMode}
        # --snap-concurrency: unrecorded conditions are asked ahead, several at once (snap_bench.asking.ask_ahead).
        self._ahead = ahead(self._scrub) if ahead is not None else None

    def close(self, *, interrupted: bool = False) -> None:
        if self._ahead is not None:
            # A finished session lets the answers in flight arrive and be recorded; Ctrl-C does not wait.
            self._ahead.close(wait=not interrupted)
            self._ahead = None
        for client in self._clients.values():
            self._runner.run(client.aclose())
        self._clients.clear()
        self._runner.close()

    def record_mode(self, endpoint: Endpoint) -> RecordMode:
        """The explicit --snap-record-mode, else record what is missing where we can, replay only where not."""
        if self._explicit_mode is not None:
            return self._explicit_mode
        return RecordMode.ONCE if endpoint.live else RecordMode.NONE

    def _client(self, endpoint: Endpoint) -> ChatClient:
        client = self._clients.get(endpoint.model.name)
        if client is None:
            client = self._runner.run(_make_client(endpoint, self._policy))
            self._clients[endpoint.model.name] = client
        return client

    def ask(
        self,
        model: str,
        instrument: Answered,
        condition: Condition,
        on_retried: Callable[[str], None] | None = None,
    ) -> Observation:
        """The condition's observation: replayed, or asked now (``on_retried`` hears of an ask that took more
        than one attempt, in one line)."""
        endpoint = self._endpoints[model]
        request = endpoint.request(instrument, condition)
        messages = request.messages
        if self._ahead is not None and model in self._ahead.limits:
            # Asked ahead this session (by this process or another): its answer, not a replay.
            settled = self._ahead.settled((model, instrument.name, condition.id))
            if settled is not None:
                return self._outcome_observation(model, instrument, condition, messages, settled, on_retried)
        check = self._recordings.check(request)
        path, recorded = check.path, replay(check)
        state = recorded.state
        mode = self.record_mode(endpoint)
        if state is CassetteState.MISSING and path in self._pending:
            raise BatchPending(
                f"{model} {condition.id} is in batch {self._pending[path]}, which has not ended: not asked again. "
                "Run again (with or without --snap-batch) to collect it."
            )
        self._check_recordable(endpoint, mode, state, recorded.why, path, condition)
        if recorded.reply is not None and mode is not RecordMode.ALL:
            reply = recorded.reply  # the recorded answer itself (no HTTP, no retry loop)
            return self._scrubbed(observation_of(model, instrument, condition, messages, reply, True, endpoint.model))
        asks_ahead = state is CassetteState.MISSING and self._asks_ahead(model)
        if asks_ahead and self._ahead is not None:
            outcome = self._ahead.answer(self._job(endpoint, request, path))
            return self._outcome_observation(model, instrument, condition, messages, outcome, on_retried)
        stop = self._stops.stopped(model) if self._stops is not None else None
        if stop is not None:
            # The model cannot be asked this session (see snap_bench.asking.stops): say so, send nothing.
            reply = ChatReply(None, NOT_ASKED + stop, None, 0.0, 0)
            return self._scrubbed(observation_of(model, instrument, condition, messages, reply, False, endpoint.model))
        reply = self._record(endpoint, mode, state, path, request)
        _tell_retries(reply, on_retried)
        if self._stops is not None:
            said = dataclasses.replace(reply, error=reply.error and self._scrub(reply.error))
            self._stops.note(endpoint.stop_request(request.body), said)
        return self._scrubbed(observation_of(model, instrument, condition, messages, reply, False, endpoint.model))

    def _outcome_observation(
        self,
        model: str,
        instrument: Answered,
        condition: Condition,
        messages: list[dict[str, str]],
        outcome: Outcome,
        on_retried: Callable[[str], None] | None = None,
    ) -> Observation:
        if outcome.reply is None:
            raise BudgetReached(f"{outcome.budget}; {model} {condition.id} was not asked. Run again to continue.")
        _tell_retries(outcome.reply, on_retried)
        return self._scrubbed(
            observation_of(model, instrument, condition, messages, outcome.reply, False, self._endpoints[model].model)
        )

    def job(self, model: str, instrument: Answered, condition: Condition) -> Job | None:
        """The condition as a job to ask ahead, or None where asking ahead does not apply (no
        --snap-concurrency for the model, nothing to ask with, or a record mode other than recording
        what is missing: those go through the test's own ask)."""
        if not self._asks_ahead(model):
            return None
        path = self._recordings.path(model, instrument.name, condition.id)
        if path.is_file() or path in self._pending:
            return None  # recorded (or a stale or damaged recording, which the test's own ask handles), or batched
        endpoint = self._endpoints[model]
        return self._job(endpoint, endpoint.request(instrument, condition), path)

    def _asks_ahead(self, model: str) -> bool:
        """Whether the model's missing conditions are asked ahead: --snap-concurrency for it, something to ask
        with, and recording what is missing."""
        if self._ahead is None or model not in self._ahead.limits:
            return False
        endpoint = self._endpoints[model]
        return endpoint.live and self.record_mode(endpoint) is RecordMode.ONCE

    @staticmethod
    def _job(endpoint: Endpoint, request: ConditionRequest, path: Path) -> Job:
        """``request`` as a job to ask ahead, recorded at ``path``."""
        return Job(
            key=(endpoint.model.name, request.instrument, request.condition_id),
            canonical_uri=request.uri,
            body=request.body,
            cassette=path,
            cost=partial(cost_usd, endpoint.model),
            worst_usd=worst_case_usd(endpoint.model, request.body, request.max_tokens),
            stop_request=endpoint.stop_request(request.body),
            provider=request.dialect,
        )

    def look_ahead(self, conditions: Callable[[], Iterable[tuple[str, Answered, Condition]]]) -> None:
        """Ask ahead for the conditions this process runs next (``conditions()``, nearest first; read when
        the asking-ahead loop needs more), as far as --snap-concurrency allows."""
        if self._ahead is not None:
            self._ahead.look_ahead(
                lambda: (
                    ((model, instrument.name, condition.id), partial(self.job, model, instrument, condition))
                    for model, instrument, condition in conditions()
                )
            )

    def _scrubbed(self, observation: Observation) -> Observation:
        """The observation with no key in any text it carries (a provider may echo the key it got)."""
        scrub = self._scrub
        return dataclasses.replace(
            observation,
            raw_answer=None if observation.raw_answer is None else scrub(observation.raw_answer),
            reason=scrub(observation.reason),
            messages=scrub.deep(observation.messages),
            extra=scrub.deep(observation.extra),
        )

    def _record(
        self,
        endpoint: Endpoint,
        mode: RecordMode,
        state: CassetteState,
        path: Path,
        request: ConditionRequest,
    ) -> ChatReply:
        """Ask over the network through the cassette; a failed ask leaves the file as it was."""
        model = endpoint.model.name
        worst = worst_case_usd(endpoint.model, request.body, request.max_tokens)
        exhausted = self._budget.reserve(worst)
        if exhausted:
            raise BudgetReached(f"{exhausted}; {model} {request.condition_id} was not asked. Run again to continue.")
        guard = AttemptGuard(model, worst, self._budget, self._pacers.get(model), self._interrupt)
        previous = path.read_bytes() if path.is_file() else None
        if previous is not None and state in (CassetteState.MISSING, CassetteState.MALFORMED):
            # vcrpy cannot load a damaged file, and in mode `once` refuses to add to an existing one:
            # record into a fresh file (the old bytes are put back if the ask fails).
            path.unlink()
        try:
            with self._vcrs[mode].use_cassette(str(path)):
                asked = self._client(endpoint).complete(
                    request.body, before_attempt=guard.before_attempt, on_response=guard.on_response()
                )
                reply = self._runner.run(asked)
        except BaseException:
            restore(path, previous)
            self._budget.settle(sum(guard.held), 0.0)
            raise
        self._budget.settle(sum(guard.held), cost_usd(endpoint.model, reply))
        if reply.error is not None:
            # No new answer was paid for: keep the earlier recording byte for byte (or none), so a
            # failed re-ask never destroys an answer and the next run asks again.
            restore(path, previous)
        return reply

    def _check_recordable(
        self, endpoint: Endpoint, mode: RecordMode, state: CassetteState, why: str, path: Path, condition: Condition
    ) -> None:
        name = endpoint.model.name
        if state is CassetteState.MALFORMED and (mode is RecordMode.NONE or not endpoint.live):
            how = (
                "run without --snap-record-mode=none to record it again"
                if endpoint.live
                else f"record it again once {endpoint.offline_reason}"
            )
            raise RecordingUnavailable(f"{path}: {why}. Delete the file, or {how}.")
        if state is CassetteState.STALE and mode in (RecordMode.NONE, RecordMode.ONCE):
            raise RecordingUnavailable(
                f"stale recording {path}: {why}. It is not replayed for the new request. Re-record it with "
                f"--snap-record-mode=all (or new_episodes to keep the old exchange), or restore the old prompt."
            )
        needs_network = mode is RecordMode.ALL or state is not CassetteState.MATCHES
        if not needs_network:
            return
        if mode is RecordMode.NONE:
            raise RecordingUnavailable(
                f"no recording for {name} {condition.id} ({path}) and --snap-record-mode=none. "
                f"Run without --snap-record-mode=none{'' if endpoint.live else ' once ' + endpoint.offline_reason} "
                f"to record it."
            )
        if not endpoint.live:
            raise RecordingUnavailable(
                f"no recording for {name} {condition.id} ({path}), and nothing to record it with: "
                f"{endpoint.offline_reason}, then run again (only missing conditions are asked)."
            )


def _tell_retries(reply: ChatReply, on_retried: Callable[[str], None] | None) -> None:
    note = reply.retry_note()
    if note is not None and on_retried is not None:
        on_retried(note)


def chat_client(endpoint: Endpoint, policy: RetryPolicy, *, max_connections: int = 100) -> ChatClient:
    """A client of the endpoint's model, in its dialect."""
    model = endpoint.model
    return ChatClient(
        endpoint.base_url,
        endpoint.api_key,
        policy,
        max_connections=max_connections,
        dialect=dialect_named(model.dialect),
        model_id=model.provider_id,
    )


async def _make_client(endpoint: Endpoint, policy: RetryPolicy) -> ChatClient:
    # Created inside the runner's loop so that httpx binds its pool to that loop.
    return chat_client(endpoint, policy)
