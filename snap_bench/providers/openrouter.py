"""OpenRouter (openrouter.ai/docs): the default provider, one key (``OPENROUTER_API_KEY``) for many vendors' models,
over the OpenAI chat-completions format at ``https://openrouter.ai/api/v1``.

Its body also holds the entry's routing block with ``require_parameters: true``: a parameter no provider of the
model supports is then refused (404) instead of silently dropped, so a figure is never reported for a setting
the provider ignored. Its reply names the provider that served it and what it billed (``usage.cost``). A 503
that found no provider meeting the routing block is not asked again; a 403 that says the input was flagged is
its moderation (openrouter.ai/docs/api-reference/errors-and-debugging), not the key.

Batch API (openrouter.ai/docs/guides/features/batch-api): the requests inline (``POST /api/v1/batches`` with
``endpoint`` and ``model`` before ``requests``: it parses the body as a stream and refuses them after), results
as pages of ``/batches/{id}/results``; ``usage.cost`` is what it billed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from snap_bench.providers import openai_chat
from snap_bench.providers.base import Entry, Messages, Provider, Refusals
from snap_bench.providers.batches import (
    BatchItem,
    BatchState,
    ItemResult,
    Usage,
    call,
    chat_usage,
    openai_style_result,
    openai_style_state,
)

NAME = "openrouter"
HOST = "openrouter.ai"
BASE_URL = "https://openrouter.ai/api/v1"
KEY_ENV = "OPENROUTER_API_KEY"


def payload(model: Entry, messages: Messages, temperature: float | None, max_tokens: int) -> dict[str, Any]:
    body = openai_chat.compatible_payload(model, messages, temperature, max_tokens)
    body["provider"] = {**(model.routing or {}), "require_parameters": True}
    return body


def request_of(item: BatchItem) -> bytes:
    return b'{"custom_id":' + json.dumps(item.custom_id).encode() + b',"body":' + item.body + b"}"


class OpenRouterBatches:
    name = "openrouter"
    # openrouter.ai/docs/guides/features/batch-api: up to 5,000 requests in one call. It names no size
    # limit; 100 MB is ours, so that one call stays a size any proxy on the way accepts.
    max_requests = 5_000
    max_bytes = 100 * 1024 * 1024

    def headers(self, api_key: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}", "X-Title": "snap-bench"} if api_key else {"X-Title": "snap-bench"}

    def item_bytes(self, item: BatchItem, model_id: str) -> int:
        return len(request_of(item)) + 1

    def submit(self, http: httpx.Client, base_url: str, model_id: str, items: Sequence[BatchItem]) -> str:
        # Written by hand so that the order is endpoint, model, requests (a JSON object's order is the writer's).
        head = {"endpoint": urlsplit(items[0].uri).path.removeprefix("/api"), "model": model_id}
        content = json.dumps(head).encode()[:-1] + b',"requests":[' + b",".join(map(request_of, items)) + b"]}"
        created = call(
            http,
            "POST",
            f"{base_url.rstrip('/')}/batches",
            content=content,
            headers={"Content-Type": "application/json"},
        ).json()
        return str(created["id"])

    def state(self, http: httpx.Client, base_url: str, batch_id: str) -> BatchState:
        return openai_style_state(http, base_url, batch_id)

    def results(self, http: httpx.Client, base_url: str, state: BatchState) -> list[ItemResult]:
        url = f"{base_url.rstrip('/')}/batches/{state.document['id']}/results"
        results: list[ItemResult] = []
        cursor: str | None = None
        while True:
            page = call(http, "GET", url, params={"limit": 1000, **({"cursor": cursor} if cursor else {})}).json()
            lines = page.get("data") if isinstance(page.get("data"), list) else page.get("results") or []
            results += [openai_style_result(line) for line in lines]
            cursor = page.get("next_cursor")
            if not cursor or not lines:
                return results

    def usage(self, body: str) -> Usage:
        return chat_usage(body)


PROVIDER = Provider(
    name=NAME,
    host=HOST,
    subdomains=True,
    base_url=BASE_URL,
    key_env=KEY_ENV,
    url=openai_chat.chat_url,
    headers=openai_chat.bearer_headers,
    payload=payload,
    parse=openai_chat.parse,
    hopeless_error=openai_chat.no_route,
    moderated_error=openai_chat.moderation_flag,
    secret_headers=("authorization",),
    key_shapes=(r"sk-or-v1-[A-Za-z0-9]{16,}",),
    refusals=Refusals(
        # Its words for a model it does not serve (retired, or never an id), and for parameters or routing no
        # provider of the model can meet.
        no_such_model=(r"no endpoints found for ", r"is not a valid model id"),
        no_parameters=(r"no endpoints found that can handle the requested parameters",),
        no_route=(openai_chat.NO_ROUTE,),
    ),
    rate_headers=openai_chat.RATE_HEADERS,
    catalogue=openai_chat.CATALOGUE,
    batch=OpenRouterBatches(),
)


# Slugs whose display name (what a response's ``provider`` says) is not the slug's words: OpenRouter's provider list
# names google-vertex "Google" (google-ai-studio is "Google AI Studio").
_DISPLAY_NAMES = {"google-vertex": "Google"}


def same_provider(pinned: str, served: str) -> bool:
    """Whether the provider a response names is the one pinned: OpenRouter takes a slug (``deepinfra``,
    ``deepinfra/turbo``) and a response names the provider by its display name (``DeepInfra``), so the two are
    compared without case, punctuation or the slug's variant, a slug whose name is another word by that name."""
    slug = pinned.split("/")[0]
    return _key(served) in {_key(slug), _key(_DISPLAY_NAMES.get(slug.lower(), slug))}


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())
