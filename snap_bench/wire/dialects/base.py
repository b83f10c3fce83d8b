"""What every dialect gives: where a model's request goes, its auth headers, its body, and how a reply and an
error body of that API are read.

A reply is read into :class:`Parsed`, the fields of a chat reply that the body says (the client adds the
status, latency and attempts). A refusal by the provider's safety systems (a content filter, a refusal stop, a
blocked prompt) is ``moderated``: an answer code of its own with the provider's reason, never scored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from snap_bench.design.models import ModelSpec

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Parsed:
    """What a 200's body says: the answer's text, or why there is none."""

    text: str | None
    error: str | None = None
    prompt_tokens: int | None = None
    # Every output token billed, thinking included (OpenAI's convention: completion_tokens holds reasoning).
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    # "stop", "length" (cut by the output limit), or what the provider said.
    finish_reason: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    provider: str | None = None
    served_model: str | None = None
    system_fingerprint: str | None = None
    cost_usd: float | None = None
    moderated: bool = False
    # A 200 without an answer that is worth asking again (a malformed body, a transient upstream error).
    retry: bool = False


@dataclass(frozen=True)
class Dialect:
    """One API's way of asking and answering; one module per dialect builds one (see the registry)."""

    name: str
    # (base_url, the model's provider id) -> where its chat request goes.
    url: Callable[[str, str], str]
    # The API key -> the headers that carry it (and whatever else the API requires).
    headers: Callable[[str | None], dict[str, str]]
    # (entry, messages, temperature or None for the provider's default, output budget) -> the body.
    payload: Callable[[ModelSpec, Messages, float | None, int], dict[str, Any]]
    # A 200's body -> what it says.
    parse: Callable[[str], Parsed]
    # (status, error body) -> whether a status that is usually retried is hopeless this time (waiting cannot
    # mend it: OpenRouter's no-route 503, Anthropic's spend limit).
    hopeless_error: Callable[[int, str], bool]
    # (status, error body) -> whether the error is the provider's moderation refusing the input.
    moderated_error: Callable[[int, str], bool]
    # The entry -> why a temperature would not be applied (None where it would).
    temperature_ignored: Callable[[ModelSpec], str | None]
    # (entry, the answer's output budget) -> the max_tokens the request holds (Anthropic adds thinking's).
    output_budget: Callable[[ModelSpec, int], int] = lambda model, max_tokens: max_tokens


def never(status: int, body: str) -> bool:
    return False


def applies_temperature(model: ModelSpec) -> str | None:
    return None


def count(value: object) -> int | None:
    """A token count as the provider wrote it, or None for anything that is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def malformed(body: str, error: Exception) -> Parsed:
    """A 200 that does not hold a reply of the API: asked again, like a 5xx."""
    return Parsed(None, f"malformed reply ({type(error).__name__}): {short(body)}", retry=True)


def error_object(body: str) -> dict[str, Any]:
    """The ``error`` object of an error body (every dialect here wraps it so), or {}."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return {}
    return error if isinstance(error, dict) else {}
