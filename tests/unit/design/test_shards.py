"""--snap-shard=K/N: stable, disjoint parts of one model's conditions, recorded apart and replayed together."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from snap_bench.design.shards import in_shard, part_of
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


def test_parts_are_stable_disjoint_and_cover_everything() -> None:
    ids = [f"model-M{item:02d}-P{p}-NEU-t0-C0-r{run}" for item in range(1, 11) for p in (1, 2, 3) for run in (1, 2, 3)]
    parts = {test_id: [k for k in (1, 2, 3) if in_shard(test_id, (k, 3))] for test_id in ids}
    assert all(len(found) == 1 for found in parts.values())
    assert {found[0] for found in parts.values()} == {1, 2, 3}
    assert all(part_of(test_id, 3) == found[0] for test_id, found in parts.items())
    assert all(in_shard(test_id, None) for test_id in ids)


def test_two_shards_recorded_apart_and_gathered_replay_like_one_run(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.answer = varied_answer
    parts = [bench.root / "parts" / str(k) for k in (1, 2)]
    counts = []
    for k, folder in enumerate(parts, start=1):
        result = bench.run("--model=fake-model", *SLICE, f"--snap-shard={k}/2", f"--snap-cassettes={folder}")
        counts.append(result.parseoutcomes()["passed"])
    files = [{p.relative_to(folder) for p in folder.rglob("*.json")} for folder in parts]
    assert not files[0] & files[1]
    assert len(files[0] | files[1]) == SLICE_SIZE == sum(counts)
    assert all(counts)  # each part has some of the 18

    gathered = bench.root / "gathered"
    for folder in parts:
        shutil.copytree(folder, gathered, dirs_exist_ok=True)
    asked = len(fake_server.script.requests)
    bench.run(
        "--model=fake-model",
        *SLICE,
        f"--snap-cassettes={gathered}",
        f"--snap-out={bench.root / 'out-gathered'}",
        gate=True,
    )
    assert len(fake_server.script.requests) == asked  # the gathered recordings replay: nothing asked

    single = bench.root / "single"
    bench.run(
        "--model=fake-model", *SLICE, f"--snap-cassettes={single}", f"--snap-out={bench.root / 'out-single'}", gate=True
    )
    assert len(fake_server.script.requests) == asked + SLICE_SIZE  # one run records the same conditions
    gathered_analysis = analysed(bench.root / "out-gathered")
    assert gathered_analysis["profile"]["models"]["fake-model"]["metrics"]  # something was analysed
    assert gathered_analysis == analysed(bench.root / "out-single")


def test_a_bad_shard_is_a_usage_error(bench: BenchProject) -> None:
    result = bench.run("--model=fake-model", "--snap-shard=3/2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--snap-shard*3/2*1 <= K <= N*"])
