"""A FAKE JSON-over-HTTP server on loopback, the frame of tests/fake_anthropic.py and tests/fake_gemini.py: it
moves bytes, records every request, and asks its subclass for the reply. It speaks to no network."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    """One request the fake received and how it answered it."""

    path: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, Any] | None  # None: not a JSON object
    status: int = 0
    method: str = "POST"


@dataclass
class Answer:
    status: int
    payload: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def count_tokens(text: str) -> int:
    """The fake's tokenizer: one token per whitespace-separated word (at least one per text)."""
    return max(1, len(text.split()))


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away before the reply is a scripted case, not a server error."""


class LoopbackFake:
    """Subclasses answer :meth:`reply`; ``received`` holds every request in arrival order."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LoopbackFake:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reply(self, request: Received) -> Answer:
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.do_POST(method="GET")

            def do_POST(self, method: str = "POST") -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                request = Received(
                    self.path,
                    {name.lower(): value for name, value in self.headers.items()},
                    body if isinstance(body, dict) else None,
                    method=method,
                )
                answer = fake.reply(request)
                request.status = answer.status
                with fake.lock:
                    fake.received.append(request)
                data = json.dumps(answer.payload).encode("utf-8")
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler
