"""`--model=openrouter:vendor/model-id` in a session, in-process (run_session) against the fake server: recorded
under its own name, then replayed."""

from __future__ import annotations

import pytest

from snap_bench.observations.export import read_jsonl
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer

SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6


def test_an_adhoc_model_is_recorded_then_replayed(
    project: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(project.session("--model=openrouter:fake/adhoc-1", *SMALL).observations) == SMALL_SIZE
    assert {r["model"] for r in fake_server.script.requests} == {"fake/adhoc-1"}
    assert len(list((project.cassettes / "fake--adhoc-1" / "profile").glob("*.json"))) == SMALL_SIZE
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    assert len(project.session("--model=openrouter:fake/adhoc-1", *SMALL).observations) == SMALL_SIZE
    assert len(fake_server.script.requests) == SMALL_SIZE
    assert all(o.replayed and o.model == "fake--adhoc-1" for o in read_jsonl(project.out / "observations.jsonl"))
