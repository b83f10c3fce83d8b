"""Reading a provider's rate-limit headers: OpenAI/OpenRouter durations, Anthropic's RFC 3339 reset, and the rate
they allow; and the fake rate limit's headers read back as the limit it enforces."""

from __future__ import annotations

import pytest

from snap_bench.asking.rate_headers import RateHeaders, parse_duration, read_rate_headers
from tests.fake_rate_limited import FakeRateLimit, openai_duration

NOW = 1_790_000_000.0  # 2026-09-21T14:13:20Z


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("6m0s", 360.0), ("1s", 1.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("1m30s", 90.0)],
)
def test_openai_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5x", "1s later", "-3", "nan"])
def test_what_is_no_duration(text: str) -> None:
    assert parse_duration(text) is None


def test_openai_style_headers() -> None:
    headers = {
        "X-RateLimit-Limit-Requests": "60",
        "x-ratelimit-remaining-requests": "59",
        "x-ratelimit-reset-requests": "1s",
    }
    assert read_rate_headers(headers, NOW) == RateHeaders(limit=60, remaining=59, reset_s=1.0)


def test_anthropic_style_headers_reset_at_a_time() -> None:
    headers = {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": "2026-09-21T14:13:50Z",
    }
    assert read_rate_headers(headers, NOW) == RateHeaders(limit=50, remaining=0, reset_s=30.0)


@pytest.mark.parametrize(
    "headers",
    [{}, {"x-ratelimit-limit-requests": "lots"}, {"x-ratelimit-limit-requests": "0"}, {"retry-after": "3"}],
)
def test_no_usable_limit_is_none(headers: dict[str, str]) -> None:
    assert read_rate_headers(headers, NOW) is None


def test_the_rate_is_the_per_minute_limit() -> None:
    assert RateHeaders(60, 59, 1.0).per_second() == pytest.approx(1.0)
    # A short reset of a nearly used-up minute is still the minute's rate (a token bucket refilling at it).
    assert RateHeaders(120, 0, 60.0).per_second() == pytest.approx(2.0)


def test_a_longer_window_shows_in_a_slower_refill() -> None:
    # 250 of 1,000 used and back in 6 minutes: the limit refills at 250 per 360 s, not 1,000 a minute.
    assert RateHeaders(1000, 750, parse_duration("6m0s")).per_second() == pytest.approx(250 / 360)
    # A reset in whole seconds over a short span is too coarse a clock to slow the pace on.
    assert RateHeaders(600, 597, 1.0).per_second() == pytest.approx(10.0)


@pytest.mark.parametrize("style", ["openai", "anthropic"])
def test_the_fakes_headers_state_the_limit_it_enforces(style: str) -> None:
    now = [0.0]
    fake = FakeRateLimit(120, style, clock=lambda: now[0], wall_clock=lambda: NOW + now[0])  # type: ignore[arg-type]
    for _ in range(30):
        refused, headers = fake()
        assert refused is None
        now[0] += 0.5  # exactly the allowed rate: never refused
        read = read_rate_headers(headers, NOW + now[0])
        assert read is not None
        assert read.limit == 120
        assert read.per_second() == pytest.approx(2.0)
    assert (fake.admitted, fake.refused) == (30, 0)


def test_the_fake_refuses_a_burst_with_retry_after() -> None:
    fake = FakeRateLimit(120, "none", clock=lambda: 0.0)
    outcomes = [fake() for _ in range(5)]
    # About a second's worth is allowed at once (2 requests), the rest refused with a Retry-After in whole seconds.
    assert [refused is None for refused, _ in outcomes] == [True, True, False, False, False]
    assert all(refused.retry_after == "1" for refused, _ in outcomes[2:] if refused is not None)
    assert all(headers == {} for _, headers in outcomes)


@pytest.mark.parametrize(("seconds", "text"), [(0.02, "20ms"), (1.0, "1s"), (360.0, "6m0s"), (1.5, "1.5s")])
def test_the_fakes_durations_read_back(seconds: float, text: str) -> None:
    assert openai_duration(seconds) == text
    assert parse_duration(text) == pytest.approx(seconds)
