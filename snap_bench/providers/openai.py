"""OpenAI's own API (platform.openai.com/docs/api-reference/chat): chat completions at
``https://api.openai.com/v1`` with a Bearer ``OPENAI_API_KEY``.

Its reasoning models want ``max_completion_tokens`` (at least 16) and ``reasoning_effort`` at the top level, and
apply a temperature only at reasoning effort ``none``.

Batch API (platform.openai.com/docs/guides/batch): the requests as a JSONL file (``POST /v1/files``, purpose
``batch``), then ``POST /v1/batches``; the answers in the output file, the failed requests in the error file (a
completed batch can hold both).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from snap_bench.providers import openai_chat
from snap_bench.providers.base import Entry, Messages, Provider
from snap_bench.providers.batches import (
    BatchItem,
    BatchState,
    ItemResult,
    Usage,
    call,
    chat_usage,
    json_lines,
    openai_style_result,
    openai_style_state,
)

NAME = "openai"
HOST = "api.openai.com"
BASE_URL = "https://api.openai.com/v1"
KEY_ENV = "OPENAI_API_KEY"
# OpenAI refuses an output budget under 16 tokens ("Invalid 'max_output_tokens' ... >= 16").
MIN_OUTPUT_TOKENS = 16


def payload(model: Entry, messages: Messages, temperature: float | None, max_tokens: int) -> dict[str, Any]:
    body = openai_chat.chat_body(model, messages, temperature)
    body["max_completion_tokens"] = max(MIN_OUTPUT_TOKENS, max_tokens)
    effort = openai_chat.reasoning_effort(model)
    if effort is not None:
        body["reasoning_effort"] = effort
    return body


def temperature_ignored(model: Entry) -> str | None:
    if model.reasoning not in (None, "none", "off"):
        return f"OpenAI applies a temperature to reasoning models only at reasoning effort none ({model.reasoning})"
    return None


def line_of(item: BatchItem) -> bytes:
    """One request of the input file; the body's own bytes are spliced in, not re-encoded."""
    head = {"custom_id": item.custom_id, "method": "POST", "url": urlsplit(item.uri).path}
    return json.dumps(head, separators=(",", ":")).encode()[:-1] + b',"body":' + item.body + b"}\n"


class OpenAIBatches:
    name = "openai"
    # platform.openai.com/docs/guides/batch: 50,000 requests and 200 MB per input file.
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def item_bytes(self, item: BatchItem, model_id: str) -> int:
        return len(line_of(item))

    def submit(self, http: httpx.Client, base_url: str, model_id: str, items: Sequence[BatchItem]) -> str:
        base = base_url.rstrip("/")
        content = b"".join(line_of(item) for item in items)
        uploaded = call(
            http,
            "POST",
            f"{base}/files",
            data={"purpose": "batch"},
            files={"file": ("snap-bench-batch.jsonl", content, "application/jsonl")},
        ).json()
        endpoint = urlsplit(items[0].uri).path
        created = call(
            http,
            "POST",
            f"{base}/batches",
            json={"input_file_id": uploaded["id"], "endpoint": endpoint, "completion_window": "24h"},
        ).json()
        return str(created["id"])

    def state(self, http: httpx.Client, base_url: str, batch_id: str) -> BatchState:
        return openai_style_state(http, base_url, batch_id)

    def results(self, http: httpx.Client, base_url: str, state: BatchState) -> list[ItemResult]:
        """Both files: a completed batch can still hold failed requests (the error file); an expired or
        cancelled one holds the answers it got to."""
        results = []
        for key in ("output_file_id", "error_file_id"):
            file_id = state.document.get(key)
            if not file_id:
                continue
            text = call(http, "GET", f"{base_url.rstrip('/')}/files/{file_id}/content").text
            results += [openai_style_result(line) for line in json_lines(text)]
        # A batch that failed as a whole (its input refused) has no file: every request counts as failed.
        return results

    def usage(self, body: str) -> Usage:
        return chat_usage(body)


PROVIDER = Provider(
    name=NAME,
    host=HOST,
    base_url=BASE_URL,
    key_env=KEY_ENV,
    url=openai_chat.chat_url,
    headers=openai_chat.bearer_headers,
    payload=payload,
    parse=openai_chat.parse,
    hopeless_error=openai_chat.no_route,
    moderated_error=openai_chat.moderation_flag,
    temperature_ignored=temperature_ignored,
    secret_headers=("authorization", "openai-organization"),
    key_shapes=(r"sk-(?:proj-)?[A-Za-z0-9_-]{20,}",),
    rate_headers=openai_chat.RATE_HEADERS,
    catalogue=openai_chat.CATALOGUE,
    batch=OpenAIBatches(),
)
