"""Mistral AI's La Plateforme (docs.mistral.ai/api): chat completions at ``https://api.mistral.ai/v1`` with a
Bearer ``MISTRAL_API_KEY``, in the OpenAI format with Mistral's own fields.

The body holds ``max_tokens`` (Mistral refuses OpenAI's ``max_completion_tokens``: its validator rejects any
field it does not know, 422 "Extra inputs are not permitted", which stops the model naming the parameter) and,
for an entry's ``reasoning:``, ``reasoning_effort`` at the top level (the models with adjustable reasoning;
``off`` sends ``none``). No ``random_seed`` is sent: a condition's runs are repetitions, and one seed would make
them agree by construction. A reasoning model's ``message.content`` is a list of blocks (thinking, then text):
the text blocks are the answer. Its errors are an object of their own (``{"object": "error", "message",
"type", "code"}``); an unknown model is ``type: invalid_model`` ("Invalid model: x"). It states the request limit
per minute in ``x-ratelimit-limit-req-minute`` and ``x-ratelimit-remaining-req-minute`` (no reset), and lists its
models at ``GET /v1/models``.
"""

from __future__ import annotations

import json
from typing import Any

from snap_bench.providers import openai_chat
from snap_bench.providers.base import Entry, Messages, Parsed, Provider, RateHeaderNames, Refusals, malformed

NAME = "mistral"
HOST = "api.mistral.ai"
BASE_URL = "https://api.mistral.ai/v1"
KEY_ENV = "MISTRAL_API_KEY"


def payload(model: Entry, messages: Messages, temperature: float | None, max_tokens: int) -> dict[str, Any]:
    body = openai_chat.chat_body(model, messages, temperature)
    body["max_tokens"] = max_tokens
    effort = openai_chat.reasoning_effort(model)
    if effort is not None:
        body["reasoning_effort"] = effort
    return body


def parse(body: str) -> Parsed:
    """A chat completion; a reasoning model's content blocks are read as their text blocks' text."""
    try:
        reply = json.loads(body)
        message = reply["choices"][0]["message"] if isinstance(reply, dict) and reply.get("choices") else None
        if isinstance(message, dict) and isinstance(message.get("content"), list):
            message["content"] = "".join(
                str(block.get("text", ""))
                for block in message["content"]
                if isinstance(block, dict) and block.get("type") == "text"
            )
            body = json.dumps(reply)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        return malformed(body, error)
    return openai_chat.parse(body)


PROVIDER = Provider(
    name=NAME,
    host=HOST,
    own_endpoint=True,
    base_url=BASE_URL,
    key_env=KEY_ENV,
    url=openai_chat.chat_url,
    headers=openai_chat.bearer_headers,
    payload=payload,
    parse=parse,
    secret_headers=("authorization",),
    refusals=Refusals(no_such_model=(r"Invalid model: ", r"\"type\"\s*:\s*\"invalid_model\"")),
    rate_headers=RateHeaderNames("x-ratelimit-limit-req-minute", "x-ratelimit-remaining-req-minute"),
    catalogue=openai_chat.CATALOGUE,
)
