"""A recording names the provider it was recorded through, and is read in that provider's dialect whatever its
URI looks like (a provider behind a proxy); a recording made before recordings named it is recognised by its URI."""

from __future__ import annotations

import json
from pathlib import Path

from snap_bench.recordings.exchanges import answered_interaction, write_cassette
from snap_bench.recordings.state import Recordings
from snap_bench.wire.scrub import Scrubber

# What Anthropic's Messages API answers (its text in content blocks: not an OpenAI-style reply).
MESSAGE = {
    "type": "message",
    "role": "assistant",
    "content": [{"type": "text", "text": "4"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 20, "output_tokens": 1},
}


def recorded(root: Path, uri: str, provider: str | None) -> Recordings:
    path = root / "claude" / "profile" / "c1.json"
    write_cassette(path, [answered_interaction(uri, "{}", json.dumps(MESSAGE), Scrubber())], provider)
    return Recordings(root)


def test_a_recording_naming_its_provider_is_read_in_its_dialect_wherever_it_was_sent(tmp_path: Path) -> None:
    # Anthropic's API behind a team's proxy: the URI alone would be read as a plain server's.
    recordings = recorded(tmp_path, "http://proxy.team.example/anthropic", "anthropic")
    assert json.loads((tmp_path / "claude" / "profile" / "c1.json").read_text())["provider"] == "anthropic"
    assert recordings.answer("claude", "profile", "c1") == "4"


def test_a_recording_that_names_no_provider_is_recognised_by_its_uri(tmp_path: Path) -> None:
    assert recorded(tmp_path, "https://example.org/v1/messages", None).answer("claude", "profile", "c1") == "4"
    assert recorded(tmp_path, "http://proxy.team.example/anthropic", None).answer("claude", "profile", "c1") is None
