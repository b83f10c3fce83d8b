"""A benchmark session leaves its heap frozen for the exit, and the next session in the process thaws it.

In process (``inline_run``: two pytest sessions), because the collector's state is what is checked; the sessions
replay recordings made first in-process (run_session) against the fake server.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tests.conftest import SLICE, SLICE_SIZE, BenchProject
from tests.fake_openai_server import FakeOpenAIServer


@pytest.fixture
def recorded(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[BenchProject]:
    assert len(bench.session("--model=fake-model", *SLICE).observations) == SLICE_SIZE
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    monkeypatch.chdir(bench.root)
    try:
        yield bench
    finally:
        gc.unfreeze()  # whatever a failing check left frozen goes back to this process's collector


def test_a_benchmark_session_ends_frozen_and_the_next_session_thaws_it_freezing_nothing(
    recorded: BenchProject,
) -> None:
    assert recorded.pytester is not None
    gc.unfreeze()
    outcome = recorded.pytester.inline_run("benchmarks", "-p", "no:cacheprovider", "--snap-no-analysis", *SLICE)
    outcome.assertoutcome(passed=SLICE_SIZE)
    assert gc.get_freeze_count() > 0
    # A session without benchmark tests thaws what the benchmark froze, and freezes nothing of its own.
    recorded.pytester.makepyfile(test_plain="def test_nothing():\n    pass\n")
    recorded.pytester.inline_run("test_plain.py", "-p", "no:cacheprovider").assertoutcome(passed=1)
    assert gc.get_freeze_count() == 0
