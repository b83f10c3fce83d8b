"""What an ask costs: what the endpoint billed (usage.cost) where it says, else the entry's price table;
and the worst a request can cost, held against --snap-max-cost while it is in flight."""

from __future__ import annotations

from snap_bench.asking.client import ChatReply
from snap_bench.design.models import ModelSpec

# A prompt of N bytes of JSON holds at most about N / 2 tokens (a token is rarely under two bytes, and the
# body's keys and quotes are bytes no token is billed for): a generous bound for the worst case.
BYTES_PER_TOKEN_AT_LEAST = 2


def cost_usd(model: ModelSpec, reply: ChatReply) -> float:
    """What the reply cost: the billed usage.cost where the endpoint reported it, else by the entry's
    price (0 without a price or usage)."""
    if reply.cost_usd is not None:
        return reply.cost_usd
    if model.price is None:
        return 0.0
    return (
        (reply.prompt_tokens or 0) * model.price.input_per_million
        + output_tokens(reply) * model.price.output_per_million
    ) / 1e6


def worst_case_usd(model: ModelSpec, body: bytes, max_tokens: int) -> float:
    """The most one request of ``body`` can cost by the entry's price: its whole prompt and its whole output
    budget (0 without a price: nothing to hold)."""
    if model.price is None:
        return 0.0
    prompt_tokens = len(body) / BYTES_PER_TOKEN_AT_LEAST
    return (prompt_tokens * model.price.input_per_million + max_tokens * model.price.output_per_million) / 1e6


def output_tokens(reply: ChatReply) -> int:
    """The tokens billed as output, reasoning included.

    OpenAI's and OpenRouter's ``completion_tokens`` already include the reasoning tokens; a provider
    whose completion count is smaller than its reasoning count reports them apart, so they are added.
    """
    completion, reasoning = reply.completion_tokens or 0, reply.reasoning_tokens or 0
    return completion if completion >= reasoning else completion + reasoning
