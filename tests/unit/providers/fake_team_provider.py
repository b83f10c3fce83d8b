"""A fake provider, as a team's own package would register it (tests/unit/providers/test_registry.py): an
OpenAI-style API on a host of its own, with a key header of its own."""

from __future__ import annotations

from snap_bench.providers import openai_chat
from snap_bench.providers.base import Provider

HOST = "llm.team.example"


def headers(api_key: str | None) -> dict[str, str]:
    return {"x-team-key": api_key} if api_key else {}


PROVIDER = Provider(
    name="team-llm",
    host=HOST,
    own_endpoint=True,
    base_url=f"https://{HOST}/v1",
    key_env="TEAM_LLM_KEY",
    url=openai_chat.chat_url,
    headers=headers,
    payload=openai_chat.compatible_payload,
    parse=openai_chat.parse,
    secret_headers=("x-team-key",),
    key_shapes=(r"team-[0-9a-f]{24}",),
)
# Not a Provider: an entry point pointing here is refused with a message naming it.
NOT_A_PROVIDER = {"name": "team-llm"}
