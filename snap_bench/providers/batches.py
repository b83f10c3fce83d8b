"""What every provider's batch API offers the batch step (snap_bench.asking.batch), and the pieces the
OpenAI-style ones share.

A batch API wraps the request bodies the synchronous path would send (built once:
:mod:`snap_bench.wire.request`) in its own envelope and unwraps each result into the body the synchronous
request would have received, so nothing here knows a dialect's body. Each provider's module holds its own (its
``Provider.batch``); it is asked over an HTTP client the batch step hands it, with the key in its headers.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

# Statuses after which a batch changes no more (OpenAI's and OpenRouter's; Anthropic's "ended" is mapped).
ENDED = "ended"
RETRYABLE = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
ATTEMPTS = 4


@dataclass(frozen=True)
class BatchItem:
    """One condition's request in a batch: its id there, where it goes and its exact bytes."""

    custom_id: str
    uri: str
    body: bytes


@dataclass(frozen=True)
class BatchState:
    """A batch as the provider reports it: ended or not, and how many of its requests are done."""

    ended: bool
    status: str
    done: int
    total: int
    # The provider's own document (file ids, results URL), for reading the results once it ended.
    document: dict[str, Any]


@dataclass(frozen=True)
class ItemResult:
    """One request's result: the body a synchronous request would have received (status 200), or why none."""

    custom_id: str
    body: str | None
    failure: str | None


@dataclass(frozen=True)
class Usage:
    """What one answer used, as its body reports it; ``billed`` where the provider said what it charged."""

    prompt_tokens: int
    completion_tokens: int
    billed: float | None = None


class BatchApi(Protocol):
    """One provider's batch API (a module's class), asked over ``http`` (its key in the client's headers)."""

    name: str
    # The documented limits of one batch.
    max_requests: int
    max_bytes: int

    def headers(self, api_key: str | None) -> dict[str, str]: ...

    def submit(self, http: httpx.Client, base_url: str, model_id: str, items: Sequence[BatchItem]) -> str: ...

    def state(self, http: httpx.Client, base_url: str, batch_id: str) -> BatchState: ...

    def results(self, http: httpx.Client, base_url: str, state: BatchState) -> list[ItemResult]: ...

    def usage(self, body: str) -> Usage: ...

    def item_bytes(self, item: BatchItem, model_id: str) -> int: ...


class BatchApiError(Exception):
    """The provider refused or did not answer a batch call after bounded retries (the message names it)."""


def call(http: httpx.Client, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """``method url`` with bounded retries of what is worth retrying; a refusal is a BatchApiError."""
    last = "no attempt"
    for attempt in range(1, ATTEMPTS + 1):
        try:
            response = http.request(method, url, **kwargs)
        except httpx.TransportError as error:
            last = f"{type(error).__name__}: {error}"
        else:
            if response.status_code < 300:
                return response
            last = f"HTTP {response.status_code}: {response.text[:300]}"
            if response.status_code not in RETRYABLE:
                break
        if attempt < ATTEMPTS:
            time.sleep(min(8.0, 0.5 * 2**attempt))
    raise BatchApiError(f"{method} {url}: {last}")


def json_lines(text: str) -> list[dict[str, Any]]:
    """The objects of a JSONL document (blank lines skipped; a broken line is an error, never skipped)."""
    lines = []
    for line in text.splitlines():
        if line.strip():
            value = json.loads(line)
            if not isinstance(value, dict):
                raise BatchApiError(f"a result line is not an object: {line[:200]}")
            lines.append(value)
    return lines


def chat_usage(body: str) -> Usage:
    """The usage of an OpenAI-style chat completion (``usage.cost`` is what OpenRouter billed)."""
    usage = json.loads(body).get("usage") or {}
    cost = usage.get("cost")
    billed = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    return Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), billed)


# The statuses after which an OpenAI-style batch (OpenAI's, OpenRouter's) changes no more.
OPENAI_STYLE_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


def openai_style_state(http: httpx.Client, base_url: str, batch_id: str) -> BatchState:
    """An OpenAI-style batch as ``GET {base}/batches/{id}`` tells it: ``status`` and ``request_counts``."""
    document = call(http, "GET", f"{base_url.rstrip('/')}/batches/{batch_id}").json()
    counts = document.get("request_counts") or {}
    done = int(counts.get("completed") or 0) + int(counts.get("failed") or 0)
    status = str(document.get("status"))
    return BatchState(status in OPENAI_STYLE_ENDED, status, done, int(counts.get("total") or 0), document)


def openai_style_result(line: dict[str, Any]) -> ItemResult:
    """One line of an OpenAI (or OpenRouter) batch's results: ``{custom_id, response: {status_code, body}, error}``."""
    custom_id = str(line.get("custom_id"))
    response = line.get("response") or {}
    error = line.get("error")
    status = response.get("status_code") if isinstance(response, dict) else None
    body = response.get("body") if isinstance(response, dict) else None
    if error or status != 200 or not isinstance(body, dict):
        why = json.dumps(error or body or {"status_code": status})[:300]
        return ItemResult(custom_id, None, f"HTTP {status}: {why}" if status else why)
    return ItemResult(custom_id, json.dumps(body, ensure_ascii=False), None)
