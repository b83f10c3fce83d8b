"""Mistral's provider module as its documentation describes the API: an entry naming it alone goes to its API
with its key, a base URL on its host takes its key, and its per-minute request headers pace the model."""

from __future__ import annotations

from pathlib import Path

from snap_bench.asking.rate_headers import RateHeaders, read_rate_headers
from snap_bench.design.config import ConfigFiles
from snap_bench.design.models import load_models
from snap_bench.wire.dialects import request_payload
from tests.fake_mistral import RATE_LIMIT_PER_MINUTE


def test_an_entry_naming_mistral_or_its_host_is_asked_there_with_its_key(tmp_path: Path) -> None:
    (tmp_path / "models.yaml").write_text(
        "models:\n"
        "  named:\n    id: mistral-small-latest\n    dialect: mistral\n"
        "  hosted:\n    id: mistral-small-latest\n    base_url: https://api.mistral.ai/v1\n",
        encoding="utf-8",
    )
    models = load_models(ConfigFiles(tmp_path)).models
    for model in (models["named"], models["hosted"]):
        assert (model.dialect, model.base_url, model.api_key_env) == (
            "mistral",
            "https://api.mistral.ai/v1",
            "MISTRAL_API_KEY",
        )
    body = request_payload(models["named"], [{"role": "user", "content": "hi"}], 0.5, 24)
    # max_tokens (Mistral refuses max_completion_tokens); no seed: runs stay repetitions
    assert body == {
        "model": "mistral-small-latest",
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 0.5,
        "max_tokens": 24,
    }


def test_its_per_minute_request_headers_are_read_as_the_limit() -> None:
    headers = {"x-ratelimit-limit-req-minute": str(RATE_LIMIT_PER_MINUTE), "x-ratelimit-remaining-req-minute": "0"}
    assert read_rate_headers(headers, 0.0) == RateHeaders(limit=RATE_LIMIT_PER_MINUTE, remaining=0, reset_s=None)
