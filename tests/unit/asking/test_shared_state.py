"""The shared limits' state file, in one process (several processes: tests/slow/test_shared_state_processes.py)."""

from __future__ import annotations

import contextlib
import gc
import os
from pathlib import Path
from typing import Any

import pytest

from snap_bench.asking.throttle import SharedState


def _count(state: dict[str, Any]) -> tuple[dict[str, Any], None]:
    return {**state, "count": int(state.get("count", 0)) + 1}, None


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
