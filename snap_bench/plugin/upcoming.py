"""The benchmark conditions a test process is about to run, nearest first, for asking ahead.

Under xdist a worker's own queue comes first (the test indices the controller has sent it and it has
not run yet); then, in any process, the collection's order after the current test. The second part
may hold another worker's conditions: asking one of those ahead is no waste (claims make each
condition asked once, and the worker that runs it reads the answer), and it keeps the requests in
flight when a worker's own queue runs short near the end of a session.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

_POSITIONS = pytest.StashKey[dict[str, int]]()


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


def _worker_queue(config: pytest.Config) -> list[int]:
    """The indices queued on this xdist worker (empty outside a worker, or if xdist changes its queue)."""
    for plugin in config.pluginmanager.get_plugins():
        queue = getattr(plugin, "torun", None)
        lock = getattr(queue, "lock", None)
        if queue is not None and callable(lock) and hasattr(config, "workerinput"):
            with lock() as pending:
                return [index for index in pending if isinstance(index, int)]
    return []
