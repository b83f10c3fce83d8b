"""--snap-batch: every unrecorded condition asked through the provider's batch API before any test asks, its
answers written as synchronous recordings, its batches kept with the recordings so that no run submits twice."""

from __future__ import annotations

import json
import textwrap
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

from snap_bench.observations.export import read_jsonl
from tests.conftest import FAKE_KEY, SLICE, SLICE_SIZE, WORKERS, BenchProject
from tests.fake_batch_apis import OPENAI, OPENROUTER, BatchScript, FakeBatchApis

FAST = ("--snap-batch-poll=0.01",)


def varied_answer(body: dict[str, Any]) -> str:
    """An answer from 1 to 5 that depends on the prompt, so that the figures are not all alike."""
    return str(1 + zlib.crc32(json.dumps(body["messages"], sort_keys=True).encode()) % 5)


@pytest.fixture(params=[OPENAI, OPENROUTER])
def provider(request: pytest.FixtureRequest) -> Iterator[FakeBatchApis]:
    with FakeBatchApis(BatchScript(flavour=request.param, answer=varied_answer)) as fake:
        yield fake
    assert not fake.script.errors, fake.script.errors[:3]


def batch_project(pytester: pytest.Pytester, fake: FakeBatchApis, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    project = BenchProject(pytester, fake.base_url)
    (project.root / "config" / "models.yaml").write_text(
        textwrap.dedent(f"""\
        defaults:
          base_url: {fake.base_url}
          api_key_env: FAKE_OPENAI_KEY
        models:
          fake-model:
            id: fake/model
            dialect: {fake.script.flavour}
            price: {{input_per_million: 1.0, output_per_million: 2.0}}
        """),
        encoding="utf-8",
    )
    return project


@pytest.fixture
def bench(pytester: pytest.Pytester, provider: FakeBatchApis, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    return batch_project(pytester, provider, monkeypatch)


@pytest.mark.parametrize("workers", WORKERS)
def test_every_condition_is_recorded_through_the_batch_api_without_a_synchronous_request(
    bench: BenchProject, provider: FakeBatchApis, workers: tuple[str, ...]
) -> None:
    result = bench.run("--model=fake-model", *SLICE, "--snap-batch", *FAST, *workers)
    result.assert_outcomes(passed=SLICE_SIZE)
    assert provider.script.chat_requests == []
    assert len(provider.script.submissions) == 1
    assert len(list((bench.cassettes / "fake-model" / "profile").glob("*.json"))) == SLICE_SIZE
    result.stdout.fnmatch_lines(["*fake-model: batch * submitted (18 requests*", "*fake-model: batch * 18/18 done*"])
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert all(o.replayed and o.score is not None for o in observations)
    spend = json.loads((bench.out / "session.json").read_text(encoding="utf-8"))["spend"]["fake-model"]
    assert spend["batch_requests"] == SLICE_SIZE
    assert spend["cost_usd"] == pytest.approx(provider.script.billed_usd)
