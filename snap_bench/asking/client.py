"""Async chat client on httpx, with bounded retries, in the dialect of the model's endpoint (where the
request goes, its key headers, how a reply and an error are read: its provider's, :mod:`snap_bench.providers`).

A reply is never an exception: after the retry budget is spent, the reply carries the error, and the
caller records it as an API error (-3) and the session goes on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from snap_bench.providers import PLAIN, Parsed, Provider, provider_named

# Anthropic's 529 overloaded_error and Gemini's 503 UNAVAILABLE among them.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
CACHE_STATUS_HEADER = "x-openrouter-cache-status"


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n waits uniform(0, min(max_delay, base * 2**n)).

    A Retry-After header replaces the jittered wait (capped at ``max_delay``).
    """

    max_attempts: int = 5
    # 429s asked again beyond max_attempts: each waits its Retry-After, and at a rate limit the pace slows
    # down (snap_bench.asking.pacing), so a refusal there costs a wait, never the answer.
    max_rate_limited: int = 10
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    timeout_s: float = 120.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
        return rng.uniform(0.0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))


@dataclass(frozen=True)
class ChatReply:
    """The outcome of one chat request after retries: text, or an error description."""

    text: str | None
    error: str | None
    status: int | None
    latency_s: float
    attempts: int
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # usage.completion_tokens_details.reasoning_tokens: what a reasoning model spent thinking.
    reasoning_tokens: int | None = None
    finish_reason: str | None = None
    # choices[0].logprobs.content as the endpoint sent it (None when it sent none: never invented).
    logprobs: list[dict[str, Any]] | None = None
    # The last failure never reached a server (refused, unresolvable, no scheme): a stop, not an outage.
    unreachable: bool = False
    # Who served the reply, as the response names it (OpenRouter's `provider`, the `model` that answered).
    provider: str | None = None
    served_model: str | None = None
    system_fingerprint: str | None = None
    # What the endpoint billed for this ask, every attempt included (usage.cost), where it said.
    cost_usd: float | None = None
    # The attempts that were answered (HTTP 200), which are what is billed: a refused attempt (429, an outage's
    # 5xx, a timeout) costs nothing and is no request of the spend.
    billed_requests: int = 0
    # The reply came from the endpoint's response cache (OpenRouter's X-OpenRouter-Cache-Status: HIT).
    cache_hit: bool = False
    # Refused by the provider's moderation (a 403 with a moderation flag, or finish_reason content_filter):
    # an answer code of the condition, not a problem of the key.
    moderated: bool = False
    # The waits between attempts (backoff or Retry-After) and why each attempt before the last failed, in
    # short ("HTTP 429", "timeout"): what the progress says of an ask that was retried.
    waited_s: float = 0.0
    retried_for: str | None = None

    def retry_note(self) -> str | None:
        """One line on the retries of this ask ("3 attempts, 4.2 s waited (HTTP 429, timeout)"), or None."""
        if self.attempts <= 1 or self.retried_for is None:
            return None
        return f"{self.attempts} attempts, {self.waited_s:.1f} s waited ({self.retried_for})"


def parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class ChatClient:
    """One connection pool per base URL and worker; use as an async context manager or aclose()."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        policy: RetryPolicy,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        max_connections: int = 100,
        dialect: Provider | None = None,
        model_id: str = "",
    ) -> None:
        dialect = dialect or provider_named(PLAIN)
        headers = {"Content-Type": "application/json", **dialect.headers(api_key)}
        self.url = dialect.url(base_url, model_id)
        self._dialect = dialect
        self._policy = policy
        self._sleep = sleep
        self._rng = rng or random.Random()
        # httpx's default pool (100 connections) would queue requests beyond it: room for every one in flight.
        limits = httpx.Limits(max_connections=max(100, max_connections), max_keepalive_connections=max_connections)
        self._http = httpx.AsyncClient(
            headers=headers, timeout=httpx.Timeout(policy.timeout_s, connect=10.0), limits=limits
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def complete(
        self,
        body: bytes,
        *,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        before_attempt: Callable[[int], Awaitable[None]] | None = None,
        on_response: Callable[[httpx.Response], None] | None = None,
    ) -> ChatReply:
        """POST ``body``; retry what is worth retrying; never raise for a provider's failure.

        ``before_attempt(n)`` is awaited before attempt n is sent (the session's shared rate limit and
        request budget; it may raise to stop asking); ``sleep`` replaces the backoff wait;
        ``on_response`` sees every response received, failures included (to record them).
        """
        wait = sleep or self._sleep
        started = time.perf_counter()
        last_error = "no attempt made"
        last_status: int | None = None
        billed: float | None = None
        waited = 0.0
        failures: list[str] = []  # why each attempt before this one failed, in short

        answered = 0  # attempts answered with a 200: the billed ones

        def retried(reply: ChatReply) -> ChatReply:
            return dataclasses.replace(
                reply, waited_s=waited, retried_for=", ".join(failures) or None, billed_requests=answered
            )

        rate_limited = 0  # 429s not counted against max_attempts
        attempt = 0
        while attempt - rate_limited < self._policy.max_attempts:
            attempt += 1
            if before_attempt is not None:
                await before_attempt(attempt)
            retry_after: float | None = None
            try:
                response = await self._http.post(self.url, content=body)
            except httpx.TimeoutException as error:
                last_error, last_status = f"timeout ({type(error).__name__})", None
            except httpx.UnsupportedProtocol as error:
                # A base URL without http:// or https:// can never work: asking again changes nothing.
                latency = time.perf_counter() - started
                message = f"bad endpoint URL {self.url}: {error}"
                return ChatReply(None, message, None, latency, attempt, unreachable=True)
            except httpx.ConnectError as error:
                # Nothing listens there (refused, no such host): waiting and asking again only multiplies
                # the delay by the attempts, for every condition. One attempt; snap_bench.asking.stops ends the model.
                message = f"connection failed ({type(error).__name__}: {error}) to {self.url}"
                return ChatReply(None, message, None, time.perf_counter() - started, attempt, unreachable=True)
            except httpx.TransportError as error:
                last_error, last_status = f"connection failed ({type(error).__name__}: {error})", None
            else:
                if on_response is not None:
                    on_response(response)
                last_status = response.status_code
                if response.status_code == 200:
                    answered += 1
                    parsed = self._dialect.parse(response.text)
                    reply = _reply(parsed, started, attempt, response.headers.get(CACHE_STATUS_HEADER))
                    if reply.cost_usd is not None:
                        billed = (billed or 0.0) + reply.cost_usd
                    if reply.error is None or not parsed.retry:
                        return retried(dataclasses.replace(reply, cost_usd=billed))
                    last_error = reply.error
                elif response.status_code in RETRYABLE_STATUS and not self._dialect.hopeless_error(
                    response.status_code, response.text
                ):
                    last_error = f"HTTP {response.status_code}: {_short(response.text)}"
                    retry_after = parse_retry_after(response.headers.get("retry-after"))
                    if response.status_code == 429 and rate_limited < self._policy.max_rate_limited:
                        rate_limited += 1
                else:
                    return retried(
                        ChatReply(
                            None,
                            f"HTTP {response.status_code}: {_short(response.text)}",
                            response.status_code,
                            time.perf_counter() - started,
                            attempt,
                            cost_usd=billed,
                            moderated=self._dialect.moderated_error(response.status_code, response.text),
                        )
                    )
            failures.append(_in_short(last_error, last_status))
            if attempt - rate_limited < self._policy.max_attempts:
                delay = self._policy.delay(attempt, retry_after, self._rng)
                waited += delay
                await wait(delay)
        return retried(
            ChatReply(
                None,
                f"gave up after {attempt} attempts: {last_error}",
                last_status,
                time.perf_counter() - started,
                attempt,
                cost_usd=billed,
            )
        )


def reply_from_recording(text: str, attempt: int, cache_status: str | None = None, dialect: str = "") -> ChatReply:
    """The reply a recorded 200 stands for, parsed exactly as a live one is (the dialect's parse, on its text)."""
    parse = provider_named(dialect or PLAIN).parse
    return _reply(parse(text), time.perf_counter(), attempt, cache_status)


def _reply(parsed: Parsed, started: float, attempt: int, cache_status: str | None = None) -> ChatReply:
    """A 200 as a reply: what its body says, with when and on which attempt."""
    return ChatReply(
        text=parsed.text if parsed.error is None else None,
        error=parsed.error,
        status=200,
        latency_s=time.perf_counter() - started,
        attempts=attempt,
        prompt_tokens=parsed.prompt_tokens,
        completion_tokens=parsed.completion_tokens,
        reasoning_tokens=parsed.reasoning_tokens,
        finish_reason=parsed.finish_reason,
        logprobs=parsed.logprobs,
        provider=parsed.provider,
        served_model=parsed.served_model,
        system_fingerprint=parsed.system_fingerprint,
        cost_usd=parsed.cost_usd,
        cache_hit=parsed.error is None and (cache_status or "").upper() == "HIT",
        moderated=parsed.moderated,
    )


def _in_short(error: str, status: int | None) -> str:
    """A failed attempt in a few words, for the progress: "HTTP 429", "timeout", "connection", "malformed 200"."""
    if status is not None and status != 200:
        return f"HTTP {status}"
    if status == 200:
        return "malformed 200"
    return error.split(" (", 1)[0]


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."
