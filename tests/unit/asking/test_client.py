"""The chat client's retry behaviour against the fake server: what is retried, how long it waits, when it gives up."""

from __future__ import annotations

import random
from collections import deque

import pytest

from snap_bench.asking.client import ChatClient, ChatReply, RetryPolicy, parse_retry_after
from snap_bench.wire.dialects import encode
from tests.fake_openai_server import Failure, FakeOpenAIServer

BODY = encode(
    {"model": "fake/model", "messages": [{"role": "user", "content": "Say 4"}], "temperature": 0.0, "max_tokens": 8}
)


class RecordedWaits:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


async def complete(server: FakeOpenAIServer, policy: RetryPolicy, waits: RecordedWaits) -> ChatReply:
    async with ChatClient(server.base_url, "sk-test", policy, sleep=waits, rng=random.Random(1)) as client:
        return await client.complete(BODY)


@pytest.mark.asyncio
async def test_success_reports_text_usage_and_one_attempt(fake_server: FakeOpenAIServer) -> None:
    waits = RecordedWaits()
    reply = await complete(fake_server, RetryPolicy(), waits)
    assert reply.text == "4"
    assert reply.attempts == 1
    assert reply.prompt_tokens == 20
    assert waits.waits == []


@pytest.mark.asyncio
@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
async def test_retryable_status_is_retried_then_succeeds(fake_server: FakeOpenAIServer, status: int) -> None:
    fake_server.script.failures = deque([Failure(status), Failure(status)])
    waits = RecordedWaits()
    reply = await complete(fake_server, RetryPolicy(max_attempts=5, base_delay_s=1.0), waits)
    assert reply.text == "4"
    assert reply.attempts == 3
    # full jitter: attempt n waits within [0, base * 2**(n-1)]
    assert len(waits.waits) == 2
    assert 0 <= waits.waits[0] <= 1.0
    assert 0 <= waits.waits[1] <= 2.0


@pytest.mark.asyncio
async def test_retry_after_is_honoured_and_capped(fake_server: FakeOpenAIServer) -> None:
    fake_server.script.failures = deque([Failure(429, retry_after="7"), Failure(503, retry_after="999")])
    waits = RecordedWaits()
    reply = await complete(fake_server, RetryPolicy(max_attempts=3, max_delay_s=30.0), waits)
    assert reply.text == "4"
    assert waits.waits == [7.0, 30.0]


@pytest.mark.asyncio
async def test_dropped_connection_is_retried(fake_server: FakeOpenAIServer) -> None:
    fake_server.script.failures = deque([Failure(drop_connection=True)])
    reply = await complete(fake_server, RetryPolicy(max_attempts=3), RecordedWaits())
    assert reply.text == "4"
    assert reply.attempts == 2


@pytest.mark.asyncio
async def test_timeout_is_retried_and_budget_is_bounded(fake_server: FakeOpenAIServer) -> None:
    fake_server.script.failures = deque([Failure(delay_s=0.5), Failure(delay_s=0.5)])
    waits = RecordedWaits()
    reply = await complete(fake_server, RetryPolicy(max_attempts=2, timeout_s=0.1), waits)
    assert reply.text is None
    assert reply.error is not None
    assert reply.error.startswith("gave up after 2 attempts: timeout")
    assert len(waits.waits) == 1


@pytest.mark.asyncio
async def test_client_error_is_not_retried(fake_server: FakeOpenAIServer) -> None:
    fake_server.script.failures = deque([Failure(401)])
    waits = RecordedWaits()
    reply = await complete(fake_server, RetryPolicy(max_attempts=5), waits)
    assert reply.text is None
    assert reply.error is not None
    assert reply.error.startswith("HTTP 401")
    assert reply.attempts == 1
    assert waits.waits == []


@pytest.mark.asyncio
async def test_refused_connection_is_an_error_not_retried_nor_waited_for() -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
    waits = RecordedWaits()
    async with ChatClient(url, None, RetryPolicy(max_attempts=5), sleep=waits) as client:
        reply = await client.complete(BODY)
    assert reply.text is None
    assert "connection failed" in (reply.error or "")
    assert reply.unreachable
    assert reply.attempts == 1
    assert waits.waits == []
    assert reply.error is not None
    assert url in reply.error


MALFORMED_200 = [
    pytest.param("<html>Bad gateway</html>", id="html"),
    pytest.param('{"id": "x", "choices": []}', id="empty-choices"),
    pytest.param('{"choices": [{"message": {"role": "assistant"}, "finish_reason": "stop"}]}', id="no-content"),
    pytest.param("", id="empty-body"),
]


