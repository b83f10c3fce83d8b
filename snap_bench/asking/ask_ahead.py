"""Asking ahead: up to N requests in flight per model while each condition stays its own test.

Each process that runs tests keeps one event loop in a background thread. When a test starts, the
process hands it the conditions it is about to run (:mod:`snap_bench.plugin.process`); the loop claims the
unrecorded ones (:mod:`snap_bench.asking.claims`) and asks them, at most ``limit`` per model at once, each
through the same client, retries, Retry-After, shared rate limit, request budget and stops as a
test's own ask. Every answer is written to its cassette atomically the moment it arrives, before
anything else learns of it, so a kill at any moment loses only the requests in flight, and a test
that needs a condition waits for its answer (asked by this process, or by another: then read from
the claim's outcome) instead of asking twice.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import itertools
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from snap_bench.asking.claims import ClaimBoard, Key
from snap_bench.asking.client import ChatClient, ChatReply
from snap_bench.asking.interruption import Interrupted, InterruptFlag
from snap_bench.asking.pacing import Pacer
from snap_bench.asking.stops import NOT_ASKED, Request, StopBoard
from snap_bench.asking.throttle import Budget
from snap_bench.recordings.exchanges import interaction, write_cassette
from snap_bench.wire.scrub import Scrubber

# How often a test waiting for another process's answer looks at the claim (a file read).
POLL_S = 0.01
SWITCH_INTERVAL_S = 0.0005


# After Ctrl-C, how long the session waits for the asking loop to cancel its requests and stop.
INTERRUPT_WAIT_S = 5.0


class BudgetSpent(Exception):
    """The session's request or cost budget is spent (the asking module turns this into BudgetReached)."""


@dataclass(frozen=True)
class Job:
    """One condition to ask: what is sent, where its recording is written (where it goes is its model's client,
    handed to the loop: ``key[0]`` names the model)."""

    key: Key
    canonical_uri: str
    body: bytes
    cassette: Path
    cost: Callable[[ChatReply], float]
    # The most one attempt can cost (held against --snap-max-cost while in flight), and what a stop names.
    worst_usd: float
    stop_request: Request
    # The provider it is asked through, named in its recording.
    provider: str | None = None


@dataclass(frozen=True)
class Outcome:
    """A reply, or why the condition was not asked (the budget)."""

    reply: ChatReply | None
    budget: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"reply": None if self.reply is None else dataclasses.asdict(self.reply), "budget": self.budget}

    @classmethod
    def from_json(cls, values: dict[str, Any]) -> Outcome:
        reply = values.get("reply")
        return cls(ChatReply(**reply) if isinstance(reply, dict) else None, values.get("budget"))


