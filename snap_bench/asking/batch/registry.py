"""Which dialect's endpoint has which batch API: its provider's (``Provider.batch``); a provider without one (a
plain OpenAI-compatible server) is asked synchronously."""

from __future__ import annotations

from snap_bench.providers import registered
from snap_bench.providers.batches import BatchApi


def batch_api(dialect: str) -> BatchApi | None:
    provider = registered().get(dialect)
    return None if provider is None else provider.batch