@pytest.mark.asyncio
@pytest.mark.parametrize("body", MALFORMED_200)
async def test_malformed_200_is_retried_like_a_5xx(fake_server: FakeOpenAIServer, body: str) -> None:
    fake_server.script.failures = deque([Failure(200, body=body)])
    waits = RecordedWaits()
    reply = await complete(fake_server, RetryPolicy(max_attempts=3), waits)
    assert reply.text == "4"
    assert reply.attempts == 2
    assert len(waits.waits) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize("body", MALFORMED_200)
async def test_malformed_200_stays_within_the_attempt_bound(fake_server: FakeOpenAIServer, body: str) -> None:
    fake_server.script.failures = deque([Failure(200, body=body)] * 3)
    reply = await complete(fake_server, RetryPolicy(max_attempts=2), RecordedWaits())
    assert reply.text is None
    assert reply.error is not None
    assert reply.error.startswith("gave up after 2 attempts: malformed reply")
    assert len(fake_server.script.requests) == 2


@pytest.mark.asyncio
async def test_reply_cut_by_the_length_limit_is_not_retried(fake_server: FakeOpenAIServer) -> None:
    cut = '{"choices": [{"message": {"role": "assistant", "content": null}, "finish_reason": "length"}]}'
    fake_server.script.failures = deque([Failure(200, body=cut)])
    reply = await complete(fake_server, RetryPolicy(max_attempts=3), RecordedWaits())
    assert reply.text == ""
    assert reply.attempts == 1


@pytest.mark.asyncio
async def test_base_url_without_scheme_is_not_retried() -> None:
    waits = RecordedWaits()
    async with ChatClient("127.0.0.1:9/v1", None, RetryPolicy(max_attempts=5), sleep=waits) as client:
        reply = await client.complete(BODY)
    assert reply.text is None
    assert reply.unreachable
    assert reply.attempts == 1
    assert reply.error is not None
    assert "http://" in reply.error


def test_retry_after_parses_seconds_and_http_dates() -> None:
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past: no wait


def test_request_body_is_stable() -> None:
    again = encode(
        {"model": "fake/model", "messages": [{"content": "Say 4", "role": "user"}], "temperature": 0.0, "max_tokens": 8}
    )
    assert again == BODY


@pytest.mark.asyncio
async def test_refusals_at_the_rate_limit_do_not_use_up_the_attempts(fake_server: FakeOpenAIServer) -> None:
    # 4 refusals (429) and a 503 with max_attempts=2: the refusals are counted apart (up to max_rate_limited).
    fake_server.script.failures = deque([Failure(429, retry_after="1")] * 4 + [Failure(503, retry_after="0")])
    waits = RecordedWaits()
    reply = await complete(fake_server, RetryPolicy(max_attempts=2, max_rate_limited=4), waits)
    assert reply.text == "4"
    assert reply.attempts == 6
    assert waits.waits == [1.0, 1.0, 1.0, 1.0, 0.0]


@pytest.mark.asyncio
async def test_refusals_beyond_their_allowance_count_as_attempts(fake_server: FakeOpenAIServer) -> None:
    fake_server.script.failures = deque([Failure(429, retry_after="0")] * 20)
    reply = await complete(fake_server, RetryPolicy(max_attempts=2, max_rate_limited=3), RecordedWaits())
    assert reply.text is None
    assert reply.error is not None
    assert reply.error.startswith("gave up after 5 attempts: HTTP 429")
    assert reply.attempts == 5
    assert len(fake_server.script.requests) == 5


@pytest.mark.asyncio
async def test_without_an_allowance_a_refusal_is_an_attempt_as_any(fake_server: FakeOpenAIServer) -> None:
    fake_server.script.failures = deque([Failure(429, retry_after="0")] * 3)
    reply = await complete(fake_server, RetryPolicy(max_attempts=2, max_rate_limited=0), RecordedWaits())
    assert reply.error is not None
    assert reply.error.startswith("gave up after 2 attempts: HTTP 429")


@pytest.mark.asyncio
async def test_the_spend_counts_the_billed_requests_not_the_refused(fake_server: FakeOpenAIServer) -> None:
    """Three refusals (429) and an answer: four attempts, one request billed, and the session's spend line
    (snap_bench.observations.spend) counts that one."""
    from snap_bench.observations.observation import Observation
    from snap_bench.observations.spend import spend_by_model

    fake_server.script.failures = deque([Failure(429, retry_after="0")] * 3)
    reply = await complete(fake_server, RetryPolicy(max_attempts=2, max_rate_limited=4), RecordedWaits())
    assert (reply.text, reply.attempts, reply.billed_requests) == ("4", 4, 1)
    observation = Observation(
        model="m", instrument="i", condition_id="c", cell="c", item="x", factors={}, temperature=0.0, run=1,
        messages=[], raw_answer=reply.text, score=4, keyed_score=4.0, code=None, reason="",
        attempts=reply.attempts, billed_requests=reply.billed_requests,
    )  # fmt: skip
    assert spend_by_model([observation])["m"]["requests"] == 1
