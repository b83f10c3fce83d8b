"""A FAKE provider rate limit for the loopback fake server (tests/fake_openai_server.py), for the project's tests
and benches only.

It allows ``per_minute`` requests per minute as providers do: a token bucket refilling smoothly at
``per_minute / 60`` per second that holds only about a second's worth (``burst``), so a burst is refused long
before the minute's count is reached. A refused request gets a 429 with ``Retry-After`` in whole seconds (the
time until a request's worth is back, rounded up). Every response carries the documented rate-limit headers:

- ``openai`` (OpenAI, OpenRouter): ``x-ratelimit-limit-requests`` (the per-minute limit),
  ``x-ratelimit-remaining-requests`` and ``x-ratelimit-reset-requests``, the time until the limit is fully
  replenished as a duration ("1s", "6m0s", "20ms");
- ``anthropic``: ``anthropic-ratelimit-requests-limit``, ``-remaining`` and ``-reset``, that time as an RFC 3339
  time (whole seconds, as the documentation's examples);
- ``none``: no rate-limit headers, only the 429 and its Retry-After.

The remaining count is out of the minute's limit (what the providers report), while admission is by the small
bucket (what they enforce).
"""

from __future__ import annotations

import datetime as dt
import math
import threading
import time
from collections.abc import Callable
from typing import Literal

from tests.fake_openai_server import Failure, FakeOpenAIServer, FakeScript

HeaderStyle = Literal["openai", "anthropic", "none"]
HEADER_STYLES: tuple[HeaderStyle, ...] = ("openai", "anthropic", "none")


def openai_duration(seconds: float) -> str:
    """A duration as OpenAI writes one: "20ms", "1s", "1.5s", "6m0s"."""
    if seconds < 1.0:
        return f"{math.ceil(seconds * 1000)}ms"
    minutes, rest = divmod(seconds, 60.0)
    rest_text = f"{rest:.3f}".rstrip("0").rstrip(".")
    return f"{int(minutes)}m{rest_text}s" if minutes else f"{rest_text}s"


class FakeRateLimit:
    """The bucket, its headers and counts; ``clock`` is injectable (monotonic seconds) so its own tests wait for
    nothing."""

    def __init__(
        self,
        per_minute: float,
        style: HeaderStyle = "openai",
        *,
        burst: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.per_minute = per_minute
        self.style = style
        self.rate = per_minute / 60.0
        self.burst = burst if burst is not None else max(1.0, self.rate)
        self._clock = clock
        self._wall_clock = wall_clock
        self._lock = threading.Lock()
        self._at = clock()
        self._tokens = self.burst  # what admits a request
        self._minute = float(per_minute)  # what the headers report
        self.admitted = 0
        self.refused = 0

    def __call__(self) -> tuple[Failure | None, dict[str, str]]:
        with self._lock:
            now = self._clock()
            refill = (now - self._at) * self.rate
            self._at = now
            self._tokens = min(self.burst, self._tokens + refill)
            self._minute = min(float(self.per_minute), self._minute + refill)
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                self._minute = max(0.0, self._minute - 1.0)
                self.admitted += 1
                return None, self._headers()
            self.refused += 1
            wait = math.ceil((1.0 - self._tokens) / self.rate)
            return Failure(429, retry_after=str(max(1, wait))), self._headers()

    def _headers(self) -> dict[str, str]:
        remaining = math.floor(self._minute)
        reset_s = (self.per_minute - self._minute) / self.rate
        limit = str(math.floor(self.per_minute))
        if self.style == "openai":
            return {
                "x-ratelimit-limit-requests": limit,
                "x-ratelimit-remaining-requests": str(remaining),
                "x-ratelimit-reset-requests": openai_duration(reset_s),
            }
        if self.style == "anthropic":
            full = dt.datetime.fromtimestamp(math.ceil(self._wall_clock() + reset_s), dt.UTC)
            return {
                "anthropic-ratelimit-requests-limit": limit,
                "anthropic-ratelimit-requests-remaining": str(remaining),
                "anthropic-ratelimit-requests-reset": full.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        return {}


def rate_limited_server(
    per_minute: float, style: HeaderStyle = "openai", *, latency_s: float = 0.0, burst: float | None = None
) -> tuple[FakeOpenAIServer, FakeRateLimit]:
    """A fake server (not started: use it as a context manager) allowing ``per_minute`` requests a minute."""
    limit = FakeRateLimit(per_minute, style, burst=burst)
    return FakeOpenAIServer(FakeScript(latency_s=latency_s, admit=limit)), limit
