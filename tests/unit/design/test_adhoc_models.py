"""`--model=openrouter:vendor/model-id` asks a model that has no entry in models.yaml (its session:
tests/session/test_adhoc_models.py)."""

from __future__ import annotations

import pytest

from snap_bench.design.config import ConfigError
from snap_bench.design.models import OPENROUTER_URL, load_models
from tests.conftest import SHIPPED


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
