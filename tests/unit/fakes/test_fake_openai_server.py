"""The FAKE OpenAI-compatible server counts requests in flight as the client has them, so the ceiling tests built
on its count (tests/session/test_rate_limit.py) fail only for the product's defects, never for the fake's timing."""

from __future__ import annotations

import time

import httpx

from tests.fake_openai_server import FakeOpenAIServer, FakeScript


def test_a_client_waiting_for_each_answer_is_never_counted_twice_in_flight() -> None:
    script = FakeScript(latency_s=0.0)
    counted_out = script.leave

    def late_leave() -> None:
        # The handler's thread descheduled around its count-out, as on a busy machine: the client, which has one
        # request at a time, must not be seen with two.
        time.sleep(0.2)
        counted_out()

    script.leave = late_leave  # type: ignore[method-assign]
    with FakeOpenAIServer(script) as server, httpx.Client(base_url=server.base_url, timeout=10) as client:
        for _ in range(4):
            body = {"model": "fake-model", "messages": [{"role": "user", "content": "2 + 2?"}]}
            assert client.post("/chat/completions", json=body).status_code == 200
    assert script.max_in_flight == 1
    assert len(script.requests) == 4
