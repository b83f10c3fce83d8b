"""Anthropic's batch results are read from the batch API's own host: the client carries the key with every call,
so a results_url on another host is refused before anything is sent there."""

from __future__ import annotations

import httpx
import pytest

from snap_bench.providers.anthropic import AnthropicBatches
from snap_bench.providers.batches import BatchApiError, BatchState

BASE = "https://api.anthropic.com"


def client(sent: list[str]) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(str(request.url))
        return httpx.Response(200, text="")

    return httpx.Client(transport=httpx.MockTransport(answer), headers={"x-api-key": "sk-ant-fake"})


def state(link: str) -> BatchState:
    return BatchState(True, "ended", 0, 0, {"results_url": link})


def test_results_on_another_host_are_not_fetched() -> None:
    sent: list[str] = []
    with client(sent) as http, pytest.raises(BatchApiError, match=r"not on api\.anthropic\.com"):
        AnthropicBatches().results(http, BASE, state("https://elsewhere.example/results/1"))
    assert sent == []


def test_results_on_the_batch_apis_host_are_fetched() -> None:
    sent: list[str] = []
    with client(sent) as http:
        assert AnthropicBatches().results(http, BASE, state(f"{BASE}/v1/messages/batches/b1/results")) == []
    assert sent == [f"{BASE}/v1/messages/batches/b1/results"]
