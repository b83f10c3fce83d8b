"""Gemini's generateContent (ai.google.dev/api/generate-content):
``POST {base}/v1beta/models/{model}:generateContent`` with the key in ``x-goog-api-key``.

Turns are ``contents`` with the roles ``user`` and ``model``; the system prompt is ``systemInstruction``;
temperature and output budget go in ``generationConfig``. An entry's ``reasoning:`` sets
``generationConfig.thinkingConfig``: Gemini 2.x models take a token budget (``thinkingBudget``, 0 turns thinking
off where the model allows it), later ones a level (``thinkingLevel``; the two may not be sent together).
Thought parts are not the answer; ``usageMetadata.thoughtsTokenCount`` is billed as output, so it is counted in
the reply's completion tokens and as its reasoning tokens.

A candidate that ends for SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT or SPII, and a prompt blocked
before any candidate (``promptFeedback.blockReason``), are the provider's refusals: answer codes with the
reason, never scored.

Batch API (ai.google.dev/gemini-api/docs/batch-mode; 50 % of the standard price): the generateContent bodies go
inline (``POST {base}/v1beta/models/{model}:batchGenerateContent`` with ``batch.input_config.requests.requests``,
each ``{request, metadata: {key}}``; inline requests are documented for batches under 20 MB, so a larger design is
split into several). The call answers an operation named ``batches/{id}``; ``GET {base}/v1beta/batches/{id}``
tells its ``state`` and ``batchStats``, and once it ended, ``response.inlinedResponses.inlinedResponses``: each a
``response`` (what generateContent would have answered) or an ``error`` (a status), with its request's key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import httpx

from snap_bench.providers.base import REASONING_OFF, Entry, Messages, Parsed, Provider, Refusals, count, malformed
from snap_bench.providers.batches import BatchItem, BatchState, ItemResult, Usage, call

NAME = "gemini"
HOST = "generativelanguage.googleapis.com"
BASE_URL = "https://generativelanguage.googleapis.com"
# Google's documentation also names GOOGLE_API_KEY: an entry may say api_key_env: GOOGLE_API_KEY.
KEY_ENV = "GEMINI_API_KEY"

# Gemini 2.5's budgets run from 128 (Pro) or 512 (Flash-Lite) up to 24576 (Flash) or 32768 (Pro).
THINKING_BUDGETS = {"minimal": 512, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 24576}
# Gemini 3's levels: minimal and medium on Flash only; the lowest a level can go is minimal.
THINKING_LEVELS = {"none": "minimal", "minimal": "minimal", "low": "low", "medium": "medium", "high": "high"}
BLOCKED = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"})
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}
_ROLES = {"user": "user", "assistant": "model"}


def generate_url(base_url: str, model_id: str) -> str:
    return f"{base_url.rstrip('/')}/v1beta/models/{model_id}:generateContent"


def headers(api_key: str | None) -> dict[str, str]:
    return {"x-goog-api-key": api_key} if api_key else {}


def thinking_config(model: Entry) -> dict[str, Any] | None:
    """The entry's effort as Gemini's thinkingConfig, or None where the entry sets none."""
    if model.reasoning is None:
        return None
    effort = "none" if model.reasoning == REASONING_OFF else model.reasoning
    if model.provider_id.removeprefix("models/").startswith("gemini-2"):
        return {"thinkingBudget": THINKING_BUDGETS.get(effort, 0)}
    return {"thinkingLevel": THINKING_LEVELS.get(effort, "high")}


def payload(model: Entry, messages: Messages, temperature: float | None, max_tokens: int) -> dict[str, Any]:
    system = "\n\n".join(message["content"] for message in messages if message["role"] == "system")
    config: dict[str, Any] = {"maxOutputTokens": max_tokens}
    if temperature is not None:
        config["temperature"] = temperature
    thinking = thinking_config(model)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    body: dict[str, Any] = {
        "contents": [
            {"role": _ROLES[message["role"]], "parts": [{"text": message["content"]}]}
            for message in messages
            if message["role"] != "system"
        ],
        "generationConfig": config,
    }
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    return body


def parse(body: str) -> Parsed:
    try:
        reply: dict[str, Any] = json.loads(body)
        usage = reply.get("usageMetadata") or {}
        prompt, answer, thoughts = (
            count(usage.get(key)) for key in ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount")
        )
        counted = Parsed(
            "",
            prompt_tokens=prompt,
            # Thinking is billed as output: counted with the answer's tokens (as OpenAI's completion_tokens do).
            completion_tokens=None if answer is None and thoughts is None else (answer or 0) + (thoughts or 0),
            reasoning_tokens=thoughts,
            served_model=reply.get("modelVersion") if isinstance(reply.get("modelVersion"), str) else None,
        )
        candidates = reply.get("candidates") or []
        if not candidates:
            blocked = (reply.get("promptFeedback") or {}).get("blockReason")
            if blocked:
                return replace(counted, finish_reason=f"prompt blocked ({blocked})", moderated=True)
            raise KeyError("candidates")
        candidate = candidates[0]
        finish = candidate.get("finishReason")
        parts = (candidate.get("content") or {}).get("parts") or []
        text = "".join(part["text"] for part in parts if "text" in part and not part.get("thought"))
        if finish in BLOCKED:
            return replace(counted, text=text, finish_reason=finish, moderated=True)
        if not parts and finish != "MAX_TOKENS":
            raise KeyError("content.parts")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        return malformed(body, error)
    return replace(counted, text=text, finish_reason=_FINISH.get(finish, finish) if isinstance(finish, str) else None)


# A batch's states after which it changes no more (BatchState).
BATCH_ENDED = frozenset({"BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED"})


def inlined_request(item: BatchItem) -> bytes:
    """One inline request: the generateContent body's own bytes, spliced in, and its key."""
    return b'{"request":' + item.body + b',"metadata":{"key":' + json.dumps(item.custom_id).encode() + b"}}"


