"""The benchmark conditions a test process is about to run, nearest first, for asking ahead.

Under xdist a worker's own queue comes first (the test indices the controller has sent it and it has
not run yet); then, in any process, the collection's order after the current test. The second part
may hold another worker's conditions: asking one of those ahead is no waste (claims make each
condition asked once, and the worker that runs it reads the answer), and it keeps the requests in
flight when a worker's own queue runs short near the end of a session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

_POSITIONS = pytest.StashKey[dict[str, int]]()
# The plugin holding an xdist worker's queue (``torun``), found by the test thread: remember_worker_queue.
_QUEUE_HOLDER = pytest.StashKey[object]()


def upcoming_params(item: pytest.Item, name: str, *, including: bool = False) -> Iterator[Any]:
    """The ``name`` parameter (e.g. ``case``) of each test after ``item`` (``including`` it), nearest first."""
    session = item.session
    items = session.items
    positions = session.stash.get(_POSITIONS, None)
    if positions is None or len(positions) != len(items):
        positions = {each.nodeid: index for index, each in enumerate(items)}
        session.stash[_POSITIONS] = positions
    here = positions.get(item.nodeid, len(items))
    for index in [*_worker_queue(item.config), *range(here if including else here + 1, len(items))]:
        callspec = getattr(items[index], "callspec", None)
        if callspec is not None and name in callspec.params:
            yield callspec.params[name]


def remember_worker_queue(config: pytest.Config) -> None:
    """Find the xdist worker's queue of test indices once, in the thread that runs the tests.

    The asking-ahead thread reads the queue later; it must not look for it itself: pluggy's
    ``get_plugins()`` iterates the plugin registry in Python, and a plugin registered or unregistered by
    the test thread meanwhile made it raise "dictionary changed size during iteration".
    """
    holder = None
    if hasattr(config, "workerinput"):
        holder = next((plugin for plugin in config.pluginmanager.get_plugins() if _queue_lock(plugin)), None)
    config.stash[_QUEUE_HOLDER] = holder


def _queue_lock(plugin: object) -> Callable[[], Any] | None:
    lock = getattr(getattr(plugin, "torun", None), "lock", None)
    return lock if callable(lock) else None


def _worker_queue(config: pytest.Config) -> list[int]:
    """The indices queued on this xdist worker (empty outside a worker, or if xdist changes its queue)."""
    lock = _queue_lock(config.stash.get(_QUEUE_HOLDER, None))
    if lock is None:
        return []
    with lock() as pending:
        return [index for index in pending if isinstance(index, int)]
