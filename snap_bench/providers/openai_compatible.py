"""A plain OpenAI-compatible server (vLLM, llama.cpp, Ollama, a local model snap-bench starts): chat completions
at whatever base URL the entry names, with a Bearer key where its entry names one.

It gets the bodies it always got (``max_tokens``, the effort as ``reasoning: {effort}``), so recordings made
from one still match; it is also the dialect of any base URL on no registered provider's host, and of a
recorded request whose provider is neither named nor recognised.
"""

from __future__ import annotations

from snap_bench.providers import openai_chat
from snap_bench.providers.base import Provider

NAME = "openai-compatible"

PROVIDER = Provider(
    name=NAME,
    host=None,
    base_url=None,
    key_env=None,
    url=openai_chat.chat_url,
    headers=openai_chat.bearer_headers,
    payload=openai_chat.compatible_payload,
    parse=openai_chat.parse,
    hopeless_error=openai_chat.no_route,
    moderated_error=openai_chat.moderation_flag,
    # Azure-style servers take the key in api-key.
    secret_headers=("authorization", "api-key"),
)
