"""What a response says of the provider's request rate limit: its rate-limit headers, read as one value.

Which headers each provider sends is its module's (``Provider.rate_headers``): OpenAI and OpenRouter send
``x-ratelimit-limit-requests``, ``-remaining-requests`` and ``-reset-requests`` (a duration: "6m0s", "1s",
"20ms"); Anthropic sends ``anthropic-ratelimit-requests-limit``, ``-remaining`` and ``-reset`` (an RFC 3339
time). Each says the limit is per minute and the reset is when the limit is *fully replenished* (a token bucket
refilling at the limit's rate).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from snap_bench.providers import registered
from snap_bench.providers.base import RateHeaderNames

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
    """The request limit a response's headers state (in any registered provider's names), or None when they
    state none or no usable one (a limit that is not a positive whole number)."""
    lower = {name.lower(): value for name, value in headers.items()}
    for names in _styles():
        limit = _whole(lower.get(names.limit.lower()))
        if limit is None or limit <= 0:
            continue
        reset = lower.get(names.reset.lower()) if names.reset else None
        return RateHeaders(limit, _whole(lower.get(names.remaining.lower())), _reset_s(names, reset, now))
    return None


@functools.cache
def _styles() -> tuple[RateHeaderNames, ...]:
    """The registered providers' rate-limit headers, each set once."""
    return tuple(dict.fromkeys(p.rate_headers for p in registered().values() if p.rate_headers is not None))


def _reset_s(names: RateHeaderNames, reset: str | None, now: float) -> float | None:
    if reset is None:
        return None
    return parse_reset_time(reset, now) if names.reset_is == "time" else parse_duration(reset)


def _whole(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        number = int(value.strip())
    except ValueError:
        return None
    return number if number >= 0 else None
