"""Async OpenAI-compatible chat client on httpx, with bounded retries.

A reply is never an exception: after the retry budget is spent, the reply carries the error, and the
caller records it as an API error (-3) and the session goes on.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n waits uniform(0, min(max_delay, base * 2**n)).

    A Retry-After header replaces the jittered wait (capped at ``max_delay``).
    """

    max_attempts: int = 5
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


def request_body(
    provider_id: str,
    messages: list[dict[str, str]],
    temperature: float,
    max_tokens: int,
    fields: Mapping[str, Any] | None = None,
) -> bytes:
    """The exact bytes sent; stable key order so that cassettes match on body.

    ``fields`` are what a model's entry adds (reasoning, logprobs; snap_bench.asking.request_fields): absent
    unless set, so that the body of an entry without them, and its recordings, stay as they were.
    """
    payload = {
        **(fields or {}),
        "model": provider_id,
        "messages": messages,
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


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
    ) -> None:
        headers = {"Content-Type": "application/json", "X-Title": "snap-bench"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.url = f"{base_url.rstrip('/')}/chat/completions"
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
        for attempt in range(1, self._policy.max_attempts + 1):
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
                    reply = _reply_from(response, started, attempt)
                    if reply.error is None or not _retryable_200(response):
                        return reply
                    last_error = reply.error
                elif response.status_code in RETRYABLE_STATUS:
                    last_error = f"HTTP {response.status_code}: {_short(response.text)}"
                    retry_after = parse_retry_after(response.headers.get("retry-after"))
                else:
                    return ChatReply(
                        None,
                        f"HTTP {response.status_code}: {_short(response.text)}",
                        response.status_code,
                        time.perf_counter() - started,
                        attempt,
                    )
            if attempt < self._policy.max_attempts:
                await wait(self._policy.delay(attempt, retry_after, self._rng))
        return ChatReply(
            None,
            f"gave up after {self._policy.max_attempts} attempts: {last_error}",
            last_status,
            time.perf_counter() - started,
            self._policy.max_attempts,
        )


def reply_from_recording(text: str, attempt: int) -> ChatReply:
    """The reply a recorded 200 stands for, parsed exactly as a live one is (the same function, on its text)."""
    return _reply_from_text(text, time.perf_counter(), attempt)


def _reply_from(response: httpx.Response, started: float, attempt: int) -> ChatReply:
    return _reply_from_text(response.text, started, attempt)


def _reply_from_text(body: str, started: float, attempt: int) -> ChatReply:
    """A 200's body as a reply: the answer's text, or why there is none."""
    latency = time.perf_counter() - started
    try:
        payload: dict[str, Any] = json.loads(body)
        if "error" in payload and not payload.get("choices"):
            return ChatReply(
                None, f"provider error in a 200 reply: {_short(json.dumps(payload['error']))}", 200, latency, attempt
            )
        choice = payload["choices"][0]
        text = choice["message"].get("content")
        # A reply cut by the token limit may legitimately hold no text (a reasoning model spent the
        # budget thinking); any other reply without text is a broken one and is asked again.
        if not isinstance(text, str) and choice.get("finish_reason") != "length":
            raise KeyError("message content")
        usage = payload.get("usage") or {}
        details = usage.get("completion_tokens_details") or {}
        logprobs = (choice.get("logprobs") or {}).get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        return ChatReply(None, f"malformed reply ({type(error).__name__}): {_short(body)}", 200, latency, attempt)
    return ChatReply(
        text=text if isinstance(text, str) else "",
        error=None,
        status=200,
        latency_s=latency,
        attempts=attempt,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        reasoning_tokens=_count(details.get("reasoning_tokens") if isinstance(details, dict) else None),
        finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
        logprobs=logprobs if isinstance(logprobs, list) and logprobs else None,
    )


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _retryable_200(response: httpx.Response) -> bool:
    """Whether a 200 without a usable answer is worth asking again.

    A malformed or empty 200 (a proxy's HTML error page, ``choices: []``, no message content) is a
    transient fault like a 5xx. OpenRouter reports upstream failures as a 200 with an error object
    carrying the real code: retried only when that code is.
    """
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return True
    if not error:
        return True
    code = error.get("code") if isinstance(error, dict) else None
    return isinstance(code, int) and code in RETRYABLE_STATUS


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."
