"""A FAKE OpenRouter on loopback, for the project's own tests only: it is not OpenRouter and speaks to no network.

It serves ``GET /api/v1/models`` (the catalogue) and ``POST /api/v1/chat/completions`` as OpenRouter's public
documentation describes them (errors and debugging, provider routing, usage accounting, response caching),
from a script: the models with their providers and prices, the account's key and credit, the words moderation
flags, and scripted faults. A chat request goes through these steps, the first that refuses answering:

1. auth (401), 2. credit (402), 3. model id (400 or 404), 4. parameters (dropped, or 404 under
   ``provider.require_parameters``), 5. the response cache (a HIT answers here, nothing billed),
6. provider routing (503), 7. moderation (403), 8. scripted faults, 9. the answer, billed to the credit.

Everything is recorded (each request with its headers, status, provider, dropped parameters and cost) so a test
can compare what a client believes it spent with what the fake billed.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from tests.fake_openai_server import fake_logprobs

FAKE_OPENROUTER_KEY = "sk-or-v1-" + "fa4e" * 12  # built, so no key-shaped text is committed
API = "/api/v1"
# Top-level request keys that are not model parameters (everything else is, and may be dropped).
NOT_PARAMETERS = frozenset({"model", "messages", "provider", "stream", "usage"})
# max_tokens a 402 names when the request sets none.
DEFAULT_MAX_TOKENS = 4096


def answer_four(request: dict[str, Any], provider: str) -> str:
    return "4"


@dataclass(frozen=True)
class FakeProvider:
    """One endpoint serving a model: its name (matched case-insensitively in ``provider.order/only/ignore``)."""

    name: str
    system_fingerprint: str = ""  # "" -> "fp_<name in lower case>"
    moderated: bool = True  # its inputs go through moderation (OpenAI's and Azure's do on OpenRouter)
    collects_data: bool = False  # excluded by ``provider.data_collection: "deny"``
    quantization: str = "unknown"  # filtered by ``provider.quantizations``

    @property
    def fingerprint(self) -> str:
        return self.system_fingerprint or f"fp_{self.name.lower()}"


@dataclass(frozen=True)
class FakeModel:
    id: str
    providers: tuple[FakeProvider, ...]
    name: str = ""  # "" -> the id
    context_length: int = 128_000
    prompt_price: float = 0.0  # USD per prompt token
    completion_price: float = 0.0  # USD per completion token (reasoning tokens included)
    supported_parameters: tuple[str, ...] = ("max_tokens", "temperature", "top_p", "seed", "stop")
    reasoning_tokens: int = 0  # what each answer reports spending on thinking (counted in completion_tokens)

    def catalogue_entry(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name or self.id,
            "context_length": self.context_length,
            "pricing": {
                "prompt": decimal_string(self.prompt_price),
                "completion": decimal_string(self.completion_price),
                "request": "0",
                "image": "0",
            },
            "supported_parameters": list(self.supported_parameters),
        }


def decimal_string(value: float) -> str:
    """A price as OpenRouter writes it: a plain decimal string, never an exponent (1e-06 -> "0.000001")."""
    return format(Decimal(repr(value)), "f")


DEFAULT_MODELS: tuple[FakeModel, ...] = (
    FakeModel(
        id="openai/gpt-4o-mini",
        name="OpenAI: GPT-4o-mini",
        prompt_price=1.5e-7,
        completion_price=6e-7,
        supported_parameters=(
            "max_tokens",
            "temperature",
            "top_p",
            "seed",
            "stop",
            "logprobs",
            "top_logprobs",
            "response_format",
        ),
        providers=(FakeProvider("OpenAI"), FakeProvider("Azure")),
    ),
    FakeModel(
        id="meta-llama/llama-3.1-8b-instruct",
        name="Meta: Llama 3.1 8B Instruct",
        context_length=131_072,
        prompt_price=2e-8,
        completion_price=5e-8,
        providers=(
            FakeProvider("DeepInfra", moderated=False, quantization="bf16"),
            FakeProvider("Together", moderated=False, quantization="fp8"),
            FakeProvider("Fireworks", moderated=False, collects_data=True, quantization="fp8"),
        ),
    ),
    FakeModel(
        id="deepseek/deepseek-r1",
        name="DeepSeek: R1",
        context_length=163_840,
        prompt_price=4e-7,
        completion_price=2e-6,
        supported_parameters=("max_tokens", "temperature", "top_p", "seed", "stop", "reasoning", "include_reasoning"),
        reasoning_tokens=12,
        providers=(FakeProvider("DeepInfra", moderated=False), FakeProvider("Novita", moderated=False)),
    ),
)

FaultKind = Literal["status", "generation_error", "content_filter"]


@dataclass
class Fault:
    """A scripted fault, met after routing and moderation (a provider's failure, not OpenRouter's refusal).

    ``status``: a plain HTTP error (``{"error": {"code", "message"}}``, or ``body`` as is), with optional
    Retry-After, delay or dropped connection, nothing billed. ``generation_error``: HTTP 200 whose choice ends
    with ``finish_reason: "error"`` and an ``error`` object (code ``status``), nothing billed.
    ``content_filter``: HTTP 200 with ``finish_reason: "content_filter"`` and empty content, billed in full.
    """

    kind: FaultKind = "status"
    status: int = 502
    message: str = "Upstream provider error"
    retry_after: str | None = None
    drop_connection: bool = False
    delay_s: float = 0.0
    body: str | None = None


@dataclass
class Exchange:
    """One request the fake received and how it answered it."""

    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, Any] | None  # None: a GET, or a body that is not a JSON object
    status: int = 0  # 0 until answered
    provider: str | None = None  # who served it (a cache HIT: who served the original)
    dropped_parameters: list[str] = field(default_factory=list)
    cost_usd: float = 0.0
    cache_status: str | None = None  # "HIT" / "MISS" when caching applied
    finish_reason: str | None = None

    @property
    def authorization(self) -> str | None:
        return self.headers.get("authorization")

    @property
    def is_chat(self) -> bool:
        return self.method == "POST" and self.path == f"{API}/chat/completions"


@dataclass
class OpenRouterScript:
    models: Sequence[FakeModel] = DEFAULT_MODELS
    api_key: str = FAKE_OPENROUTER_KEY
    credits_usd: float = 1_000_000.0  # remaining credit; each answer's cost is deducted
    invalid_model_ids: frozenset[str] = frozenset()  # answered 400 "<id> is not a valid model ID"
    answer: Callable[[dict[str, Any], str], str] = answer_four  # (forwarded request, provider name) -> text
    # Log-probabilities of the answer, sent when the forwarded request asks for them.
    logprobs: Callable[[str], list[dict[str, Any]]] | None = fake_logprobs
    flagged_words: frozenset[str] = frozenset()  # whole words, any case, that moderation flags
    moderation_reason: str = "harassment"
    cache_all: bool = False  # the account's preset: every request cached, with or without X-OpenRouter-Cache
    latency_s: float = 0.0
    # Faults: the queue first (one each), then every fault_every-th chat request reaching the fault step,
    # then a seeded draw with probability fault_rate; the last two send rate_fault.
    faults: deque[Fault] = field(default_factory=deque)
    fault_every: int = 0
    fault_rate: float = 0.0
    fault_seed: int = 0
    rate_fault: Fault = field(default_factory=lambda: Fault(kind="generation_error"))
    # Records.
    exchanges: list[Exchange] = field(default_factory=list)
    catalogue_reads: int = 0
    catalogue_unavailable: bool = False  # GET /models answers 503 (an outage of the catalogue alone)
    # A provider (name, any case) whose requests another provider serves although the routing chose it (one that
    # ignores a pin): the response names the one that served, as OpenRouter's does.
    serves_instead: dict[str, str] = field(default_factory=dict)
    # Reasoning tokens an answer spends at each effort the request asks (``reasoning.effort``), over the model's own.
    effort_tokens: dict[str, int] = field(default_factory=dict)
    billed_usd: float = 0.0
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Condition = field(default_factory=threading.Condition)
    # Internal state, not constructor arguments.
    _round_robin: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _fault_draws: int = field(default=0, init=False, repr=False)
    _random: random.Random | None = field(default=None, init=False, repr=False)
    _generations: int = field(default=0, init=False, repr=False)
    _cache: dict[str, dict[str, Any]] = field(default_factory=dict, init=False, repr=False)

    def model(self, model_id: object) -> FakeModel | None:
        return next((model for model in self.models if model.id == model_id), None)

    def chat_exchanges(self) -> list[Exchange]:
        with self.lock:
            return [exchange for exchange in self.exchanges if exchange.is_chat]

    @property
    def chat_requests(self) -> int:
        return len(self.chat_exchanges())

    @property
    def charges(self) -> list[float]:
        """What each chat request cost, in arrival order (0 for refusals, faults and cache hits)."""
        return [exchange.cost_usd for exchange in self.chat_exchanges()]

    @property
    def providers_served(self) -> list[str | None]:
        return [exchange.provider for exchange in self.chat_exchanges()]

    @property
    def dropped_parameters(self) -> list[list[str]]:
        return [exchange.dropped_parameters for exchange in self.chat_exchanges()]

    @property
    def statuses(self) -> list[int]:
        return [exchange.status for exchange in self.chat_exchanges()]

    def requests_after(self, status: int) -> int:
        """How many chat requests arrived after the first one answered ``status`` (0 if none was)."""
        chats = self.chat_exchanges()
        for number, exchange in enumerate(chats):
            if exchange.status == status:
                return len(chats) - number - 1
        return 0

    def next_fault(self) -> Fault | None:
        with self.lock:
            if self.faults:
                return self.faults.popleft()
            self._fault_draws += 1
            if self.fault_every and self._fault_draws % self.fault_every == 0:
                return self.rate_fault
            if self.fault_rate > 0:
                if self._random is None:
                    self._random = random.Random(self.fault_seed)
                if self._random.random() < self.fault_rate:
                    return self.rate_fault
            return None


@dataclass
class Reply:
    status: int
    payload: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    drop_connection: bool = False
    delay_s: float = 0.0


def error_reply(status: int, message: str, metadata: dict[str, Any] | None = None) -> Reply:
    error: dict[str, Any] = {"code": status, "message": message}
    if metadata is not None:
        error["metadata"] = metadata
    return Reply(status, {"error": error})


def message_texts(messages: object) -> list[str]:
    """The text of every message: a string content, or the text parts of a list content."""
    texts: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]
    return texts


def count_tokens(text: str) -> int:
    """About four characters a token, at least one."""
    return max(1, len(text) // 4)


def truncate_flagged(text: str, limit: int = 100) -> str:
    """OpenRouter's ``flagged_input``: at most 100 characters, a longer input cut in the middle with "..."."""
    if len(text) <= limit:
        return text
    head = (limit - 3) // 2
    return f"{text[:head]}...{text[len(text) - (limit - 3 - head) :]}"


