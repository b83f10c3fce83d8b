"""A FAKE Gemini API on loopback, for the project's own tests only: it is not Google's and speaks to no network.

``POST /v1beta/models/{model}:generateContent`` as ai.google.dev/api/generate-content describes it: the key in
``x-goog-api-key`` (else 400 API_KEY_INVALID), ``contents`` with the roles user and model only,
``systemInstruction``, ``generationConfig`` (temperature 0..2, maxOutputTokens, thinkingConfig with a budget or a
level, never both). It answers text (after thought tokens when thinking is configured, counted in
``thoughtsTokenCount``), finishReason SAFETY for flagged words, a prompt blocked before any candidate
(``promptFeedback.blockReason``) for blocked words, and scripted 503 UNAVAILABLE; every answer is billed by its
usage at the model's price, thoughts as output.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fake_loopback import Answer, LoopbackFake, Received, count_tokens

FAKE_GEMINI_KEY = "fake-gemini-" + "9e41" * 8  # built, so no key-shaped text is committed
_PATH = re.compile(r"^/v1beta/models/([^/:]+):generateContent$")


@dataclass(frozen=True)
class FakeGeminiModel:
    id: str
    input_price: float = 1.25e-6  # USD per prompt token
    output_price: float = 1e-5  # USD per output token, thoughts included
    thinking_tokens: int = 30  # what an answer with a thinkingConfig spends thinking


@dataclass
class GeminiScript:
    models: dict[str, FakeGeminiModel] = field(default_factory=dict)
    api_key: str = FAKE_GEMINI_KEY
    answer: Callable[[dict[str, Any]], str] = lambda request: "4"
    unsafe_words: frozenset[str] = frozenset()  # the candidate ends with finishReason SAFETY
    blocked_words: frozenset[str] = frozenset()  # the prompt is blocked: no candidates
    unavailable_next: int = 0  # the next N requests get 503 UNAVAILABLE
    billed_usd: float = 0.0


def error(code: int, status: str, message: str) -> Answer:
    return Answer(code, {"error": {"code": code, "message": message, "status": status}})


class FakeGemini(LoopbackFake):
    def __init__(self, script: GeminiScript) -> None:
        super().__init__()
        self.script = script

    def __enter__(self) -> FakeGemini:
        super().__enter__()
        return self

    def bodies(self, model_id: str) -> list[dict[str, Any]]:
        return [
            r.body
            for r in self.received
            if r.body is not None and r.path == f"/v1beta/models/{model_id}:generateContent"
        ]

    def reply(self, request: Received) -> Answer:
        script, body = self.script, request.body
        if request.headers.get("x-goog-api-key") != script.api_key:
            return error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key. (API_KEY_INVALID)")
        matched = _PATH.match(request.path)
        model = script.models.get(matched.group(1)) if matched else None
        if model is None:
            return error(404, "NOT_FOUND", f"models/{request.path} is not found for API version v1beta")
        if body is None:
            return error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        refused = self._refused(body)
        if refused is not None:
            return refused
        with self.lock:
            if script.unavailable_next > 0:
                script.unavailable_next -= 1
                return error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
        return self._answer(model, body)

    def _refused(self, body: dict[str, Any]) -> Answer | None:
        contents = body.get("contents")
        if not isinstance(contents, list) or not contents:
            return error(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
        if any(content.get("role") not in ("user", "model") for content in contents):
            return error(400, "INVALID_ARGUMENT", "Please use a valid role: user, model.")
        if any(not all(isinstance(part.get("text"), str) for part in content.get("parts", [])) for content in contents):
            return error(400, "INVALID_ARGUMENT", "parts must hold text")
        config = body.get("generationConfig") or {}
        temperature = config.get("temperature")
        if temperature is not None and not 0 <= temperature <= 2:
            return error(400, "INVALID_ARGUMENT", "temperature must be in [0, 2]")
        thinking = config.get("thinkingConfig") or {}
        if "thinkingBudget" in thinking and "thinkingLevel" in thinking:
            return error(400, "INVALID_ARGUMENT", "You can only set one of thinking budget and thinking level.")
        return None

    def _answer(self, model: FakeGeminiModel, body: dict[str, Any]) -> Answer:
        script = self.script
        system = " ".join(part["text"] for part in (body.get("systemInstruction") or {}).get("parts", []))
        said = " ".join([system, *(part["text"] for content in body["contents"] for part in content["parts"])])
        words = {word.lower() for word in re.findall(r"\w+", said)}
        prompt_tokens = count_tokens(said)
        if words & script.blocked_words:
            usage = {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens}
            self._bill(model, prompt_tokens, 0)
            return Answer(200, {"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage})
        thinking = (body.get("generationConfig") or {}).get("thinkingConfig")
        thoughts = model.thinking_tokens if thinking and thinking.get("thinkingBudget", 1) != 0 else 0
        if words & script.unsafe_words:
            candidate: dict[str, Any] = {"finishReason": "SAFETY", "index": 0, "safetyRatings": []}
            answer_tokens = 0
        else:
            text = script.answer(body)
            candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
            answer_tokens = count_tokens(text)
        usage = {"promptTokenCount": prompt_tokens, "candidatesTokenCount": answer_tokens}
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
        usage["totalTokenCount"] = prompt_tokens + answer_tokens + thoughts
        self._bill(model, prompt_tokens, answer_tokens + thoughts)
        return Answer(200, {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model.id})

    def _bill(self, model: FakeGeminiModel, prompt: int, output: int) -> None:
        with self.lock:
            self.script.billed_usd += prompt * model.input_price + output * model.output_price
