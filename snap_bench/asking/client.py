"""Async OpenAI-compatible chat client on httpx, with bounded retries.

A reply is never an exception: after the retry budget is spent, the reply carries the error, and the
caller records it as an API error (-3) and the session goes on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from snap_bench.wire.request import chat_uri

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
CACHE_STATUS_HEADER = "x-openrouter-cache-status"
# A 503 that no wait will mend: OpenRouter found no provider meeting the request's routing block.
_NO_ROUTE = "no available provider that meets your routing requirements"


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: attempt n waits uniform(0, min(max_delay, base * 2**n)).

    A Retry-After header replaces the jittered wait (capped at ``max_delay``).
    """

    max_attempts: int = 5
    # 429s at the provider's rate limit asked again beyond max_attempts: the pace slows down on each
    # (snap_bench.asking.pacing), so a refusal there costs a wait, never the answer.
    max_rate_limited: int = 5
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
    ) -> None:
        headers = {"Content-Type": "application/json", "X-Title": "snap-bench"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self.url = chat_uri(base_url)
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

        def retried(reply: ChatReply) -> ChatReply:
            return dataclasses.replace(reply, waited_s=waited, retried_for=", ".join(failures) or None)

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
                    reply = _reply_from(response, started, attempt)
                    if reply.cost_usd is not None:
                        billed = (billed or 0.0) + reply.cost_usd
                    if reply.error is None or not _retryable_200(response):
                        return retried(dataclasses.replace(reply, cost_usd=billed))
                    last_error = reply.error
                elif response.status_code in RETRYABLE_STATUS and _NO_ROUTE not in response.text.lower():
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
                            moderated=response.status_code == 403 and _moderation_flag(response.text),
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


def reply_from_recording(text: str, attempt: int, cache_status: str | None = None) -> ChatReply:
    """The reply a recorded 200 stands for, parsed exactly as a live one is (the same function, on its text)."""
    return _reply_from_text(text, time.perf_counter(), attempt, cache_status)


def _reply_from(response: httpx.Response, started: float, attempt: int) -> ChatReply:
    return _reply_from_text(response.text, started, attempt, response.headers.get(CACHE_STATUS_HEADER))


def _reply_from_text(body: str, started: float, attempt: int, cache_status: str | None = None) -> ChatReply:
    """A 200's body as a reply: the answer's text, or why there is none."""
    latency = time.perf_counter() - started
    try:
        payload: dict[str, Any] = json.loads(body)
        if "error" in payload and not payload.get("choices"):
            return ChatReply(
                None, f"provider error in a 200 reply: {_short(json.dumps(payload['error']))}", 200, latency, attempt
            )
        choice = payload["choices"][0]
        served = _served_by(payload)
        if choice.get("error") or choice.get("finish_reason") == "error":
            # OpenRouter reports a failure during generation in the choice of a 200: nothing was answered.
            said = _short(json.dumps(choice.get("error") or {"finish_reason": "error"}))
            return ChatReply(None, f"generation error in a 200 reply: {said}", 200, latency, attempt, **served)
        if choice.get("finish_reason") == "content_filter":
            text = choice.get("message", {}).get("content")
            return ChatReply(
                text if isinstance(text, str) else "",
                None,
                200,
                latency,
                attempt,
                finish_reason="content_filter",
                moderated=True,
                **served,
            )
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
        cache_hit=(cache_status or "").upper() == "HIT",
        **served,
    )


def _served_by(payload: dict[str, Any]) -> dict[str, Any]:
    """Who served a 200 and what it billed: the response's provider, model, fingerprint and usage.cost."""
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    cost = usage.get("cost") if isinstance(usage, dict) else None
    return {
        "provider": _text(payload.get("provider")),
        "served_model": _text(payload.get("model")),
        "system_fingerprint": _text(payload.get("system_fingerprint")),
        "cost_usd": float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    }


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _moderation_flag(body: str) -> bool:
    """A 403 that says the input was flagged (OpenRouter's metadata.reasons / flagged_input), not the key."""
    try:
        error = json.loads(body).get("error") or {}
    except (ValueError, AttributeError):
        return False
    metadata = error.get("metadata") if isinstance(error, dict) else None
    if isinstance(metadata, dict) and ("reasons" in metadata or "flagged_input" in metadata):
        return True
    message = str(error.get("message", "")) if isinstance(error, dict) else ""
    return "moderation" in message.lower() or "flagged" in message.lower()


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _retryable_200(response: httpx.Response) -> bool:
    """Whether a 200 without a usable answer is worth asking again.

    A malformed or empty 200 (a proxy's HTML error page, ``choices: []``, no message content) is a
    transient fault like a 5xx. OpenRouter reports upstream failures as a 200 with an error object
    carrying the real code: retried only when that code is.
    """
    try:
        payload = response.json()
        error = payload.get("error")
    except (ValueError, AttributeError):
        return True
    if not error:
        return True  # no top-level error: a malformed reply, or a generation error in the choice
    code = error.get("code") if isinstance(error, dict) else None
    return isinstance(code, int) and code in RETRYABLE_STATUS


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
