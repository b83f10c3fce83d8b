"""What a response says of the provider's request rate limit: its rate-limit headers, read as one value.

OpenAI and OpenRouter send ``x-ratelimit-limit-requests``, ``x-ratelimit-remaining-requests`` and
``x-ratelimit-reset-requests`` (a duration: "6m0s", "1s", "20ms"); Anthropic sends
``anthropic-ratelimit-requests-limit``, ``-remaining`` and ``-reset`` (an RFC 3339 time). Both say the limit is
per minute and the reset is when the limit is *fully replenished* (a token bucket refilling at the limit's rate).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

OPENAI_STYLE = ("x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests")
ANTHROPIC_STYLE = (
    "anthropic-ratelimit-requests-limit",
    "anthropic-ratelimit-requests-remaining",
    "anthropic-ratelimit-requests-reset",
)
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
MIN_RESET_CLOCK_S = 10.0
SLOWER_WINDOW = 0.8


@dataclass(frozen=True)
class RateHeaders:
    """A request limit as a response states it: the limit, what is left of it, and the seconds until it is full."""

    limit: int
    remaining: int | None
    reset_s: float | None

    def per_second(self) -> float:
        """The request rate the provider allows: its per-minute limit, or less where the headers show the limit
        refilling more slowly (a longer window, a reset of "6m0s": ``limit - remaining`` back in ``reset_s``)."""
        rate = self.limit / 60.0
        used = None if self.remaining is None else self.limit - self.remaining
        # Only a long reset is a fine enough clock (Anthropic's is in whole seconds), and only a clearly slower
        # refill is another window rather than the rounding of this one.
        if used is not None and used >= 2 and self.reset_s is not None and self.reset_s >= MIN_RESET_CLOCK_S:
            refill = used / self.reset_s
            if refill < SLOWER_WINDOW * rate:
                rate = refill
        return rate


def parse_duration(value: str) -> float | None:
    """Seconds in an OpenAI-style duration ("6m0s", "1s", "20ms", "1h2m3.5s", or bare seconds), else None."""
    text = value.strip().replace(" ", "")
    try:
        seconds = float(text)
    except ValueError:
        parts = _DURATION_PART.findall(text)
        if not parts or "".join(number + unit for number, unit in parts) != text:
            return None
        seconds = sum(float(number) * _UNIT_S[unit] for number, unit in parts)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def parse_reset_time(value: str, now: float) -> float | None:
    """Seconds from ``now`` (epoch seconds) to an RFC 3339 time ("2026-11-25T22:30:01Z"), at least 0, else None."""
    try:
        when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, when.timestamp() - now)


def read_rate_headers(headers: Mapping[str, str], now: float) -> RateHeaders | None:
    """The request limit a response's headers state (OpenAI/OpenRouter or Anthropic style), or None when they
    state none or no usable one (a limit that is not a positive whole number)."""
    lower = {name.lower(): value for name, value in headers.items()}
    for (limit_name, remaining_name, reset_name), read_reset in (
        (OPENAI_STYLE, parse_duration),
        (ANTHROPIC_STYLE, lambda value: parse_reset_time(value, now)),
    ):
        limit = _whole(lower.get(limit_name))
        if limit is None or limit <= 0:
            continue
        reset = lower.get(reset_name)
        return RateHeaders(limit, _whole(lower.get(remaining_name)), None if reset is None else read_reset(reset))
    return None


def _whole(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        number = int(value.strip())
    except ValueError:
        return None
    return number if number >= 0 else None
