"""`--model=openrouter:vendor/model-id` asks a model that has no entry in models.yaml."""

from __future__ import annotations

import pytest

from snap_bench.design.config import ConfigError
from snap_bench.design.models import OPENROUTER_URL, load_models
from snap_bench.observations.export import read_jsonl
from tests.conftest import SHIPPED, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6


def test_an_openrouter_id_needs_no_entry_and_takes_the_shipped_defaults() -> None:
    registry = load_models(SHIPPED)
    (model,) = registry.resolve(["openrouter:deepseek/deepseek-r1:free"])
    assert model.provider_id == "deepseek/deepseek-r1:free"
    assert model.name == "deepseek--deepseek-r1_free"  # a folder and a test id
    assert model.base_url == OPENROUTER_URL
    assert model.api_key_env == "OPENROUTER_API_KEY"
    assert model.price is None
    assert model.reasoning is None
    assert model.max_tokens is None


@pytest.mark.parametrize("name", ["openrouter:", "openrouter:gpt-5.2", "openrouter:a/b/c", "openrouter:x/y z"])
def test_a_malformed_openrouter_id_is_a_config_error_with_the_form(name: str) -> None:
    registry = load_models(SHIPPED)
    with pytest.raises(ConfigError, match="openrouter:vendor/model-id"):
        registry.resolve([name])


@pytest.mark.parametrize("workers", [pytest.param((), id="plain"), pytest.param(("-n", "2"), id="xdist")])
def test_an_adhoc_model_is_recorded_then_replayed(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    bench.run("--model=openrouter:fake/adhoc-1", *SMALL, *workers).assert_outcomes(passed=SMALL_SIZE)
    assert {r["model"] for r in fake_server.script.requests} == {"fake/adhoc-1"}
    assert len(list((bench.cassettes / "fake--adhoc-1" / "profile").glob("*.json"))) == SMALL_SIZE
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    bench.run("--model=openrouter:fake/adhoc-1", *SMALL, *workers).assert_outcomes(passed=SMALL_SIZE)
    assert len(fake_server.script.requests) == SMALL_SIZE
    assert all(o.replayed and o.model == "fake--adhoc-1" for o in read_jsonl(bench.out / "observations.jsonl"))