def zeroed_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """A cache hit's usage: every billable counter 0."""
    return {
        **usage,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
        "cost": 0,
        "completion_tokens_details": {"reasoning_tokens": 0},
        "prompt_tokens_details": {"cached_tokens": 0},
    }


class _QuietServer(ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away before the reply is a scripted case, not a server error."""


class FakeOpenRouter:
    def __init__(self, script: OpenRouterScript | None = None) -> None:
        self.script = script or OpenRouterScript()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        # A short poll: leaving the context manager then takes milliseconds, not the default half second.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}{API}"

    def __enter__(self) -> FakeOpenRouter:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, exchange: Exchange) -> Reply:
        """The reply to one request (the handler only moves bytes)."""
        if exchange.method == "GET" and exchange.path.split("?")[0] == f"{API}/models":
            with self.script.lock:
                self.script.catalogue_reads += 1
            if self.script.catalogue_unavailable:
                return error_reply(503, "Service temporarily unavailable")
            return Reply(200, {"data": [model.catalogue_entry() for model in self.script.models]})
        if exchange.is_chat:
            return self._chat(exchange)
        return error_reply(404, f"Not Found: {exchange.method} {exchange.path}")

    def _chat(self, exchange: Exchange) -> Reply:
        script, request = self.script, exchange.body
        # 1. auth
        if exchange.authorization != f"Bearer {script.api_key}":
            return error_reply(401, "No auth credentials found")
        if request is None:
            return error_reply(400, "Invalid request: the body is not a JSON object")
        model_id = request.get("model")
        model = script.model(model_id)
        # 2. credit
        with script.lock:
            remaining = script.credits_usd
        if remaining <= 0:
            requested = request.get("max_tokens") or (model.context_length if model else DEFAULT_MAX_TOKENS)
            return error_reply(
                402,
                f"This request requires more credits, or fewer max_tokens. You requested up to {requested} tokens, "
                "but can only afford 0. To increase, visit https://openrouter.ai/settings/credits and upgrade to "
                "a paid account",
            )
        # 3. model id
        if model_id in script.invalid_model_ids:
            return error_reply(400, f"{model_id} is not a valid model ID")
        if model is None:
            return error_reply(404, f"No endpoints found for {model_id}.")
        if request.get("stream"):
            return error_reply(400, "This FAKE does not stream: send stream false")
        # 4. parameters
        preferences = request.get("provider") or {}
        unsupported = [key for key in request if key not in NOT_PARAMETERS and key not in model.supported_parameters]
        if unsupported and preferences.get("require_parameters"):
            return error_reply(404, "No endpoints found that can handle the requested parameters.")
        exchange.dropped_parameters = unsupported
        forwarded = {key: value for key, value in request.items() if key not in unsupported}
        # 5. the response cache, in front of every provider
        caching = script.cache_all or exchange.headers.get("x-openrouter-cache", "").lower() in ("true", "1")
        cache_key = json.dumps([exchange.authorization, request], sort_keys=True)
        if caching:
            hit = self._cached(cache_key, exchange)
            if hit is not None:
                return hit
        reply = self._serve(exchange, model, preferences, forwarded)
        if caching:
            reply.headers["X-OpenRouter-Cache-Status"] = "MISS"
            exchange.cache_status = "MISS"
            if reply.status == 200 and reply.payload is not None and exchange.finish_reason == "stop":
                with script.lock:
                    script._cache[cache_key] = reply.payload
        return reply

    def _cached(self, cache_key: str, exchange: Exchange) -> Reply | None:
        script = self.script
        with script.lock:
            stored = script._cache.get(cache_key)
            if stored is None:
                return None
            script._generations += 1
            number = script._generations
        payload: dict[str, Any] = json.loads(json.dumps(stored))
        payload["id"] = f"gen-{number}"
        payload["created"] = int(time.time())
        payload["usage"] = zeroed_usage(payload["usage"])
        exchange.provider = payload["provider"]
        exchange.cache_status = "HIT"
        exchange.finish_reason = payload["choices"][0]["finish_reason"]
        return Reply(200, payload, {"X-OpenRouter-Cache-Status": "HIT"})

    def _route(self, model: FakeModel, preferences: dict[str, Any]) -> FakeProvider | None:
        def named(names: object) -> set[str]:
            return {str(name).lower() for name in names} if isinstance(names, list) else set()

        eligible = list(model.providers)
        if "only" in preferences:
            only = named(preferences["only"])
            eligible = [provider for provider in eligible if provider.name.lower() in only]
        ignore = named(preferences.get("ignore"))
        eligible = [provider for provider in eligible if provider.name.lower() not in ignore]
        if preferences.get("data_collection") == "deny":
            eligible = [provider for provider in eligible if not provider.collects_data]
        if "quantizations" in preferences:
            levels = named(preferences["quantizations"])
            eligible = [provider for provider in eligible if provider.quantization.lower() in levels]
        order = [str(name).lower() for name in preferences.get("order") or []]
        if order:
            first = [provider for name in order for provider in eligible if provider.name.lower() == name]
            rest = [provider for provider in eligible if provider not in first]
            eligible = first if preferences.get("allow_fallbacks") is False else first + rest
            return eligible[0] if eligible else None
        if not eligible:
            return None
        if preferences.get("sort"):  # sorting turns load balancing off: the first (all cost the same here)
            return eligible[0]
        with self.script.lock:  # load balancing: round robin over the eligible, per model
            turn = self.script._round_robin.get(model.id, 0)
            self.script._round_robin[model.id] = turn + 1
        return eligible[turn % len(eligible)]

    def _serve(
        self, exchange: Exchange, model: FakeModel, preferences: dict[str, Any], forwarded: dict[str, Any]
    ) -> Reply:
        script = self.script
        # 6. routing
        provider = self._route(model, preferences)
        if provider is None:
            return error_reply(503, "No available provider that meets your routing requirements")
        instead = script.serves_instead.get(provider.name.lower())
        if instead is not None:
            provider = next((other for other in model.providers if other.name == instead), FakeProvider(instead))
        exchange.provider = provider.name
        # 7. moderation
        texts = message_texts(forwarded.get("messages"))
        if provider.moderated and script.flagged_words:
            for text in texts:
                if any(re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE) for word in script.flagged_words):
                    reason = script.moderation_reason
                    return error_reply(
                        403,
                        f'{model.id} requires moderation on {provider.name}. Your input was flagged for "{reason}". '
                        "No credits were charged.",
                        {
                            "reasons": [reason],
                            "flagged_input": truncate_flagged(text),
                            "provider_name": provider.name,
                            "model_slug": model.id,
                        },
                    )
        # 8. faults
        fault = script.next_fault()
        if fault is not None and fault.kind == "status":
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            reply = error_reply(fault.status, fault.message)
            reply.headers, reply.delay_s, reply.drop_connection = headers, fault.delay_s, fault.drop_connection
            reply.raw = fault.body.encode() if fault.body is not None else None
            return reply
        # 9. the answer
        time.sleep(script.latency_s)
        failed = fault is not None and fault.kind == "generation_error"
        text = "" if failed else script.answer(forwarded, provider.name)
        prompt_tokens = count_tokens("".join(texts))
        effort = (forwarded.get("reasoning") or {}).get("effort")
        thought = model.reasoning_tokens + script.effort_tokens.get(str(effort), 0)
        completion_tokens = count_tokens(text) + thought
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
            "native_finish_reason": "stop",
        }
        if failed and fault is not None:
            prompt_tokens = completion_tokens = 0  # nothing billed
            choice = {
                "index": 0,
                "finish_reason": "error",
                "native_finish_reason": "error",
                "error": {"code": fault.status, "message": fault.message},
                "message": {"role": "assistant", "content": ""},
            }
        elif fault is not None and fault.kind == "content_filter":  # generated, billed, then withheld
            choice["message"]["content"] = ""
            choice["finish_reason"] = choice["native_finish_reason"] = "content_filter"
        elif forwarded.get("logprobs") and script.logprobs is not None:
            choice["logprobs"] = {"content": script.logprobs(text)}
        cost = prompt_tokens * model.prompt_price + completion_tokens * model.completion_price
        with script.lock:
            script.credits_usd -= cost
            script.billed_usd += cost
            script._generations += 1
            number = script._generations
        exchange.cost_usd = cost
        exchange.finish_reason = choice["finish_reason"]
        reasoning = thought if completion_tokens else 0
        return Reply(
            200,
            {
                "id": f"gen-{number}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model.id,
                "provider": provider.name,
                "system_fingerprint": provider.fingerprint,
                "choices": [choice],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                    "cost": cost,
                    "completion_tokens_details": {"reasoning_tokens": reasoning},
                    "prompt_tokens_details": {"cached_tokens": 0},
                },
            },
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self
        script = self.script

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._exchange("GET", None)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = None
                self._exchange("POST", body if isinstance(body, dict) else None)

            def _exchange(self, method: str, body: dict[str, Any] | None) -> None:
                headers = {name.lower(): value for name, value in self.headers.items()}
                exchange = Exchange(method, self.path, headers, body)
                with script.lock:
                    script.exchanges.append(exchange)
                    script.in_flight += 1
                    script.max_in_flight = max(script.max_in_flight, script.in_flight)
                try:
                    reply = fake.answer(exchange)
                    exchange.status = reply.status
                    time.sleep(reply.delay_s)
                finally:
                    # Out of flight before the reply reaches the client, which may send its next request at once.
                    with script.lock:
                        script.in_flight -= 1
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                if reply.drop_connection:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                body = reply.raw if reply.raw is not None else json.dumps(reply.payload).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler
