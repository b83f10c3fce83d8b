"""--snap-shard=K/N in a session, in-process (run_session): parts recorded apart and replayed together like one run
(the parts themselves: tests/unit/design/test_shard_parts.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SLICE, SLICE_SIZE, BenchProject
from tests.fake_openai_server import FakeOpenAIServer


def varied_answer(request: dict[str, Any]) -> str:
    """A different (but fixed) answer per prompt, so the analysis has something to differ on."""
    text = json.dumps(request["messages"], sort_keys=True) + str(request.get("temperature"))
    return str(sum(text.encode("utf-8")) % 5 + 1)


def analysed(out: Path) -> dict[str, Any]:
    document = json.loads((out / "analysis.json").read_text(encoding="utf-8"))
    instruments: dict[str, Any] = document["instruments"]
    return instruments


def test_two_shards_recorded_apart_and_gathered_replay_like_one_run(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.answer = varied_answer
    parts = [project.root / "parts" / str(k) for k in (1, 2)]
    counts = []
    for k, folder in enumerate(parts, start=1):
        result = project.session("--model=fake-model", *SLICE, f"--snap-shard={k}/2", f"--snap-cassettes={folder}")
        counts.append(len(result.observations))
    files = [{p.relative_to(folder) for p in folder.rglob("*.json")} for folder in parts]
    assert not files[0] & files[1]
    assert len(files[0] | files[1]) == SLICE_SIZE == sum(counts)
    assert all(counts)  # each part has some of the 18

    gathered = project.root / "gathered"
    for folder in parts:
        shutil.copytree(folder, gathered, dirs_exist_ok=True)
    asked = len(fake_server.script.requests)
    project.session(
        "--model=fake-model",
        *SLICE,
        f"--snap-cassettes={gathered}",
        f"--snap-out={project.root / 'out-gathered'}",
        gate=True,
    )
    assert len(fake_server.script.requests) == asked  # the gathered recordings replay: nothing asked

    single = project.root / "single"
    project.session(
        "--model=fake-model",
        *SLICE,
        f"--snap-cassettes={single}",
        f"--snap-out={project.root / 'out-single'}",
        gate=True,
    )
    assert len(fake_server.script.requests) == asked + SLICE_SIZE  # one run records the same conditions
    gathered_analysis = analysed(project.root / "out-gathered")
    assert gathered_analysis["profile"]["models"]["fake-model"]["metrics"]  # something was analysed
    assert gathered_analysis == analysed(project.root / "out-single")


def test_a_bad_shard_is_a_usage_error(project: BenchProject) -> None:
    # pytest shows an option value its parser refuses as a usage error; in-process it is a ValueError
    with pytest.raises(ValueError, match=r"--snap-shard.*3/2.*1 <= K <= N"):
        project.session("--model=fake-model", "--snap-shard=3/2")
