"""No cassette in the repository may hold an API key or an Authorization header."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snap_bench.recordings.cassettes import leaked_secrets

SHIPPED = Path(__file__).resolve().parent.parent / "cassettes"


def test_shipped_cassettes_hold_no_secret() -> None:
    assert leaked_secrets(SHIPPED) == []


# Built at run time, so that this file itself does not look like a leaked key to secret scanners.
FAKE_TOKEN = "x" * 24


@pytest.mark.parametrize(
    "planted",
    [
        {"request": {"headers": {"Author" + "ization": ["Bearer " + FAKE_TOKEN]}}},
        {"request": {"headers": {"x-api-key": ["anything"]}}},
        {"response": {"body": {"string": "echo sk-or-v1-" + FAKE_TOKEN}}},
        {"response": {"body": {"string": "key sk-proj-" + FAKE_TOKEN}}},
    ],
    ids=["authorization-header", "api-key-header", "openrouter-key", "openai-key"],
)
def test_the_scan_finds_a_planted_secret(tmp_path: Path, planted: dict[str, object]) -> None:
    cassette = tmp_path / "model" / "profile" / "M01-P1-NEU-t0-C0-r1.json"
    cassette.parent.mkdir(parents=True)
    cassette.write_text(json.dumps({"interactions": [planted], "version": 1}), encoding="utf-8")
    assert leaked_secrets(tmp_path) != []


def test_the_scan_passes_a_clean_recording(tmp_path: Path) -> None:
    clean = {"request": {"headers": {"Content-Type": ["application/json"]}, "body": "{}"}}
    cassette = tmp_path / "m" / "profile" / "x.json"
    cassette.parent.mkdir(parents=True)
    cassette.write_text(json.dumps({"interactions": [clean], "version": 1}), encoding="utf-8")
    assert leaked_secrets(tmp_path) == []
