"""The session's recordings: the one answer to "is this condition recorded, stale or damaged?".

The asker (replay or record), the local-server start-up (is anything left to record?), an instrument
stage that depends on earlier answers (the perturbation's phase 2) and the tests all ask here, so that the
rule that decides whether a recording still answers a condition (same endpoint, same request body, a
usable reply) is written once, in :func:`snap_bench.recordings.cassettes.examine`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from snap_bench.asking.client import ChatReply
from snap_bench.asking.request_fields import condition_body
from snap_bench.recordings.cassettes import CassetteState, cassette_path, examine, recorded_models

if TYPE_CHECKING:
    from snap_bench.design.models import ModelSpec
    from snap_bench.observations.observation import Condition


class Asked(Protocol):
    """What renders a condition into a request (every Instrument does)."""

    @property
    def name(self) -> str: ...

    max_tokens: int

    def messages(self, condition: Condition) -> list[dict[str, str]]: ...


@dataclass(frozen=True)
class RecordingCheck:
    """One condition's recording: where it is, what request it must hold, and whether it does."""

    path: Path
    uri: str
    body: bytes
    state: CassetteState
    why: str
    # The recorded answer when the state is MATCHES (read with the check: the file is parsed once).
    reply: ChatReply | None = None

    @property
    def matches(self) -> bool:
        return self.state is CassetteState.MATCHES


class Recordings:
    """The folder ``<root>/<model>/<instrument>/<condition-id>.json`` and what each file holds."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, model: str, instrument: str, condition_id: str) -> Path:
        return cassette_path(self.root, model, instrument, condition_id)

    def folder(self, model: str, instrument: str) -> Path:
        return self.root / model / instrument

    def models(self) -> list[str]:
        """The models with at least one recording."""
        return recorded_models(self.root)

    def check(self, model: ModelSpec, url: str, instrument: Asked, condition: Condition) -> RecordingCheck:
        """Whether the recording of ``condition`` answers the request this session would send to ``url``
        (the model's canonical URL: a local model's recordings name a fixed one, whatever its port)."""
        # The entry's own fields (max_tokens, reasoning, logprobs) are part of the body it must match.
        body = condition_body(model, instrument.messages(condition), condition.temperature, instrument.max_tokens)
        uri = f"{url}/chat/completions"
        path = self.path(model.name, instrument.name, condition.id)
        state, why, reply = examine(path, "POST", uri, body)
        return RecordingCheck(path, uri, body, state, why, reply)

    def answer(self, model: str, instrument: str, condition_id: str) -> str | None:
        """The assistant's text in the condition's recording, or None without a successful exchange."""
        path = self.path(model, instrument, condition_id)
        try:
            interactions = json.loads(path.read_text(encoding="utf-8"))["interactions"]
            response = interactions[-1]["response"]
            if response["status"]["code"] != 200:
                return None
            content = json.loads(response["body"]["string"])["choices"][0]["message"]["content"]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return None
        return content if isinstance(content, str) else None
