"""A FAKE Mistral La Plateforme API on loopback, for the project's own tests only: it is not Mistral's and speaks
to no network.

``POST /v1/chat/completions`` as docs.mistral.ai/api describes it: the key as ``Authorization: Bearer`` (else 401),
a body whose fields its validator knows (any other, such as OpenAI's ``max_completion_tokens``, is a 422 "Extra
inputs are not permitted", as Mistral's is), ``max_tokens``, ``random_seed`` and a top-level
``reasoning_effort`` (``high`` or ``none``, on the models that take it). An unknown model is a 400 ``invalid_model``
("Invalid model: x"); scripted 429s carry its per-minute request headers. A reasoning answer's content is a list
of blocks (thinking, then text). ``GET /v1/models`` lists the models. Every answer is billed by its usage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fake_loopback import Answer, LoopbackFake, Received, count_tokens

FAKE_MISTRAL_KEY = "fake-mistral-" + "5c2d" * 8  # built, so no key-shaped text is committed
# The request fields the fake's validator knows (the documented chat completion request's).
KNOWN_FIELDS = frozenset(
    {
        "model", "messages", "temperature", "top_p", "max_tokens", "stream", "stop", "random_seed",
        "response_format", "tools", "tool_choice", "presence_penalty", "frequency_penalty", "n", "prediction",
        "parallel_tool_calls", "prompt_mode", "safe_prompt", "reasoning_effort",
    }
)  # fmt: skip
RATE_LIMIT_PER_MINUTE = 720


@dataclass(frozen=True)
class FakeMistralModel:
    id: str
    reasoning: bool = False  # takes reasoning_effort; its answers then hold a thinking block
    input_price: float = 1e-7  # USD per prompt token
    output_price: float = 3e-7  # USD per output token


@dataclass
class MistralScript:
    models: dict[str, FakeMistralModel] = field(default_factory=dict)
    api_key: str = FAKE_MISTRAL_KEY
    answer: Callable[[dict[str, Any]], str] = lambda request: "4"
    rate_limited_next: int = 0  # the next N requests get a 429
    billed_usd: float = 0.0


def error(status: int, message: Any, kind: str, code: str | None = None) -> Answer:
    return Answer(status, {"object": "error", "message": message, "type": kind, "param": None, "code": code})


class FakeMistral(LoopbackFake):
    def __init__(self, script: MistralScript) -> None:
        super().__init__()
        self.script = script

    def __enter__(self) -> FakeMistral:
        super().__enter__()
        return self

    @property
    def api_url(self) -> str:
        return self.base_url + "/v1"

    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.received if r.body is not None and r.path == "/v1/chat/completions"]

    def reply(self, request: Received) -> Answer:
        script = self.script
        if request.headers.get("authorization") != f"Bearer {script.api_key}":
            return Answer(401, {"message": "Unauthorized", "request_id": "fake"})
        if request.method == "GET" and request.path == "/v1/models":
            listed = [{"id": model.id, "object": "model", "owned_by": "mistralai"} for model in script.models.values()]
            return Answer(200, {"object": "list", "data": listed})
        body = request.body
        if request.path != "/v1/chat/completions" or body is None:
            return Answer(404, {"detail": "Not Found"})
        extra = sorted(set(body) - KNOWN_FIELDS)
        if extra:
            detail = [
                {"type": "extra_forbidden", "loc": ["body", name], "msg": "Extra inputs are not permitted"}
                for name in extra
            ]
            return error(422, {"detail": detail}, "invalid_request_error")
        model = script.models.get(str(body.get("model")))
        if model is None:
            return error(400, f"Invalid model: {body.get('model')}", "invalid_model", "1500")
        effort = body.get("reasoning_effort")
        if effort is not None and (not model.reasoning or effort not in ("high", "none")):
            return error(400, f"reasoning_effort {effort!r} is not supported for this model", "invalid_request_error")
        with self.lock:
            if script.rate_limited_next > 0:
                script.rate_limited_next -= 1
                headers = {
                    "x-ratelimit-limit-req-minute": str(RATE_LIMIT_PER_MINUTE),
                    "x-ratelimit-remaining-req-minute": "0",
                }
                return Answer(
                    429,
                    {
                        "object": "error",
                        "message": "Requests rate limit exceeded",
                        "type": "rate_limited",
                        "param": None,
                        "code": "1300",
                    },
                    headers,
                )
        return self._answer(model, body, thinking=effort == "high")

    def _answer(self, model: FakeMistralModel, body: dict[str, Any], *, thinking: bool) -> Answer:
        said = " ".join(str(message.get("content", "")) for message in body["messages"])
        prompt_tokens = count_tokens(said)
        text = self.script.answer(body)
        thought = "Weighing it step by step."
        content: Any = text
        if thinking:
            content = [
                {"type": "thinking", "thinking": [{"type": "text", "text": thought}]},
                {"type": "text", "text": text},
            ]
        completion = count_tokens(text) + (count_tokens(thought) if thinking else 0)
        with self.lock:
            self.script.billed_usd += prompt_tokens * model.input_price + completion * model.output_price
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
        }
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": content, "tool_calls": None},
            "finish_reason": "stop",
        }
        headers = {
            "x-ratelimit-limit-req-minute": str(RATE_LIMIT_PER_MINUTE),
            "x-ratelimit-remaining-req-minute": str(RATE_LIMIT_PER_MINUTE - 1),
        }
        document = {
            "id": "cmpl-fake",
            "object": "chat.completion",
            "created": 1702256327,
            "model": model.id,
            "choices": [choice],
            "usage": usage,
        }
        return Answer(200, document, headers)
