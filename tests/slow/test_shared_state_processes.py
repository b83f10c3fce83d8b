"""The shared limits' state file: updates from several processes and threads never lose one, in either mode.

Real processes (spawned, as xdist's workers), so this tier's and not the unit tier's, which starts none.
"""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path
from typing import Any

import pytest

from snap_bench.asking.throttle import SharedState

pytestmark = pytest.mark.slow

UPDATES = 1000


def _count(state: dict[str, Any]) -> tuple[dict[str, Any], None]:
    # Read, then write a value derived from it: an update that is not exclusive loses counts.
    return {**state, "count": int(state.get("count", 0)) + 1}, None


def _increment(path: str, durable: bool) -> None:
    state = SharedState(Path(path), durable=durable)
    threads = [threading.Thread(target=lambda: [state.update(_count) for _ in range(UPDATES)]) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


@pytest.mark.parametrize("durable", [True, False], ids=["durable", "in-place"])
def test_no_update_is_lost_across_processes_and_threads(tmp_path: Path, durable: bool) -> None:
    path = tmp_path / "state" / "shared.json"
    context = multiprocessing.get_context("spawn")  # as xdist's workers: no descriptor inherited
    processes = [context.Process(target=_increment, args=(str(path), durable)) for _ in range(2)]
    for process in processes:
        process.start()
    _increment(str(path), durable)  # this process too, at the same time
    for process in processes:
        process.join()
        assert process.exitcode == 0
    assert SharedState(path, durable=durable).read() == {"count": 3 * 2 * UPDATES}
