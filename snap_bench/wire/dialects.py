"""The body of one chat request in the dialect of its endpoint: OpenRouter, OpenAI, or a plain
OpenAI-compatible server.

A plain server (vLLM, llama.cpp, Ollama) gets the bodies it always got, so recordings made from one still
match. OpenRouter also gets the entry's routing block with ``require_parameters: true``: a parameter no
provider of the model supports is then refused (404) instead of silently dropped, so a figure is never
reported for a setting the provider ignored. OpenAI's reasoning models want ``max_completion_tokens``
(at least 16) and ``reasoning_effort`` at the top level.
"""

from __future__ import annotations

import json
from typing import Any

from snap_bench.design.models import OPENAI, OPENROUTER, REASONING_OFF, ModelSpec

# OpenAI refuses an output budget under 16 tokens ("Invalid 'max_output_tokens' ... >= 16").
OPENAI_MIN_OUTPUT_TOKENS = 16


def reasoning_effort(model: ModelSpec) -> str | None:
    """The effort asked of the model (``none`` for an entry's ``off``), or None where the entry sets none."""
    if model.reasoning is None:
        return None
    return "none" if model.reasoning == REASONING_OFF else model.reasoning


def request_payload(
    model: ModelSpec, messages: list[dict[str, str]], temperature: float | None, max_tokens: int
) -> dict[str, Any]:
    """What is sent for one condition; ``temperature`` None leaves it to the provider's default."""
    effort = reasoning_effort(model)
    payload: dict[str, Any] = {"model": model.provider_id, "messages": messages}
    if temperature is not None:
        payload["temperature"] = temperature
    if model.top_logprobs:
        payload["logprobs"] = True
        payload["top_logprobs"] = model.top_logprobs
    if model.dialect == OPENAI:
        payload["max_completion_tokens"] = max(OPENAI_MIN_OUTPUT_TOKENS, max_tokens)
        if effort is not None:
            payload["reasoning_effort"] = effort
        return payload
    payload["max_tokens"] = max_tokens
    if effort is not None:
        payload["reasoning"] = {"effort": effort}
    if model.dialect == OPENROUTER:
        payload["provider"] = {**(model.routing or {}), "require_parameters": True}
    return payload


def encode(payload: dict[str, Any]) -> bytes:
    """The exact bytes sent; stable key order so that cassettes match on body."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
