"""A model's request and reply in its provider's dialect (snap_bench.providers: one module per provider, picked
by the entry's ``dialect``, which names its provider), and a recorded reply read in the dialect it was sent in.
"""

from __future__ import annotations

from typing import Any

from snap_bench.providers import Parsed, Provider, provider_named, provider_of_recording
from snap_bench.providers.base import Entry, Messages
from snap_bench.providers.openai_chat import encode, reasoning_effort

__all__ = [
    "Parsed",
    "Provider",
    "answer_text",
    "dialect_named",
    "encode",
    "reasoning_effort",
    "request_payload",
]


def dialect_named(name: str) -> Provider:
    """The provider of that name, whose dialect an entry naming it speaks (models.yaml checked it is one)."""
    return provider_named(name)


def request_payload(model: Entry, messages: Messages, temperature: float | None, max_tokens: int) -> dict[str, Any]:
    """What is sent for one condition in the entry's dialect; ``temperature`` None leaves it to the provider's
    default, ``max_tokens`` is the answer's output budget."""
    return dialect_named(model.dialect).payload(model, messages, temperature, max_tokens)


def answer_text(uri: str, body: str, provider: str | None = None) -> str | None:
    """The answer's text in a 200's body recorded for a request to ``uri`` through ``provider`` (where the
    recording names it), or None where it holds none."""
    parsed = provider_of_recording(uri, provider).parse(body)
    return parsed.text if parsed.error is None and not parsed.moderated else None
