"""A FAKE OpenAI-compatible chat server on loopback, for the project's own tests only.

It answers ``POST /v1/chat/completions`` from a script: a function of the request that returns the
answer text, plus queued failures (status codes with optional Retry-After, dropped connections,
slow replies). It counts requests so tests can tell replay (no request) from recording.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def answer_four(request: dict[str, Any]) -> str:
    return "4"


@dataclass
class Failure:
    status: int = 503
    retry_after: str | None = None
    drop_connection: bool = False
    delay_s: float = 0.0
    body: str | None = None  # sent as is instead of the JSON error (a proxy's HTML page, a broken 200)
    # Not a failure but a slow provider: after ``delay_s`` the request is answered as any other.
    slow_answer: bool = False


def fake_logprobs(text: str) -> list[dict[str, Any]]:
    """One token per character; a digit is 70 % sure, its neighbours share the rest (as a server reports)."""
    tokens = []
    for char in text:
        alternatives = [(char, 0.7)]
        if char.isdigit():
            alternatives += [(str((int(char) + 1) % 10), 0.2), (str((int(char) - 1) % 10), 0.1)]
        tokens.append(
            {
                "token": char,
                "logprob": math.log(0.7),
                "top_logprobs": [{"token": token, "logprob": math.log(p)} for token, p in alternatives],
            }
        )
    return tokens


@dataclass
class FakeScript:
    answer: Callable[[dict[str, Any]], str] = answer_four
    failures: deque[Failure] = field(default_factory=deque)
    latency_s: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    # What the test's answer function raised: answered as a 400 at once (a retried dropped connection would
    # make a broken test wait out every retry instead of failing), and checked when the fixture ends.
    errors: list[str] = field(default_factory=list)
    # Requests being answered right now, and the most there ever were at once.
    in_flight: int = 0
    max_in_flight: int = 0
    # Hold the first requests until this many are in flight together (or hold_timeout_s passes).
    hold_until: int = 0
    hold_timeout_s: float = 60.0  # generous: workers start slowly on a busy machine
    # Called with the request's number (1, 2, ...) as it arrives, before it is answered.
    on_request: Callable[[int], None] | None = None
    answered: int = 0  # 200s sent
    lock: threading.Condition = field(default_factory=threading.Condition)
    # A reasoning model: what it reports spending on thinking, and why it stopped ("length": cut).
    reasoning_tokens: int | None = None
    finish_reason: str = "stop"
    # A model that takes only this temperature: any other is a 400 worded as OpenAI words it.
    only_temperature: float | None = None
    # Log-probabilities of the answer, sent only when the request asks for them (llama.cpp's server does).
    logprobs: Callable[[str], list[dict[str, Any]]] | None = fake_logprobs
    # A provider's rate limit (tests/fake_rate_limited.py): asked once per request that is not a scripted failure;
    # returns a refusal to send instead of the answer (or None) and the headers to send with either.
    admit: Callable[[], tuple[Failure | None, dict[str, str]]] | None = None

    def arrive(self) -> int:
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            number = len(self.requests)
            self.lock.notify_all()
            if self.hold_until:
                self.lock.wait_for(lambda: self.in_flight >= self.hold_until, timeout=self.hold_timeout_s)
                self.hold_until = 0  # once: the rest of the session runs freely
        if self.on_request is not None:
            self.on_request(number)
        return number

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


class _QuietServer(ThreadingHTTPServer):
    # The default backlog (5) resets connections beyond it: room for many requests in flight at once.
    request_queue_size = 256
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that timed out or was killed before the reply is a scripted case, not a server error."""


class FakeOpenAIServer:
    def __init__(self, script: FakeScript | None = None, port: int = 0) -> None:
        """``port`` 0: any free port; a fixed one keeps the base URL, and so the recordings, of an earlier run."""
        self.script = script or FakeScript()
        self._server = _QuietServer(("127.0.0.1", port), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        script = self.script

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                with script.lock:
                    script.requests.append(request)
                    script.authorizations.append(self.headers.get("authorization"))
                script.arrive()
                self._left = False
                try:
                    self._answer(request)
                finally:
                    self._leave()

            def _leave(self) -> None:
                # A request leaves before its reply (or the dropped connection) reaches the client: the client can
                # send its next request the moment it has this one's answer, and counting it in flight until the
                # handler's thread next runs would count two of the client's requests where it had one.
                if not self._left:
                    self._left = True
                    script.leave()

            def _answer(self, request: dict[str, Any]) -> None:
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with script.lock:  # several requests at once: one failure each
                    failure = script.failures.popleft() if script.failures else None
                if failure is not None and failure.slow_answer:
                    time.sleep(failure.delay_s)
                    failure = None
                if failure is not None:
                    time.sleep(failure.delay_s)
                    if failure.drop_connection:
                        self._leave()
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    headers = {"Retry-After": failure.retry_after} if failure.retry_after else {}
                    if failure.body is not None:
                        self._send_raw(failure.status, failure.body.encode(), headers)
                    else:
                        self._send(failure.status, {"error": {"message": "scripted failure"}}, headers)
                    return
                limit_headers: dict[str, str] = {}
                if script.admit is not None:
                    refusal, limit_headers = script.admit()
                    if refusal is not None:
                        headers = {
                            **limit_headers,
                            **({"Retry-After": refusal.retry_after} if refusal.retry_after else {}),
                        }
                        self._send(
                            refusal.status, {"error": {"message": "rate limit reached", "type": "requests"}}, headers
                        )
                        return
                temperature = request.get("temperature")
                if script.only_temperature is not None and temperature != script.only_temperature:
                    message = (
                        f"Unsupported value: 'temperature' does not support {temperature} with this model. "
                        f"Only the default ({script.only_temperature:g}) value is supported."
                    )
                    self._send(400, {"error": {"message": message, "param": "temperature"}})
                    return
                time.sleep(script.latency_s)
                try:
                    text = script.answer(request)
                except Exception as error:  # any mistake of the test's own answer function
                    with script.lock:
                        script.errors.append(repr(error))
                    self._send(400, {"error": {"message": f"the FAKE's answer function raised {error!r}"}})
                    return
                choice: dict[str, Any] = {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": script.finish_reason,
                }
                if request.get("logprobs") and script.logprobs is not None:
                    choice["logprobs"] = {"content": script.logprobs(text)}
                usage: dict[str, Any] = {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}
                if script.reasoning_tokens is not None:
                    # OpenAI's convention: completion_tokens includes the reasoning tokens.
                    usage["completion_tokens"] = 1 + script.reasoning_tokens
                    usage["total_tokens"] = 20 + usage["completion_tokens"]
                    usage["completion_tokens_details"] = {"reasoning_tokens": script.reasoning_tokens}
                self._send(
                    200,
                    {
                        "id": f"fake-{len(script.requests)}",
                        "object": "chat.completion",
                        "model": request.get("model"),
                        "choices": [choice],
                        "usage": usage,
                    },
                    limit_headers,
                )
                with script.lock:
                    script.answered += 1

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                self._send_raw(status, json.dumps(payload).encode(), headers)

            def _send_raw(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self._leave()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler
