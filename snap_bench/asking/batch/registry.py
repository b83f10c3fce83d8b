"""Which dialect's endpoint has which batch API; a dialect without one (a plain OpenAI-compatible server,
Gemini) is asked synchronously."""

from __future__ import annotations

from snap_bench.asking.batch.anthropic_batches import AnthropicBatches
from snap_bench.asking.batch.apis import BatchApi
from snap_bench.asking.batch.openai_batches import OpenAIBatches
from snap_bench.asking.batch.openrouter_batches import OpenRouterBatches
from snap_bench.design.models import OPENAI, OPENROUTER

BATCH_APIS: dict[str, BatchApi] = {
    OPENAI: OpenAIBatches(),
    OPENROUTER: OpenRouterBatches(),
    "anthropic": AnthropicBatches(),  # the native Messages dialect
}


def batch_api(dialect: str) -> BatchApi | None:
    return BATCH_APIS.get(dialect)
