"""Anthropic's Messages API (docs.anthropic.com/en/api/messages): ``POST {base}/v1/messages``.

The key goes in ``x-api-key`` with the required ``anthropic-version``; the system prompt is the body's
top-level ``system`` (the API has no system role in ``messages``); ``max_tokens`` is required. An entry's
``reasoning:`` turns on extended thinking, ``thinking: {type: enabled, budget_tokens}``: the budget is at
least 1024 and below ``max_tokens``, so the budget of the effort (THINKING_BUDGETS) is added to the answer's own
output budget, which the answer keeps whatever the thinking spends. With thinking on, Anthropic takes no
temperature but 1: such an entry is asked at the provider's default. Thinking blocks are not the answer, and
``usage.output_tokens`` already counts them (they are billed as output).

``stop_reason: refusal`` is the provider's safety classifiers declining to go on: an answer code with its
reason, never scored. A 429 for an enforced spend limit (``error.details.error_code``
``enforced_spend_limit_reached``, no retry-after) is not asked again: no wait mends it before the month ends.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from snap_bench.design.entry_values import REASONING_OFF
from snap_bench.design.models import ANTHROPIC, ModelSpec
from snap_bench.wire.dialects.base import Dialect, Messages, Parsed, count, malformed, never

API_VERSION = "2023-06-01"
# Anthropic's least thinking budget; above it, a budget per effort (roughly doubling, as the docs advise
# starting at the least and raising it for harder tasks).
MIN_THINKING_BUDGET = 1024
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 32768}
SPEND_LIMIT = "enforced_spend_limit_reached"
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


def messages_url(base_url: str, model_id: str = "") -> str:
    return f"{base_url.rstrip('/')}/v1/messages"


def headers(api_key: str | None) -> dict[str, str]:
    sent = {"anthropic-version": API_VERSION}
    if api_key:
        sent["x-api-key"] = api_key
    return sent


def thinking_budget(model: ModelSpec) -> int | None:
    """The thinking budget of the entry's effort, or None where thinking stays off (no effort, off, none)."""
    if model.reasoning in (None, REASONING_OFF, "none"):
        return None
    return THINKING_BUDGETS.get(model.reasoning or "", MIN_THINKING_BUDGET)


def output_budget(model: ModelSpec, max_tokens: int) -> int:
    """The request's max_tokens: the answer's budget, plus the thinking budget where thinking is on."""
    return max_tokens + (thinking_budget(model) or 0)


def payload(model: ModelSpec, messages: Messages, temperature: float | None, max_tokens: int) -> dict[str, Any]:
    system = "\n\n".join(message["content"] for message in messages if message["role"] == "system")
    body: dict[str, Any] = {
        "model": model.provider_id,
        "max_tokens": output_budget(model, max_tokens),
        "messages": [
            {"role": message["role"], "content": message["content"]}
            for message in messages
            if message["role"] != "system"
        ],
    }
    if system:
        body["system"] = system
    if temperature is not None:
        body["temperature"] = temperature
    budget = thinking_budget(model)
    if budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return body


def parse(body: str) -> Parsed:
    try:
        reply: dict[str, Any] = json.loads(body)
        if reply.get("type") == "error":
            return Parsed(None, f"provider error in a 200 reply: {json.dumps(reply.get('error'))}", retry=True)
        blocks = reply["content"]
        stop_reason = reply.get("stop_reason")
        # Thinking (and redacted thinking) blocks come before the answer: only text blocks are the answer.
        text = "".join(block["text"] for block in blocks if block.get("type") == "text")
        usage = reply.get("usage") or {}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        return malformed(body, error)
    prompt = [
        count(usage.get(key)) for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    ]
    read = Parsed(
        text,
        prompt_tokens=sum(n for n in prompt if n is not None) if prompt[0] is not None else None,
        completion_tokens=count(usage.get("output_tokens")),
        served_model=reply.get("model") if isinstance(reply.get("model"), str) else None,
    )
    if stop_reason == "refusal":
        return replace(read, finish_reason="refusal (Anthropic's safety classifiers)", moderated=True)
    return replace(read, finish_reason=_FINISH.get(stop_reason, stop_reason) if isinstance(stop_reason, str) else None)


def spend_limit(status: int, body: str) -> bool:
    """A 429 of the account's spend limit: retrying fails until the limit is raised or the month ends."""
    return status == 429 and SPEND_LIMIT in body


def temperature_ignored(model: ModelSpec) -> str | None:
    budget = thinking_budget(model)
    if budget is not None:
        return f"Anthropic takes no temperature but 1 with thinking on (reasoning {model.reasoning}: {budget} tokens)"
    return None


DIALECT = Dialect(
    name=ANTHROPIC,
    url=messages_url,
    headers=headers,
    payload=payload,
    parse=parse,
    hopeless_error=spend_limit,
    moderated_error=never,
    temperature_ignored=temperature_ignored,
    output_budget=output_budget,
)
