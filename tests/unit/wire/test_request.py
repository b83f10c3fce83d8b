"""One request per condition: the bytes the asker sends are the bytes the recordings look up, byte for byte."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from snap_bench.asking.replay import replay
from snap_bench.design.models import ModelSpec
from snap_bench.observations.observation import Condition
from snap_bench.recordings.cassettes import CassetteState
from snap_bench.recordings.state import Recordings
from snap_bench.wire.dialects import encode, request_payload
from snap_bench.wire.request import condition_request

MODEL = ModelSpec("m", "m", "vendor/m", "t", "http://127.0.0.1:8080/v1", None, None, None)
CONDITION = Condition("toy", "Q1", (("temperature", "t0.5"),), 0.5, 1)


class Toy:
    """An instrument as the request sees one: a name, an output budget, messages for a condition."""

    name = "toy"
    max_tokens = 12

    def messages(self, condition: Condition) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"Rate {condition.item}: é"}]


def record(path: Path, uri: str, body: str, answer: str = "4", status: int = 200) -> None:
    """A cassette as vcrpy writes it: the request body stored as the text sent."""
    reply = {"choices": [{"message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}]}
    interaction = {
        "request": {"method": "POST", "uri": uri, "body": body, "headers": {}},
        "response": {"status": {"code": status, "message": ""}, "headers": {}, "body": {"string": json.dumps(reply)}},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "interactions": [interaction]}), encoding="utf-8")


def test_the_request_holds_the_messages_the_body_and_the_entrys_own_budget() -> None:
    request = condition_request(MODEL, "http://m.local-model.invalid/v1", Toy(), CONDITION)
    assert request.messages == Toy().messages(CONDITION)
    assert request.uri == "http://m.local-model.invalid/v1/chat/completions"
    assert request.body == encode(request_payload(MODEL, request.messages, 0.5, 12))
    assert (request.model, request.instrument, request.condition_id) == ("m", "toy", "Q1-t0.5-r1")
    own = condition_request(dataclasses.replace(MODEL, max_tokens=40), "http://x/v1", Toy(), CONDITION)
    assert (own.max_tokens, json.loads(own.body)["max_tokens"]) == (40, 40)


def test_the_recordings_match_the_bytes_the_asker_sends(tmp_path: Path) -> None:
    recordings = Recordings(tmp_path)
    request = condition_request(MODEL, "http://x/v1", Toy(), CONDITION)
    path = recordings.path("m", "toy", CONDITION.id)
    assert recordings.check(request).state is CassetteState.MISSING
    record(path, request.uri, request.body.decode("utf-8"))
    check = recordings.check(request)
    assert check.matches
    assert check.path == path
    read = replay(check)
    assert read.reply is not None
    assert read.reply.text == "4"
    # The same JSON in other bytes is another request: the recording holds what was sent, not what it means.
    record(path, request.uri, json.dumps(json.loads(request.body)))
    assert recordings.check(request).state is CassetteState.STALE
    record(path, "http://elsewhere/v1/chat/completions", request.body.decode("utf-8"))
    assert "recorded for http://elsewhere" in recordings.check(request).why


def test_a_matching_recording_without_an_answer_reads_as_damaged(tmp_path: Path) -> None:
    recordings = Recordings(tmp_path)
    request = condition_request(MODEL, "http://x/v1", Toy(), CONDITION)
    record(recordings.path("m", "toy", CONDITION.id), request.uri, request.body.decode("utf-8"), status=500)
    check = recordings.check(request)
    assert check.matches  # the recordings hold the request ...
    read = replay(check)  # ... and the asker reads no answer in it
    assert read.state is CassetteState.MALFORMED
    assert read.reply is None
    assert "no usable answer recorded (HTTP 500)" in read.why
