"""A recording read as an answer: the responses recorded for a condition's request, parsed exactly as a live
reply is (the same function, on the recorded text).

The recordings say whether a cassette holds the request (:class:`snap_bench.recordings.state.RecordingCheck`);
whether what it holds answers the condition is read here, for the asker and for the local-server start-up
(is anything left to record?) alike.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from snap_bench.asking.client import CACHE_STATUS_HEADER, ChatReply, reply_from_recording
from snap_bench.recordings.cassettes import CassetteState, sampled_responses

if TYPE_CHECKING:
    from collections.abc import Sequence

    from snap_bench.recordings.cassettes import RecordedResponse
    from snap_bench.recordings.state import RecordingCheck


@dataclass(frozen=True)
class Replay:
    """A recording's state as the asker reads it, why, and the recorded answer when it holds one."""

    state: CassetteState
    why: str
    reply: ChatReply | None


def replay(check: RecordingCheck) -> Replay:
    """The check with its recorded answer read.

    A recording of this request that holds no usable answer (only failures) counts as damaged: it cannot
    be replayed, and recording it again is the fix.
    """
    if not check.matches:
        return Replay(check.state, check.why, None)
    reply = recorded_reply(check.responses, check.request.dialect)
    if reply.error is None:
        return Replay(CassetteState.MATCHES, "", reply)
    codes = ", ".join(str(response.status) for response in check.responses)
    return Replay(CassetteState.MALFORMED, f"damaged cassette: no usable answer recorded (HTTP {codes})", None)


def recorded_reply(responses: Sequence[RecordedResponse], dialect: str = "") -> ChatReply:
    """The last usable 200 among a request's recorded responses (read in ``dialect``, the OpenAI chat dialect
    where none is named), else the last recorded failure."""
    last = ChatReply(None, "no recorded response", None, 0.0, 0)
    for attempt, response in enumerate(responses, start=1):
        reply = (
            reply_from_recording(response.body, attempt, response.header(CACHE_STATUS_HEADER), dialect)
            if response.status == 200
            else ChatReply(None, f"recorded HTTP {response.status}", response.status, 0.0, attempt)
        )
        if reply.error is None or last.error is not None:
            last = reply
    return dataclasses.replace(last, latency_s=0.0)


def recorded_output_tokens(folder: Path, limit: int = 200, dialect: str = "") -> tuple[float, int] | None:
    """The mean completion tokens of an answer (reasoning included) over up to ``limit`` usable recordings in
    ``folder``, and how many were read; None without any that reports its usage."""
    counts = []
    for responses in sampled_responses(folder, limit):
        reply = recorded_reply(responses, dialect)
        if reply.error is None and reply.completion_tokens is not None:
            counts.append(reply.completion_tokens)
    return (sum(counts) / len(counts), len(counts)) if counts else None
