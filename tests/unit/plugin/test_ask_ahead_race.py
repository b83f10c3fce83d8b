"""The asking-ahead thread reads the conditions ahead while the test thread goes on with pytest: nothing it
reads may be a dict the test thread changes meanwhile.

It used to find the xdist worker's queue by iterating pytest's plugin registry (pluggy's ``get_plugins()``
is a Python loop over a dict) each time it read a window of conditions, so a plugin registered or
unregistered by the test thread at that moment raised "RuntimeError: dictionary changed size during
iteration" in the loop thread. This runs the look-ahead path many times in one process, with the test
thread (un)registering plugins all along, and a GIL switch interval short enough to make the interleaving
likely. Against the old code it fails about one run in three (1 in 5 measured with half the rounds); a
race cannot be made certain without slowing the test beyond a unit test's few seconds.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pluggy
import pytest

from snap_bench.asking.ask_ahead import AskAhead, Job
from snap_bench.asking.claims import ClaimBoard, Key
from snap_bench.asking.client import ChatClient, RetryPolicy
from snap_bench.asking.stops import Request
from snap_bench.asking.throttle import Budget, BudgetLimits, SharedState
from snap_bench.plugin.process import remember_worker_queue, upcoming_params
from snap_bench.wire.scrub import Scrubber
from tests.fake_openai_server import FakeOpenAIServer

ROUNDS = 6000
PLUGINS = 2000  # a long registry: the loop over it spans many switch intervals


class QueueHolder:
    """Stands in for xdist's WorkerInteractor: a ``torun`` queue with a ``lock()`` yielding the pending indices."""

    def __init__(self) -> None:
        self.torun = self
        self._lock = threading.Lock()
        self.pending = [3, 4, 5]

    def lock(self) -> Any:
        holder = self

        class Held:
            def __enter__(self) -> list[int]:
                holder._lock.acquire()
                return holder.pending

            def __exit__(self, *exc_info: object) -> None:
                holder._lock.release()

        return Held()


class Plugin:
    """A plugin with no hooks (each one its own: equal only to itself)."""


def fake_session(count: int) -> tuple[Any, list[Any]]:
    manager = pluggy.PluginManager("race")
    manager.register(QueueHolder(), "worker")
    for number in range(PLUGINS):
        manager.register(Plugin(), f"plugin-{number}")
    config = SimpleNamespace(pluginmanager=manager, workerinput={}, stash=pytest.Stash())
    session = SimpleNamespace(items=[], stash=pytest.Stash())
    items = [
        SimpleNamespace(
            nodeid=f"test[{index}]", session=session, config=config, callspec=SimpleNamespace(params={"case": index})
        )
        for index in range(count)
    ]
    session.items = items
    return config, items


def test_the_look_ahead_thread_reads_no_dict_the_test_thread_changes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config, items = fake_session(64)
    remember_worker_queue(config)  # what the session does in the test thread before asking ahead
    budget = Budget(SharedState(tmp_path / "budget.json"), BudgetLimits())
    ahead = AskAhead({"m": 4}, budget, {}, Scrubber(), None, ClaimBoard(tmp_path))
    errors: list[BaseException] = []
    # Nothing is asked (every job is None): each window is read through to the end, then the next test start
    # wakes the loop to read another.
    read = threading.Event()

    def candidates(item: Any) -> Iterable[tuple[Key, Any]]:
        def read_window() -> Iterator[tuple[Key, Any]]:
            try:
                for case in upcoming_params(item, "case"):
                    yield ("m", "i", str(case)), lambda: None
            except BaseException as error:  # raised in the loop thread: kept for the test thread to see
                errors.append(error)
                raise
            finally:
                read.set()

        return read_window()

    manager = config.pluginmanager
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    caplog.set_level(logging.ERROR, logger="asyncio")
    try:
        for round_number in range(ROUNDS):
            read.clear()
            item = items[round_number % len(items)]
            ahead.look_ahead(lambda item=item: candidates(item))  # type: ignore[misc]
            # The test thread goes on with pytest meanwhile: plugins come and go until the window is read
            # (bounded: the loop reads one window per test start).
            deadline = time.monotonic() + 10.0
            while not read.is_set() and time.monotonic() < deadline:
                manager.register(Plugin(), "transient")
                manager.unregister(name="transient")
            if errors:
                break
    finally:
        sys.setswitchinterval(switch)
        ahead.close(wait=True)
    assert not errors, f"the look-ahead thread failed: {errors[0]!r}"
    assert not [record for record in caplog.records if "changed size" in record.getMessage()]


def test_the_look_ahead_thread_never_walks_the_environment(
    tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pytest sets and removes PYTEST_CURRENT_TEST on the test thread at every test phase; a walk over
    os.environ from another thread (httpx reads the proxy settings so when a client is built) can meet the
    variable just removed and fail with a KeyError (a resumed session's first test failed so once). The loop
    is handed clients built on the test thread: asking through it walks nothing. Certain, not a race: every
    walk off the test thread is counted."""
    walkers: list[str] = []
    environ_type = type(os.environ)
    walk = environ_type.__iter__

    def counted_walk(self: Any) -> Iterator[str]:
        if threading.current_thread() is not threading.main_thread():
            walkers.append(threading.current_thread().name)
        return walk(self)

    budget = Budget(SharedState(tmp_path / "budget.json"), BudgetLimits())
    client = ChatClient(fake_server.base_url, "sk-fake", RetryPolicy(max_attempts=1))
    monkeypatch.setattr(environ_type, "__iter__", counted_walk)
    ahead = AskAhead({"m": 2}, budget, {}, Scrubber(), None, ClaimBoard(tmp_path), clients={"m": client})
    job = Job(
        key=("m", "i", "c1"),
        canonical_uri=f"{fake_server.base_url}/chat/completions",
        body=json.dumps({"model": "m", "messages": [{"role": "user", "content": "Rate 1-5."}]}).encode(),
        cassette=tmp_path / "c1.json",
        cost=lambda reply: 0.0,
        worst_usd=0.0,
        stop_request=Request("m", "m", fake_server.base_url, None),
    )
    try:
        outcome = ahead.answer(job)
    finally:
        ahead.close(wait=True)
    assert outcome.reply is not None
    assert outcome.reply.error is None, outcome
    assert (tmp_path / "c1.json").is_file()
    assert walkers == []
