"""A FAKE provider with a batch API on loopback, for the project's own tests only: OpenAI's, OpenRouter's or
Anthropic's, each built from its documented endpoints, beside the synchronous chat endpoint it counts.

- OpenAI (platform.openai.com/docs/guides/batch): ``POST /v1/files`` (multipart, purpose ``batch``, JSONL lines
  ``{custom_id, method, url, body}``), ``POST /v1/batches {input_file_id, endpoint, completion_window}``,
  ``GET /v1/batches/{id}`` (status, request_counts, output_file_id, error_file_id), ``GET /v1/files/{id}/content``;
  a failed request is a line of the error file.
- OpenRouter (openrouter.ai/docs batch quickstart): ``POST /api/v1/batches`` with ``endpoint`` and ``model``
  before ``requests`` (else 400), 202 ``validating``; ``GET /api/v1/batches/{id}``; result pages from
  ``GET /api/v1/batches/{id}/results`` (``limit``, ``cursor``); ``usage.cost`` in each answer.
- Anthropic (docs.anthropic.com batch processing): ``POST /v1/messages/batches {requests: [{custom_id, params}]}``,
  ``GET /v1/messages/batches/{id}`` (processing_status, request_counts), JSONL from ``results_url``, each line
  ``{custom_id, result: {type: succeeded, message} | {type: errored, error} | {type: canceled} | {type: expired}}``.
- Gemini (ai.google.dev/gemini-api/docs/batch-mode): ``POST /v1beta/models/{model}:batchGenerateContent`` with
  ``batch.input_config.requests.requests: [{request, metadata: {key}}]`` (the key in ``x-goog-api-key``), answered by
  an operation named ``batches/{id}``; ``GET /v1beta/batches/{id}`` (``metadata.state`` BATCH_STATE_*,
  ``metadata.batchStats``, ``done``, and once ended ``response.inlinedResponses.inlinedResponses``: each a
  ``response`` or an ``error`` status, with its ``metadata.key``).

A batch ends after ``polls_to_finish`` looks at it (never, with ``never_finish``); its results come in reverse
order (never the request order); ``fail`` marks chosen requests (by their place in the batch) errored, expired or
canceled. It counts synchronous chat requests and batch submissions, and what it billed.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

OPENAI, OPENROUTER, ANTHROPIC, GEMINI = "openai", "openrouter", "anthropic", "gemini"
PREFIX = {OPENAI: "/v1", OPENROUTER: "/api/v1", ANTHROPIC: "/v1", GEMINI: "/v1beta"}
# The operation metadata's type name of a Gemini batch.
GEMINI_BATCH_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch"
PROMPT_TOKENS, COMPLETION_TOKENS = 20, 1
# What OpenRouter bills one batch answer, as it reports it in usage.cost.
OPENROUTER_COST = 0.000125
BATCH_DISCOUNT = 0.5  # OpenAI's and Anthropic's batch price: half the synchronous one


def answer_four(body: dict[str, Any]) -> str:
    return "4"


@dataclass
class FakeBatch:
    id: str
    items: list[tuple[str, dict[str, Any]]]  # (custom_id, chat or Messages body), in request order
    polls: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class BatchScript:
    flavour: str = OPENAI
    answer: Callable[[dict[str, Any]], str] = answer_four
    polls_to_finish: int = 2
    never_finish: bool = False
    # The batch fails as a whole when it ends (OpenAI's status "failed": no output file, no error file).
    fail_whole: bool = False
    # place in the batch (0, 1, ...) -> "errored" | "expired" | "canceled"
    fail: dict[int, str] = field(default_factory=dict)
    # The synchronous price per million tokens (input, output), to bill OpenAI's and Anthropic's batches at half.
    price: tuple[float, float] = (1.0, 2.0)
    chat_requests: list[dict[str, Any]] = field(default_factory=list)
    submissions: list[str] = field(default_factory=list)  # batch ids, in submission order
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    billed_usd: float = 0.0
    authorizations: list[str | None] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))


def chat_completion(script: BatchScript, body: dict[str, Any], number: int) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": COMPLETION_TOKENS,
        "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
    }
    if script.flavour == OPENROUTER:
        usage["cost"] = OPENROUTER_COST
    return {
        "id": f"fake-{number}",
        "object": "chat.completion",
        "model": body.get("model"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": script.answer(body)}, "finish_reason": "stop"}
        ],
        "usage": usage,
    }


def message(script: BatchScript, body: dict[str, Any], number: int) -> dict[str, Any]:
    """What ``POST /v1/messages`` answers."""
    return {
        "id": f"msg_fake{number}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": [{"type": "text", "text": script.answer(body)}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": PROMPT_TOKENS, "output_tokens": COMPLETION_TOKENS},
    }


def generate_content(script: BatchScript, body: dict[str, Any], number: int) -> dict[str, Any]:
    """What ``POST /v1beta/models/{model}:generateContent`` answers."""
    usage = {
        "promptTokenCount": PROMPT_TOKENS,
        "candidatesTokenCount": COMPLETION_TOKENS,
        "totalTokenCount": PROMPT_TOKENS + COMPLETION_TOKENS,
    }
    candidate = {"content": {"role": "model", "parts": [{"text": script.answer(body)}]}, "finishReason": "STOP"}
    return {"candidates": [{**candidate, "index": 0}], "usageMetadata": usage, "modelVersion": f"fake-{number}"}


def _batch_cost(script: BatchScript) -> float:
    if script.flavour == OPENROUTER:
        return OPENROUTER_COST
    return (PROMPT_TOKENS * script.price[0] + COMPLETION_TOKENS * script.price[1]) / 1e6 * BATCH_DISCOUNT


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class FakeBatchApis:
    def __init__(self, script: BatchScript | None = None) -> None:
        self.script = script or BatchScript()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The base URL a models.yaml entry names: Anthropic's and Gemini's have no version (their dialects add it)."""
        host = f"http://127.0.0.1:{self._server.server_address[1]}"
        return host if self.script.flavour in (ANTHROPIC, GEMINI) else host + PREFIX[self.script.flavour]

    def __enter__(self) -> FakeBatchApis:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        script = self.script
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._route("GET", b"")

            def do_POST(self) -> None:
                self._route("POST", self.rfile.read(int(self.headers.get("content-length", "0"))))

            def _route(self, method: str, raw: bytes) -> None:
                key = (
                    self.headers.get("x-api-key")
                    or self.headers.get("x-goog-api-key")
                    or self.headers.get("authorization")
                )
                with script.lock:
                    script.authorizations.append(key)
                try:
                    status, payload = server._answer(method, self.path, raw, self.headers.get("content-type", ""))
                except Exception as error:  # a defect of the fake or of the test: said, and checked at the end
                    with script.lock:
                        script.errors.append(repr(error))
                    status, payload = 400, {"error": {"message": f"the FAKE raised {error!r}"}}
                body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler

    def _answer(self, method: str, target: str, raw: bytes, content_type: str) -> tuple[int, Any]:
        script = self.script
        parts = urlsplit(target)
        path, query = parts.path.removeprefix(PREFIX[script.flavour]), parse_qs(parts.query)
        if method == "GET" and path == "/models":
            parameters = ["temperature", "max_tokens", "max_completion_tokens", "reasoning", "logprobs"]
            return 200, {"data": [{"id": "fake/model", "supported_parameters": parameters}]}
        if method == "POST" and path.endswith(":generateContent"):
            body = json.loads(raw)
            with script.lock:
                script.chat_requests.append(body)
                number = len(script.chat_requests)
            return 200, generate_content(script, body, number)
        if method == "POST" and path in ("/chat/completions", "/messages"):
            body = json.loads(raw)
            with script.lock:
                script.chat_requests.append(body)
                number = len(script.chat_requests)
            return 200, message(script, body, number) if path == "/messages" else chat_completion(script, body, number)
        if script.flavour == OPENAI:
            return self._openai(method, path, raw, content_type)
        if script.flavour == OPENROUTER:
            return self._openrouter(method, path, raw, query)
        if script.flavour == GEMINI:
            return self._gemini(method, path, raw)
        return self._anthropic(method, path, raw)

    # -- creating and ending a batch ---------------------------------------------------------------

    def _create(self, prefix: str, items: list[tuple[str, dict[str, Any]]]) -> FakeBatch:
        script = self.script
        custom_ids = [custom_id for custom_id, _ in items]
        if len(set(custom_ids)) != len(custom_ids):
            raise ValueError("custom_id values must be unique within a batch")
        with script.lock:
            batch = FakeBatch(f"{prefix}{next(script.ids):04d}", items)
            script.batches[batch.id] = batch
            script.submissions.append(batch.id)
        return batch

    def _look(self, batch_id: str) -> tuple[FakeBatch, bool]:
        """One look at a batch: it ends at the look ``polls_to_finish`` (and then holds its results)."""
        script = self.script
        with script.lock:
            batch = script.batches[batch_id]
            batch.polls += 1
            ended = not script.never_finish and batch.polls >= script.polls_to_finish
            if ended and not batch.results and not script.fail_whole:
                batch.results = [self._result(place, cid, body) for place, (cid, body) in enumerate(batch.items)]
                if script.flavour != GEMINI:  # Gemini's inline responses come in request order
                    batch.results.reverse()  # never in request order
            return batch, ended

    def _result(self, place: int, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        script = self.script
        kind = script.fail.get(place)
        if kind is None:
            script.billed_usd += _batch_cost(script)
        if script.flavour == GEMINI:
            key = {"key": custom_id}
            if kind is None:
                return {"response": generate_content(script, body, place), "metadata": key}
            return {"error": {"code": 500, "message": f"scripted {kind}", "status": "INTERNAL"}, "metadata": key}
        if script.flavour == ANTHROPIC:
            if kind is None:
                return {
                    "custom_id": custom_id,
                    "result": {"type": "succeeded", "message": message(script, body, place)},
                }
            if kind == "errored":
                error = {"type": "error", "error": {"type": "api_error", "message": "scripted failure"}}
                return {"custom_id": custom_id, "result": {"type": "errored", "error": error}}
            return {"custom_id": custom_id, "result": {"type": kind}}
        if kind is None:
            answer = chat_completion(script, body, place)
            return {"id": f"r{place}", "custom_id": custom_id, "response": {"status_code": 200, "body": answer}}
        code = {"errored": 500, "expired": 408, "canceled": 499}[kind]
        failure = {"error": {"message": f"scripted {kind}", "type": "server_error"}}
        line: dict[str, Any] = {"id": f"r{place}", "custom_id": custom_id, "error": None}
        line["response"] = {"status_code": code, "body": failure}
        if kind in ("expired", "canceled"):
            line["response"] = None
            line["error"] = {"code": f"batch_{kind}", "message": f"This request could not be executed: {kind}."}
        return line

    # -- OpenAI ------------------------------------------------------------------------------------

    def _openai(self, method: str, path: str, raw: bytes, content_type: str) -> tuple[int, Any]:
        script = self.script
        if method == "POST" and path == "/files":
            parsed = email.parser.BytesParser(policy=email.policy.default).parsebytes(
                b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw
            )
            fields = {part.get_param("name", header="content-disposition"): part for part in parsed.iter_parts()}
            if fields["purpose"].get_payload(decode=True) != b"batch":
                return 400, {"error": {"message": "purpose must be batch"}}
            content = fields["file"].get_payload(decode=True)
            with script.lock:
                file_id = f"file-{next(script.ids):04d}"
                script.files[file_id] = content
            return 200, {"id": file_id, "object": "file", "purpose": "batch", "bytes": len(content)}
        if method == "POST" and path == "/batches":
            request = json.loads(raw)
            if request.get("completion_window") != "24h" or request.get("endpoint") != "/v1/chat/completions":
                return 400, {"error": {"message": "completion_window must be 24h; endpoint /v1/chat/completions"}}
            lines = [json.loads(line) for line in script.files[request["input_file_id"]].splitlines() if line.strip()]
            if any(line["method"] != "POST" or line["url"] != "/v1/chat/completions" for line in lines):
                return 400, {"error": {"message": "every line must POST /v1/chat/completions"}}
            batch = self._create("batch_", [(line["custom_id"], line["body"]) for line in lines])
            return 200, self._openai_batch(batch, ended=False)
        if method == "GET" and path.startswith("/batches/"):
            batch, ended = self._look(path.removeprefix("/batches/"))
            return 200, self._openai_batch(batch, ended)
        if method == "GET" and path.startswith("/files/") and path.endswith("/content"):
            return 200, script.files[path.removeprefix("/files/").removesuffix("/content")]
        return 404, {"error": {"message": f"no route {method} {path}"}}

    def _openai_batch(self, batch: FakeBatch, ended: bool) -> dict[str, Any]:
        document: dict[str, Any] = {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "status": "completed" if ended else "in_progress",
            "request_counts": {"total": len(batch.items), "completed": 0, "failed": 0},
            "output_file_id": None,
            "error_file_id": None,
        }
        if ended and self.script.fail_whole:
            document["status"] = "failed"
            document["errors"] = {"data": [{"code": "invalid_request", "message": "scripted failure of the batch"}]}
        elif ended:
            good = [line for line in batch.results if (line.get("response") or {}).get("status_code") == 200]
            bad = [line for line in batch.results if line not in good]
            document["request_counts"] = {"total": len(batch.items), "completed": len(good), "failed": len(bad)}
            for key, lines in (("output_file_id", good), ("error_file_id", bad)):
                if lines:
                    file_id = f"file-{batch.id}-{key[:3]}"
                    self.script.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
                    document[key] = file_id
        return document

    # -- OpenRouter --------------------------------------------------------------------------------

    def _openrouter(self, method: str, path: str, raw: bytes, query: dict[str, list[str]]) -> tuple[int, Any]:
        if method == "POST" and path == "/batches":
            text = raw.decode()
            # It parses the body as a stream: endpoint and model must come before requests.
            places = [text.find(f'"{key}"') for key in ("endpoint", "model", "requests")]
            if -1 in places or not places[0] < places[2] or not places[1] < places[2]:
                return 400, {"error": {"message": "endpoint and model must come before requests"}}
            request = json.loads(raw)
            if request["endpoint"] != "/v1/chat/completions":
                return 400, {"error": {"message": f"unsupported endpoint {request['endpoint']}"}}
            batch = self._create("or-batch-", [(item["custom_id"], item["body"]) for item in request["requests"]])
            return 202, self._openrouter_batch(batch, ended=False, status="validating")
        if method == "GET" and path.startswith("/batches/") and path.endswith("/results"):
            batch = self.script.batches[path.removeprefix("/batches/").removesuffix("/results")]
            limit = int(query.get("limit", ["100"])[0])
            # Small pages, whatever the limit asked: the client must follow the cursor.
            start, size = int(query.get("cursor", ["0"])[0]), min(limit, 4)
            page = batch.results[start : start + size]
            more = start + size < len(batch.results)
            return 200, {"data": page, "next_cursor": str(start + size) if more else None}
        if method == "GET" and path.startswith("/batches/"):
            batch, ended = self._look(path.removeprefix("/batches/"))
            return 200, self._openrouter_batch(batch, ended, "completed" if ended else "in_progress")
        return 404, {"error": {"message": f"no route {method} {path}"}}

    def _openrouter_batch(self, batch: FakeBatch, ended: bool, status: str) -> dict[str, Any]:
        failed = sum(line.get("response") is None or line["response"]["status_code"] != 200 for line in batch.results)
        done = len(batch.items) if ended else 0
        counts = {"total": len(batch.items), "completed": done - failed if ended else 0, "failed": failed}
        return {"id": batch.id, "object": "batch", "status": status, "request_counts": counts}

    # -- Anthropic ---------------------------------------------------------------------------------

    def _anthropic(self, method: str, path: str, raw: bytes) -> tuple[int, Any]:
        if method == "POST" and path == "/messages/batches":
            requests = json.loads(raw)["requests"]
            if any(not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", item["custom_id"]) for item in requests):
                return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "custom_id"}}
            batch = self._create("msgbatch_", [(item["custom_id"], item["params"]) for item in requests])
            return 200, self._anthropic_batch(batch, ended=False)
        if method == "GET" and path.startswith("/messages/batches/") and path.endswith("/results"):
            batch = self.script.batches[path.removeprefix("/messages/batches/").removesuffix("/results")]
            return 200, "".join(json.dumps(line) + "\n" for line in batch.results).encode()
        if method == "GET" and path.startswith("/messages/batches/"):
            batch, ended = self._look(path.removeprefix("/messages/batches/"))
            return 200, self._anthropic_batch(batch, ended)
        return 404, {"type": "error", "error": {"type": "not_found_error", "message": f"no route {path}"}}

    def _anthropic_batch(self, batch: FakeBatch, ended: bool) -> dict[str, Any]:
        counts = {"processing": len(batch.items), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if ended:
            counts["processing"] = 0
            for line in batch.results:
                counts[line["result"]["type"]] += 1
        document: dict[str, Any] = {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "results_url": None,
        }
        if ended:
            document["results_url"] = f"{self.base_url}/messages/batches/{batch.id}/results"
        return document

    # -- Gemini ------------------------------------------------------------------------------------

    def _gemini(self, method: str, path: str, raw: bytes) -> tuple[int, Any]:
        if method == "POST" and path.startswith("/models/") and path.endswith(":batchGenerateContent"):
            batch = json.loads(raw)["batch"]
            if not batch.get("display_name") and not batch.get("displayName"):
                return 400, {
                    "error": {"code": 400, "message": "batch.display_name is required", "status": "INVALID_ARGUMENT"}
                }
            config = batch.get("input_config") or batch.get("inputConfig") or {}
            requests = (config.get("requests") or {}).get("requests")
            if not isinstance(requests, list) or any("contents" not in item.get("request", {}) for item in requests):
                return 400, {"error": {"code": 400, "message": "input_config.requests", "status": "INVALID_ARGUMENT"}}
            created = self._create("batches/gb-", [(item["metadata"]["key"], item["request"]) for item in requests])
            return 200, self._gemini_operation(created, ended=False)
        if method == "GET" and path.startswith("/batches/"):
            batch, ended = self._look(path.removeprefix("/"))
            return 200, self._gemini_operation(batch, ended)
        return 404, {"error": {"code": 404, "message": f"no route {method} {path}", "status": "NOT_FOUND"}}

    def _gemini_operation(self, batch: FakeBatch, ended: bool) -> dict[str, Any]:
        failed = sum("error" in line for line in batch.results)
        done = len(batch.items) if ended else 0
        stats = {
            "requestCount": str(len(batch.items)),
            "successfulRequestCount": str(done - failed),
            "failedRequestCount": str(failed),
            "pendingRequestCount": str(len(batch.items) - done),
        }
        state = "BATCH_STATE_RUNNING"
        if ended:
            state = "BATCH_STATE_FAILED" if self.script.fail_whole else "BATCH_STATE_SUCCEEDED"
        metadata = {"@type": GEMINI_BATCH_TYPE, "name": batch.id, "state": state, "batchStats": stats}
        document: dict[str, Any] = {"name": batch.id, "metadata": metadata, "done": ended}
        if ended and not self.script.fail_whole:
            document["response"] = {"inlinedResponses": {"inlinedResponses": batch.results}}
        return document
