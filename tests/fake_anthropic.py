"""A FAKE Anthropic Messages API on loopback, for the project's own tests only: it is not Anthropic and speaks to
no network.

``POST /v1/messages`` as docs.anthropic.com describes it (messages, errors, extended thinking): it refuses what
the API refuses (400 invalid_request_error) — no ``anthropic-version`` header, a ``system`` role in
``messages``, no ``max_tokens``, a temperature outside 0..1, a thinking budget under 1024 or not under
``max_tokens``, a temperature other than 1 with thinking on, and any temperature for a model that takes none
("`temperature` is deprecated for this model."); a wrong ``x-api-key`` is a 401. It answers text (after a
thinking block when thinking is on), a ``refusal`` stop for flagged words, scripted 529 overloaded_error
and the 429 of an enforced spend limit; every answer is billed by its usage at the model's price.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fake_loopback import Answer, LoopbackFake, Received, count_tokens

FAKE_ANTHROPIC_KEY = "fake-anthropic-" + "c1a0" * 8  # built, so no key-shaped text is committed
VERSION = "2023-06-01"


@dataclass(frozen=True)
class FakeClaude:
    id: str
    input_price: float = 3e-6  # USD per input token
    output_price: float = 1.5e-5  # USD per output token (thinking included)
    takes_temperature: bool = True  # False: "`temperature` is deprecated for this model."
    thinking_tokens: int = 40  # what a thinking answer spends thinking (within the budget)


@dataclass
class AnthropicScript:
    models: dict[str, FakeClaude] = field(default_factory=dict)
    api_key: str = FAKE_ANTHROPIC_KEY
    answer: Callable[[dict[str, Any]], str] = lambda request: "4"
    refused_words: frozenset[str] = frozenset()  # a prompt with one of these ends in stop_reason "refusal"
    overloaded_next: int = 0  # the next N requests get 529 overloaded_error
    spend_limit: bool = False  # every request gets the 429 of an enforced spend limit
    billed_usd: float = 0.0


def error(status: int, kind: str, message: str, **extra: Any) -> Answer:
    return Answer(status, {"type": "error", "error": {"type": kind, "message": message, **extra}})


class FakeAnthropic(LoopbackFake):
    def __init__(self, script: AnthropicScript) -> None:
        super().__init__()
        self.script = script

    def __enter__(self) -> FakeAnthropic:
        super().__enter__()
        return self

    def messages_bodies(self, model_id: str) -> list[dict[str, Any]]:
        return [r.body for r in self.received if r.body is not None and r.body.get("model") == model_id]

    def reply(self, request: Received) -> Answer:
        script, body = self.script, request.body
        if request.path != "/v1/messages":
            return error(404, "not_found_error", f"Not Found: {request.path}")
        if request.headers.get("x-api-key") != script.api_key:
            return error(401, "authentication_error", "invalid x-api-key")
        if request.headers.get("anthropic-version") != VERSION:
            return error(400, "invalid_request_error", "anthropic-version: header is required")
        if body is None:
            return error(400, "invalid_request_error", "the body is not a JSON object")
        refused = self._refused(body)
        if refused is not None:
            return refused
        model = script.models[body["model"]]
        with self.lock:
            if script.spend_limit:
                return error(
                    429,
                    "rate_limit_error",
                    "You have reached your organization's monthly usage limit.",
                    details={"error_code": "enforced_spend_limit_reached"},
                )
            if script.overloaded_next > 0:
                script.overloaded_next -= 1
                return error(529, "overloaded_error", "Overloaded")
        return self._answer(model, body)

    def _refused(self, body: dict[str, Any]) -> Answer | None:
        """The 400s (and 404) the API answers a request it will not take, first that applies."""
        model = self.script.models.get(body.get("model"))  # type: ignore[arg-type]
        if model is None:
            return error(404, "not_found_error", f"model: {body.get('model')}")
        max_tokens = body.get("max_tokens")
        if not isinstance(max_tokens, int) or max_tokens < 1:
            return error(400, "invalid_request_error", "max_tokens: Field required")
        roles = [message.get("role") for message in body.get("messages") or []]
        if not roles or any(role not in ("user", "assistant") for role in roles):
            return error(
                400,
                "invalid_request_error",
                'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, '
                'not "system" as an input message role.',
            )
        temperature = body.get("temperature")
        if temperature is not None and not model.takes_temperature:
            return error(400, "invalid_request_error", "`temperature` is deprecated for this model.")
        if temperature is not None and not 0 <= temperature <= 1:
            return error(400, "invalid_request_error", "temperature: Input should be less than or equal to 1")
        thinking = body.get("thinking")
        if thinking is not None:
            budget = thinking.get("budget_tokens")
            if thinking.get("type") != "enabled" or not isinstance(budget, int) or budget < 1024:
                return error(400, "invalid_request_error", "thinking.enabled.budget_tokens: must be >= 1024")
            if budget >= max_tokens:
                return error(400, "invalid_request_error", "`max_tokens` must be greater than `thinking.budget_tokens`")
            if temperature is not None and temperature != 1:
                return error(
                    400,
                    "invalid_request_error",
                    "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.",
                )
        return None

    def _answer(self, model: FakeClaude, body: dict[str, Any]) -> Answer:
        script = self.script
        said = " ".join([str(body.get("system", "")), *(str(m["content"]) for m in body["messages"])])
        words = {word.lower() for word in re.findall(r"\w+", said)}
        content: list[dict[str, Any]] = []
        thought = 0
        if body.get("thinking"):
            thought = min(model.thinking_tokens, body["thinking"]["budget_tokens"])
            content.append({"type": "thinking", "thinking": "considering " * thought, "signature": "fake-sig"})
        if words & script.refused_words:
            text, stop = "", "refusal"
        else:
            text, stop = script.answer(body), "end_turn"
        if text:
            content.append({"type": "text", "text": text})
        usage = {"input_tokens": count_tokens(said), "output_tokens": thought + (count_tokens(text) if text else 0)}
        with self.lock:
            script.billed_usd += usage["input_tokens"] * model.input_price + usage["output_tokens"] * model.output_price
        return Answer(
            200,
            {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model.id,
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            },
        )
