"""The scrubber: configured keys (environment, .env) and key-shaped text leave no trace; answers stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.asking.credentials import configured_scrubber
from snap_bench.wire.scrub import REDACTED, Scrubber


def test_configured_keys_come_from_the_environment_and_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROVIDER_KEY", "value-from-environment-123")
    monkeypatch.setenv("OPENROUTER_API_KEY", "openrouter-value-456789")
    dotenv = tmp_path / ".env"
    dotenv.write_text("OTHER_TOKEN=value-from-dotenv-789\nDEBUG=1\nexport NAME='a plain setting'\n", encoding="utf-8")
    scrub = configured_scrubber(["MY_PROVIDER_KEY"], dotenv)
    text = "value-from-environment-123 openrouter-value-456789 value-from-dotenv-789 answer 1 a plain setting"
    assert scrub(text) == f"{REDACTED} {REDACTED} {REDACTED} answer 1 a plain setting"


@pytest.mark.parametrize(
    "secret",
    ["sk-or-v1-" + "0a" * 32, "sk-proj-" + "x" * 40, "sk-ant-api03-" + "y" * 30, "sk-" + "z" * 48],
)
def test_key_shaped_text_is_removed_without_configuration(secret: str) -> None:
    assert Scrubber()(f"Incorrect API key provided: {secret}.") == f"Incorrect API key provided: {REDACTED}."


def test_bearer_tokens_are_removed_and_answers_are_kept() -> None:
    scrub = Scrubber(["short", "a-long-enough-secret"])
    assert scrub("Authorization: Bearer abc.def-123456") == f"Authorization: Bearer {REDACTED}"
    assert scrub("4 short a-long-enough-secret") == f"4 short {REDACTED}"  # too short to be a key: kept
    assert scrub.deep({"messages": [{"content": "a-long-enough-secret"}], "n": 3}) == {
        "messages": [{"content": REDACTED}],
        "n": 3,
    }
