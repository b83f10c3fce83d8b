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

Message Batches: ``POST {base}/v1/messages/batches {requests: [{custom_id, params}]}`` where ``params`` is the
Messages body; each result's ``message`` is what ``POST /v1/messages`` would have returned. Results come as
JSONL from ``results_url``, not in request order; a request is validated only once processed, so a bad one comes
back errored.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import httpx

from snap_bench.providers.base import (
    REASONING_OFF,
    Entry,
    Messages,
    Parsed,
    Provider,
    RateHeaderNames,
    Refusals,
    count,
    malformed,
)
from snap_bench.providers.batches import BatchApiError, BatchItem, BatchState, ItemResult, Usage, call, json_lines

NAME = "anthropic"
HOST = "api.anthropic.com"
BASE_URL = "https://api.anthropic.com"
KEY_ENV = "ANTHROPIC_API_KEY"

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


def thinking_budget(model: Entry) -> int | None:
    """The thinking budget of the entry's effort, or None where thinking stays off (no effort, off, none)."""
    if model.reasoning in (None, REASONING_OFF, "none"):
        return None
    return THINKING_BUDGETS.get(model.reasoning or "", MIN_THINKING_BUDGET)


def output_budget(model: Entry, max_tokens: int) -> int:
    """The request's max_tokens: the answer's budget, plus the thinking budget where thinking is on."""
    return max_tokens + (thinking_budget(model) or 0)


def payload(model: Entry, messages: Messages, temperature: float | None, max_tokens: int) -> dict[str, Any]:
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


def recorded_uri(uri: str) -> bool:
    return uri.endswith("/v1/messages")


def temperature_ignored(model: Entry) -> str | None:
    budget = thinking_budget(model)
    if budget is not None:
        return f"Anthropic takes no temperature but 1 with thinking on (reasoning {model.reasoning}: {budget} tokens)"
    return None


def request_of(item: BatchItem) -> bytes:
    return b'{"custom_id":' + json.dumps(item.custom_id).encode() + b',"params":' + item.body + b"}"


class AnthropicBatches:
    """The base URL is the Messages API's own (BASE_URL, no version: the dialect adds ``/v1/messages``)."""

    name = "anthropic"
    # docs.anthropic.com batch processing: 100,000 requests or 256 MB per batch.
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def item_bytes(self, item: BatchItem, model_id: str) -> int:
        return len(request_of(item)) + 1

    def submit(self, http: httpx.Client, base_url: str, model_id: str, items: Sequence[BatchItem]) -> str:
        content = b'{"requests":[' + b",".join(map(request_of, items)) + b"]}"
        url = f"{base_url.rstrip('/')}/v1/messages/batches"
        created = call(http, "POST", url, content=content, headers={"Content-Type": "application/json"}).json()
        return str(created["id"])

    def state(self, http: httpx.Client, base_url: str, batch_id: str) -> BatchState:
        document = call(http, "GET", f"{base_url.rstrip('/')}/v1/messages/batches/{batch_id}").json()
        counts = document.get("request_counts") or {}
        total = sum(int(counts.get(key) or 0) for key in ("processing", "succeeded", "errored", "canceled", "expired"))
        status = str(document.get("processing_status"))
        return BatchState(status == "ended", status, total - int(counts.get("processing") or 0), total, document)

    def results(self, http: httpx.Client, base_url: str, state: BatchState) -> list[ItemResult]:
        link = str(state.document["results_url"])
        # The client sends the key with every call: a link to another host (a proxy's rewrite, a tampered reply)
        # would carry it there, so the results are read from the batch API's own host only.
        if urlsplit(link).netloc.lower() != urlsplit(base_url).netloc.lower():
            raise BatchApiError(
                f"the batch's results_url {link} is not on {urlsplit(base_url).netloc}, where the batch was sent: "
                "not fetched, so the key stays with its host"
            )
        text = call(http, "GET", link).text
        return [self._result(line) for line in json_lines(text)]

    @staticmethod
    def _result(line: dict[str, object]) -> ItemResult:
        custom_id = str(line.get("custom_id"))
        result = line.get("result")
        if isinstance(result, dict) and result.get("type") == "succeeded" and isinstance(result.get("message"), dict):
            return ItemResult(custom_id, json.dumps(result["message"], ensure_ascii=False), None)
        kind = result.get("type") if isinstance(result, dict) else None
        said = json.dumps(result.get("error")) if isinstance(result, dict) and result.get("error") else ""
        return ItemResult(custom_id, None, f"{kind or 'no result'} {said}".strip()[:300])

    def usage(self, body: str) -> Usage:
        usage = json.loads(body).get("usage") or {}
        return Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))


PROVIDER = Provider(
    name=NAME,
    host=HOST,
    own_endpoint=True,
    base_url=BASE_URL,
    key_env=KEY_ENV,
    url=messages_url,
    headers=headers,
    payload=payload,
    parse=parse,
    hopeless_error=spend_limit,
    temperature_ignored=temperature_ignored,
    output_budget=output_budget,
    recorded_uri=recorded_uri,
    secret_headers=("x-api-key",),
    key_shapes=(r"sk-ant-[A-Za-z0-9_-]{20,}",),
    # A 404 not_found_error names the model ("model: claude-x"); a temperature refused outright ("`temperature`
    # is deprecated for this model.") or other than 1 with thinking on ("`temperature` may only be set to 1 when
    # thinking is enabled or in adaptive mode"); the spend limit as a 429 and as a 400 ("You have reached your
    # specified (workspace) API usage limits").
    refusals=Refusals(
        no_such_model=(r"not_found_error\"?, ?\"message\"?: ?\"model: ",),
        temperature=(r"temperature`? (?:is deprecated|may only be set to 1)",),
        spend_limit=(SPEND_LIMIT, r"reached your specified (?:workspace )?API usage limits"),
    ),
    # An RFC 3339 time for when the limit is full again.
    rate_headers=RateHeaderNames(
        "anthropic-ratelimit-requests-limit",
        "anthropic-ratelimit-requests-remaining",
        "anthropic-ratelimit-requests-reset",
        "time",
    ),
    batch=AnthropicBatches(),
)
