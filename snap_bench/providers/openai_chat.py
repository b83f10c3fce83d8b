"""The OpenAI chat-completions wire format that several providers share (``POST {base_url}/chat/completions``, a
Bearer key, replies with ``choices``): OpenRouter, OpenAI, a plain OpenAI-compatible server, and APIs modelled on
it. Not a provider: each provider's module builds its own payload from these pieces.
"""

from __future__ import annotations

import json
from typing import Any

from snap_bench.providers.base import (
    REASONING_OFF,
    CatalogueFormat,
    Entry,
    Listed,
    Messages,
    Parsed,
    RateHeaderNames,
    count,
    error_object,
    listed_prices,
    malformed,
    short,
)

# Status codes a 200's error object may carry that are worth asking again (OpenRouter reports an upstream
# failure as a 200 with the real code).
RETRYABLE_CODES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
# A 503 that no wait will mend: OpenRouter found no provider meeting the request's routing block (a server that
# proxies OpenRouter passes the same words on).
NO_ROUTE = "no available provider that meets your routing requirements"


def reasoning_effort(model: Entry) -> str | None:
    """The effort asked of the model (``none`` for an entry's ``off``), or None where the entry sets none."""
    if model.reasoning is None:
        return None
    return "none" if model.reasoning == REASONING_OFF else model.reasoning


def chat_body(model: Entry, messages: Messages, temperature: float | None) -> dict[str, Any]:
    """What every OpenAI-style body holds: the model, the messages, the temperature (None: the provider's
    default) and the log-probabilities the entry asks for."""
    payload: dict[str, Any] = {"model": model.provider_id, "messages": messages}
    if temperature is not None:
        payload["temperature"] = temperature
    if model.top_logprobs:
        payload["logprobs"] = True
        payload["top_logprobs"] = model.top_logprobs
    return payload


def compatible_payload(model: Entry, messages: Messages, temperature: float | None, max_tokens: int) -> dict[str, Any]:
    """The body a plain OpenAI-compatible server (vLLM, llama.cpp, Ollama) gets: ``max_tokens`` and the effort
    as ``reasoning: {effort}``; unchanged, so recordings made from one still match."""
    payload = chat_body(model, messages, temperature)
    payload["max_tokens"] = max_tokens
    effort = reasoning_effort(model)
    if effort is not None:
        payload["reasoning"] = {"effort": effort}
    return payload


def chat_url(base_url: str, model_id: str = "") -> str:
    """Where a chat request to ``base_url`` goes (the model is named in the body)."""
    return f"{base_url.rstrip('/')}/chat/completions"


def bearer_headers(api_key: str | None) -> dict[str, str]:
    headers = {"X-Title": "snap-bench"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def parse(body: str) -> Parsed:
    """A 200's body as a reply: the answer's text, or why there is none."""
    try:
        payload: dict[str, Any] = json.loads(body)
        if "error" in payload and not payload.get("choices"):
            code = payload["error"].get("code") if isinstance(payload["error"], dict) else None
            return Parsed(
                None,
                f"provider error in a 200 reply: {short(json.dumps(payload['error']))}",
                # OpenRouter's upstream failure in a 200: asked again when its real code is worth it.
                retry=not payload["error"] or (isinstance(code, int) and code in RETRYABLE_CODES),
            )
        choice = payload["choices"][0]
        served = _served_by(payload)
        if choice.get("error") or choice.get("finish_reason") == "error":
            # OpenRouter reports a failure during generation in the choice of a 200: nothing was answered.
            said = short(json.dumps(choice.get("error") or {"finish_reason": "error"}))
            return Parsed(None, f"generation error in a 200 reply: {said}", retry=True, **served)
        if choice.get("finish_reason") == "content_filter":
            text = choice.get("message", {}).get("content")
            return Parsed(
                text if isinstance(text, str) else "", finish_reason="content_filter", moderated=True, **served
            )
        text = choice["message"].get("content")
        # A reply cut by the token limit may legitimately hold no text (a reasoning model spent the
        # budget thinking); any other reply without text is a broken one and is asked again.
        if not isinstance(text, str) and choice.get("finish_reason") != "length":
            raise KeyError("message content")
        usage = payload.get("usage") or {}
        details = usage.get("completion_tokens_details") or {}
        logprobs = (choice.get("logprobs") or {}).get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        return malformed(body, error)
    return Parsed(
        text=text if isinstance(text, str) else "",
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        reasoning_tokens=count(details.get("reasoning_tokens") if isinstance(details, dict) else None),
        finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
        logprobs=logprobs if isinstance(logprobs, list) and logprobs else None,
        **served,
    )


def _served_by(payload: dict[str, Any]) -> dict[str, Any]:
    """Who served a 200 and what it billed: the response's provider, model, fingerprint and usage.cost."""
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    cost = usage.get("cost") if isinstance(usage, dict) else None
    return {
        "provider": _text(payload.get("provider")),
        "served_model": _text(payload.get("model")),
        "system_fingerprint": _text(payload.get("system_fingerprint")),
        "cost_usd": float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def no_route(status: int, body: str) -> bool:
    return NO_ROUTE in body.lower()


def moderation_flag(status: int, body: str) -> bool:
    """A 403 that says the input was flagged (OpenRouter's metadata.reasons / flagged_input), not the key."""
    if status != 403:
        return False
    error = error_object(body)
    metadata = error.get("metadata")
    if isinstance(metadata, dict) and ("reasons" in metadata or "flagged_input" in metadata):
        return True
    message = str(error.get("message", "")).lower()
    return "moderation" in message or "flagged" in message


def encode(payload: dict[str, Any]) -> bytes:
    """The exact bytes sent; stable key order so that cassettes match on body."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# OpenAI's and OpenRouter's request-limit headers (and of the APIs that copy them).
RATE_HEADERS = RateHeaderNames(
    "x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests", "duration"
)


def models_url(base_url: str) -> str:
    return f"{base_url.rstrip('/')}/models"


def catalogue_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def listed_models(document: Any) -> list[Listed]:
    """``GET {base}/models``'s ``data``: ids, and where listed (OpenRouter) the supported parameters and prices."""
    listed = []
    for item in document["data"]:
        params = item.get("supported_parameters")
        prompt, completion = listed_prices(item.get("pricing"))
        listed.append(
            Listed(
                id=str(item["id"]),
                supported_parameters=tuple(str(p) for p in params) if isinstance(params, list) else None,
                input_per_million=prompt,
                output_per_million=completion,
            )
        )
    return listed


# An OpenAI-style model list (OpenAI's lists only the ids; OpenRouter's adds parameters and prices).
CATALOGUE = CatalogueFormat(url=models_url, headers=catalogue_headers, models=listed_models)
