"""The session's recordings: the one answer to "is this condition's request recorded, stale or damaged?".

The asker (replay or record), the local-server start-up (is anything left to record?), an instrument
stage that depends on earlier answers (the perturbation's phase 2) and the tests all ask here, with the
request built by :func:`snap_bench.wire.request.condition_request`, so that the rule that decides whether a
recording holds a condition's request (same endpoint, same body bytes) is written once, in
:func:`snap_bench.recordings.cassettes.examine`. What the recorded responses answer is the asker's to read
(:mod:`snap_bench.asking.replay`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from snap_bench.providers import PLAIN, provider_of_recording
from snap_bench.recordings.cassettes import (
    CassetteState,
    RecordedResponse,
    cassette_path,
    examine,
    recorded_models,
    recorded_provider,
)
from snap_bench.wire.dialects import answer_text
from snap_bench.wire.request import METHOD, ConditionRequest


@dataclass(frozen=True)
class RecordingCheck:
    """One condition's recording: where it is, the request it must hold, and whether it does."""

    path: Path
    request: ConditionRequest
    state: CassetteState
    why: str
    # What was recorded for the request when the state is MATCHES (read with the check: the file is read once).
    responses: tuple[RecordedResponse, ...] = ()

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

    def check(self, request: ConditionRequest) -> RecordingCheck:
        """Whether the condition's recording holds ``request``, byte for byte, at the URI it names (the
        model's canonical URL: a local model's recordings name a fixed one, whatever its port)."""
        path = self.path(request.model, request.instrument, request.condition_id)
        state, why, responses = examine(path, METHOD, request.uri, request.body)
        return RecordingCheck(path, request, state, why, responses)

    def answer(self, model: str, instrument: str, condition_id: str) -> str | None:
        """The assistant's text in the condition's recording, or None without a successful exchange."""
        path = self.path(model, instrument, condition_id)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            interactions = document["interactions"]
            response = interactions[-1]["response"]
            if response["status"]["code"] != 200:
                return None
            uri = str(interactions[-1]["request"]["uri"])
            # The provider the cassette names, else (recorded before cassettes named it) the one its URI is.
            provider = provider_of_recording(uri, recorded_provider(document))
            if provider.name != PLAIN:
                return answer_text(uri, response["body"]["string"], provider.name)
            content = json.loads(response["body"]["string"])["choices"][0]["message"]["content"]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return None
        return content if isinstance(content, str) else None