class AskAhead:
    """The background loop of one process; ``limits`` are this process's share of each model's N."""

    def __init__(
        self,
        limits: dict[str, int],
        budget: Budget,
        pacers: dict[str, Pacer],
        scrub: Scrubber,
        stops: StopBoard | None,
        claims: ClaimBoard,
        interrupt: InterruptFlag | None = None,
        clients: Mapping[str, ChatClient] | None = None,
    ) -> None:
        self.limits = limits
        self._budget = budget
        self._pacers = pacers
        self._scrub = scrub
        self._stops = stops
        self._claims = claims
        self._interrupt = interrupt
        self._futures: dict[Key, concurrent.futures.Future[Outcome]] = {}
        self._in_flight: dict[str, int] = dict.fromkeys(limits, 0)
        self._own: deque[tuple[Job, concurrent.futures.Future[Outcome]]] = deque()
        self._candidates: Iterator[tuple[Key, Callable[[], Job | None]]] = iter(())
        # Where the tests of this process stand (set by each test start), the one being read, what is left of
        # it past the current window, and how much of that window was read.
        self._source: Callable[[], Iterable[tuple[Key, Callable[[], Job | None]]]] | None = None
        self._read_source: object = None
        self._reading: Iterator[tuple[Key, Callable[[], Job | None]]] = iter(())
        self._window_read = 0
        self._starving = True  # the loop has free slots and nothing left to look at (nothing yet)
        # Keys this process need not look at again this session: asked, recorded, or another process's.
        self._known: set[Key] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        # Each model's client, built by the caller on the test thread: httpx reads the proxy settings by walking
        # os.environ, which pytest changes on that thread at every test phase (PYTEST_CURRENT_TEST); walked from
        # the loop thread, the walk could meet a variable removed meanwhile and fail with a KeyError.
        self._clients = dict(clients or {})
        self._spent: str | None = None
        self._closing = False
        # The loop thread holds the GIL while it parses replies; with Python's default 5 ms switch interval
        # the test thread can then wait up to 5 ms after each of its own system calls. 0.5 ms keeps both
        # threads moving.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="snap-bench-ask-ahead", daemon=True)
        self._thread.start()

    # -- the test's side (main thread) ------------------------------------------------------------

    def look_ahead(self, candidates: Callable[[], Iterable[tuple[Key, Callable[[], Job | None]]]]) -> None:
        """Where this process stands: ``candidates()`` gives the conditions it is about to run, nearest
        first, each key with what builds its job (None: nothing to ask there, e.g. recorded already).

        Called at every test start, and cheap: the loop reads a window of candidates from the latest
        position only when it has used up the one before (or has nothing to ask: then it is woken)."""
        self._source = candidates
        if self._starving:
            self._loop.call_soon_threadsafe(self._fill)

    def settled(self, key: Key) -> Outcome | None:
        """The outcome of a condition asked ahead in this session (by any process; waiting while it is
        in flight), or None if no one asked it ahead: then its recording, if any, predates the session."""
        future = self._futures.pop(key, None)
        if future is not None:
            return future.result()
        while True:
            claimed, settled = self._claims.outcome(key)
            if settled is not None:
                return Outcome.from_json(settled)
            if not claimed:
                return None
            self._check_interrupt()  # its claimer may be a process that stops asking now
            time.sleep(POLL_S)

    def answer(self, job: Job) -> Outcome:
        """The outcome of ``job``: asked ahead by this process, by another one, or now."""
        while True:
            future = self._futures.pop(job.key, None)
            if future is None and self._claims.claim(job.key):
                future = concurrent.futures.Future()
                self._loop.call_soon_threadsafe(self._queue_own, job, future)
            if future is not None:
                return future.result()
            claimed, settled = self._claims.outcome(job.key)
            if settled is not None:
                return Outcome.from_json(settled)
            if claimed:
                self._check_interrupt()
                time.sleep(POLL_S)
            # else: its claimer is gone (killed, or gave it up): claim it on the next turn

    def _check_interrupt(self) -> None:
        if self._interrupt is not None:
            self._interrupt.check()

    def close(self, *, wait: bool) -> None:
        """Stop asking ahead; ``wait`` lets the requests in flight finish (and be recorded) first."""

        async def stop() -> None:
            self._closing = True
            if not wait:
                for task in list(self._tasks):
                    task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            for client in self._clients.values():
                await client.aclose()

        if self._thread.is_alive():
            stopping = asyncio.run_coroutine_threadsafe(stop(), self._loop)
            try:
                # Ctrl-C ends the session at once: the requests in flight are cancelled, and should the loop
                # not get to it (a busy machine), its thread is a daemon that dies with the process.
                stopping.result(timeout=None if wait else INTERRUPT_WAIT_S)
            except concurrent.futures.TimeoutError:
                return
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=None if wait else INTERRUPT_WAIT_S)
            if self._thread.is_alive():
                return
        self._loop.close()

    # -- the loop's side ---------------------------------------------------------------------------

    def _queue_own(self, job: Job, future: concurrent.futures.Future[Outcome]) -> None:
        """A test of this process waits for this condition: it goes before any condition ahead."""
        self._own.append((job, future))
        self._fill()

    def _fill(self) -> None:
        """Start what may start: this process's own waiting tests first, then the conditions ahead."""
        if self._closing:
            return
        if self._interrupt is not None and self._interrupt.is_raised():
            # Ctrl-C somewhere in the session: nothing more starts, and the tests waiting here learn why.
            while self._own:
                _, waiting = self._own.popleft()
                waiting.set_exception(Interrupted("the session was interrupted (Ctrl-C): nothing more is asked"))
            return
        while self._own:
            own, waiting = self._own[0]
            if self._in_flight[own.key[0]] >= self._room(own.key[0]):
                break
            self._own.popleft()
            self._start(own, waiting)
        if self._spent is not None:
            return
        self._starving = False
        while any(self._in_flight[model] < self._room(model) for model in self.limits):
            try:
                key, build = next(self._candidates)
            except StopIteration:
                window = max(64, 4 * max(self.limits.values()))
                source = self._source
                if source is not None and source is not self._read_source:
                    # A window, not the rest of the session: the next one is read from where the tests stand then.
                    self._read_source = source
                    self._reading = iter(source())
                elif self._window_read < window:
                    self._starving = True  # read to the end: the next test start wakes the loop
                    return
                # Else no test has started since (its own answer is being retried, say): read on past the
                # window rather than let the slots idle until that one condition's retries are over.
                self._window_read = 0
                self._candidates = itertools.islice(self._reading, window)
                continue
            self._window_read += 1
            # Rescanned at every test start, so the cheap test comes first: most keys are known.
            if key in self._known or self._in_flight.get(key[0], 0) >= self._room(key[0]):
                continue
            job = build()
            if job is None or not self._claims.claim(job.key):
                self._known.add(key)
                continue
            self._known.add(key)
            future: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
            self._futures[job.key] = future
            self._start(job, future)

    def _room(self, model: str) -> int:
        """How many of the model's requests this process may have in flight now: its share of the ceiling, as
        far as the model's adaptive window allows (snap_bench.asking.pacing)."""
        share = self.limits.get(model, 0)
        pacer = self._pacers.get(model)
        return share if pacer is None or not share else pacer.in_flight_room(share)

    def _start(self, job: Job, future: concurrent.futures.Future[Outcome]) -> None:
        self._in_flight[job.key[0]] += 1
        task = self._loop.create_task(self._run(job, future))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, job: Job, future: concurrent.futures.Future[Outcome]) -> None:
        held = True  # the slot, until the provider has answered (or the ask ended otherwise)

        def release() -> None:
            nonlocal held
            if held:
                held = False
                self._in_flight[job.key[0]] -= 1

        try:
            outcome = await self._ask(job, release)
        except asyncio.CancelledError:
            # Stopped (Ctrl-C): nothing was recorded; another process may take the condition up.
            self._claims.release(job.key)
            future.cancel()
            raise
        except Interrupted as error:
            # Ctrl-C seen before an attempt was sent: nothing was recorded, nothing more starts.
            self._claims.release(job.key)
            future.set_exception(error)
            return
        except Exception as error:  # a defect: the test that needs this answer fails with it
            self._claims.release(job.key)
            future.set_exception(error)
            return
        finally:
            release()
        self._claims.settle(job.key, outcome.to_json())
        future.set_result(outcome)
        self._fill()

    async def _ask(self, job: Job, release: Callable[[], None]) -> Outcome:
        """Ask ``job``; ``release`` frees its slot once no request of it is in flight any more."""
        model = job.key[0]
        stop = self._stops.stopped(model) if self._stops is not None else None
        if stop is not None:
            return Outcome(ChatReply(None, NOT_ASKED + stop, None, 0.0, 0))
        responses: list[httpx.Response] = []
        held: list[float] = []
        pacer = self._pacers.get(model)
        paced_at: list[float] = []  # when each attempt took its start slot

        def received(response: httpx.Response) -> None:
            responses.append(response)
            if pacer is not None:
                pacer.hear_response(response.status_code, response.headers, paced_at[-1] if paced_at else None)

        try:
            reply = await self._client(job).complete(
                job.body, before_attempt=self._before(model, job.worst_usd, held, paced_at), on_response=received
            )
        except BudgetSpent as error:
            self._spent = str(error)
            self._budget.settle(sum(held), 0.0)
            return Outcome(None, budget=str(error))
        except Interrupted:
            self._budget.settle(sum(held), 0.0)
            raise
        usable = reply.error is None
        if usable:
            # Nothing of this condition is in flight now: its slot goes to the next condition. (A failure
            # keeps it until the stop board has counted it, so a stop takes effect as soon as before.)
            release()
            self._fill()
        self._budget.settle(sum(held), job.cost(reply))
        if usable:
            # Written before anyone learns of the answer: a kill from here on loses nothing paid for.
            recorded = [interaction(r, job.canonical_uri, self._scrub) for r in responses]
            write_cassette(job.cassette, recorded, job.provider)
            # The next request goes out (up to its first wait) before this answer is published and its
            # test woken. Only here may the task be cancelled after the reply: what was paid for is recorded.
            await asyncio.sleep(0)
        if self._stops is not None:
            said = dataclasses.replace(reply, error=reply.error and self._scrub(reply.error))
            self._stops.note(job.stop_request, said)
        return Outcome(reply)

    def _before(
        self, model: str, worst_usd: float, held: list[float], paced_at: list[float]
    ) -> Callable[[int], Awaitable[None]]:
        """Before each attempt, the first included: stop if the session was interrupted, claim the attempt
        from the budget with its worst-case cost (kept in ``held`` until the ask settles), then wait for the
        model's pace (when the slot was taken goes to ``paced_at``)."""
        limit = self._pacers.get(model)

        async def before_attempt(attempt: int) -> None:
            self._check_interrupt()
            exhausted = self._budget.reserve(worst_usd)
            if exhausted:
                raise BudgetSpent(exhausted)
            held.append(worst_usd)
            if limit is not None:
                paced_at.append(await limit())
                self._check_interrupt()  # the rate limit's wait may be long: look again before sending

        return before_attempt

    def _client(self, job: Job) -> ChatClient:
        client = self._clients.get(job.key[0])
        if client is None:
            raise LookupError(f"no client for {job.key[0]}: the asking-ahead loop was built without it")
        return client
