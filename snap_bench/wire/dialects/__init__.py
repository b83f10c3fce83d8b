"""The dialects a model's endpoint may speak, one module each, and the registry that picks one by the entry's
``dialect`` (snap_bench.design.models: from its ``base_url``'s host or its ``dialect:``).

A new provider is one module building a :class:`~snap_bench.wire.dialects.base.Dialect` and one line here
(and its name and host in snap_bench.design.models, which models.yaml is checked against).
"""

from __future__ import annotations

from typing import Any

from snap_bench.design.models import ModelSpec
from snap_bench.wire.dialects import anthropic, gemini
from snap_bench.wire.dialects.base import Dialect, Messages, Parsed
from snap_bench.wire.dialects.openai_chat import (
    OPENAI_COMPATIBLE_DIALECT,
    OPENAI_DIALECT,
    OPENAI_MIN_OUTPUT_TOKENS,
    OPENROUTER_DIALECT,
    encode,
    reasoning_effort,
)

REGISTRY: dict[str, Dialect] = {
    dialect.name: dialect
    for dialect in (OPENROUTER_DIALECT, OPENAI_DIALECT, OPENAI_COMPATIBLE_DIALECT, anthropic.DIALECT, gemini.DIALECT)
}

__all__ = [
    "OPENAI_MIN_OUTPUT_TOKENS",
    "REGISTRY",
    "Dialect",
    "Parsed",
    "answer_text",
    "dialect_named",
    "encode",
    "reasoning_effort",
    "request_payload",
]


def dialect_named(name: str) -> Dialect:
    """The dialect of that name (models.yaml checked it is one)."""
    return REGISTRY[name]


def request_payload(model: ModelSpec, messages: Messages, temperature: float | None, max_tokens: int) -> dict[str, Any]:
    """What is sent for one condition in the entry's dialect; ``temperature`` None leaves it to the provider's
    default, ``max_tokens`` is the answer's output budget."""
    return dialect_named(model.dialect).payload(model, messages, temperature, max_tokens)


def dialect_of_uri(uri: str) -> Dialect:
    """The dialect a recorded request's URI was sent in (where the entry is not at hand)."""
    if uri.endswith(":generateContent"):
        return gemini.DIALECT
    if uri.endswith("/v1/messages"):
        return anthropic.DIALECT
    return OPENAI_COMPATIBLE_DIALECT


def answer_text(uri: str, body: str) -> str | None:
    """The answer's text in a 200's body recorded for a request to ``uri``, or None where it holds none."""
    parsed = dialect_of_uri(uri).parse(body)
    return parsed.text if parsed.error is None and not parsed.moderated else None
