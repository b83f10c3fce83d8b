"""The shared limits' state file: updates from several processes and threads never lose one, in either mode."""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from snap_bench.asking.throttle import SharedState

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


def test_an_in_place_state_shrinking_leaves_no_tail(tmp_path: Path) -> None:
    state = SharedState(tmp_path / "pace.json", durable=False)
    state.update(lambda _: ({"starts": list(range(50))}, None))
    state.update(lambda _: ({"sent": 1}, None))
    assert state.peek() == {"sent": 1}
    assert (tmp_path / "pace.json").read_bytes() == b'{"sent": 1}'


def test_a_torn_in_place_state_reads_as_empty(tmp_path: Path) -> None:
    """A process killed between writing and truncating leaves the new document followed by the old one's tail:
    it is read as no state (the pace starts over), never as a wrong one."""
    path = tmp_path / "pace.json"
    path.write_bytes(b'{"sent": 1}' + b"0, 1, 2, 3]}")
    assert SharedState(path, durable=False).read() == {}


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors through Linux's /proc")
def test_a_state_let_go_closes_its_descriptors(tmp_path: Path) -> None:
    """Each state keeps its files open while it lives (a session builds some for one read): none outlives it."""

    def open_descriptors() -> int:
        # Only this test's files: the process's other descriptors come and go with earlier tests' garbage.
        held = 0
        for name in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError):
                held += os.readlink(f"/proc/self/fd/{name}").startswith(str(tmp_path))
        return held

    before = open_descriptors()
    for number in range(20):
        SharedState(tmp_path / f"state-{number}.json", durable=False).update(_count)
    gc.collect()
    assert open_descriptors() == before