class GeminiBatches:
    """The base URL is the API's own (BASE_URL, no version: the dialect adds ``/v1beta``)."""

    name = "gemini"
    # Inline requests: the batch creation request is to stay under 20 MB; the count is ours (the byte limit binds
    # first at the designs' body sizes).
    max_requests = 100_000
    max_bytes = 20 * 1000 * 1000 - 1024

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"x-goog-api-key": api_key} if api_key else {}

    def item_bytes(self, item: BatchItem, model_id: str) -> int:
        return len(inlined_request(item)) + 1

    def submit(self, http: httpx.Client, base_url: str, model_id: str, items: Sequence[BatchItem]) -> str:
        head = b'{"batch":{"display_name":"snap-bench","input_config":{"requests":{"requests":['
        content = head + b",".join(map(inlined_request, items)) + b"]}}}}"
        url = f"{base_url.rstrip('/')}/v1beta/models/{model_id}:batchGenerateContent"
        created = call(http, "POST", url, content=content, headers={"Content-Type": "application/json"}).json()
        return str(created["name"])

    def state(self, http: httpx.Client, base_url: str, batch_id: str) -> BatchState:
        document = call(http, "GET", f"{base_url.rstrip('/')}/v1beta/{batch_id}").json()
        batch = document.get("metadata") or document
        stats = batch.get("batchStats") or {}
        total = int(stats.get("requestCount") or 0)
        done = int(stats.get("successfulRequestCount") or 0) + int(stats.get("failedRequestCount") or 0)
        state = str(batch.get("state"))
        # Said as the other batch APIs say it (failed, cancelled, expired: ended without its answers).
        status = state.removeprefix("BATCH_STATE_").lower()
        return BatchState(state in BATCH_ENDED or bool(document.get("done")), status, done, total, document)

    def results(self, http: httpx.Client, base_url: str, state: BatchState) -> list[ItemResult]:
        """The inline responses, matched to their requests by key (a batch that failed as a whole has none)."""
        output = state.document.get("response") or (state.document.get("metadata") or {}).get("output") or {}
        lines = (output.get("inlinedResponses") or {}).get("inlinedResponses")
        if not isinstance(lines, list):
            raise KeyError("response.inlinedResponses")
        return [self._result(line) for line in lines]

    @staticmethod
    def _result(line: dict[str, Any]) -> ItemResult:
        key = str((line.get("metadata") or {}).get("key"))
        if isinstance(line.get("response"), dict) and not line.get("error"):
            return ItemResult(key, json.dumps(line["response"], ensure_ascii=False), None)
        return ItemResult(key, None, json.dumps(line.get("error") or {"no response": True})[:300])

    def usage(self, body: str) -> Usage:
        read = parse(body)
        return Usage(read.prompt_tokens or 0, read.completion_tokens or 0)


def recorded_uri(uri: str) -> bool:
    return uri.endswith(":generateContent")


PROVIDER = Provider(
    name=NAME,
    host=HOST,
    own_endpoint=True,
    base_url=BASE_URL,
    key_env=KEY_ENV,
    other_key_envs=("GOOGLE_API_KEY",),
    url=generate_url,
    headers=headers,
    payload=payload,
    parse=parse,
    secret_headers=("x-goog-api-key",),
    key_shapes=(r"AIza[0-9A-Za-z_-]{35}",),
    recorded_uri=recorded_uri,
    batch=GeminiBatches(),
    # A model it does not serve: "models/x is not found for API version v1beta"; a bad key is a 400
    # INVALID_ARGUMENT with reason API_KEY_INVALID.
    refusals=Refusals(
        no_such_model=(r"is not found for API version",), bad_key=(r"API_KEY_INVALID|API key not valid",)
    ),
)
