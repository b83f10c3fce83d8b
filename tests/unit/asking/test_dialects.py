"""The body of a request in each dialect (OpenRouter's, OpenAI's, a plain OpenAI-compatible server's), and
how a reply's failure is classed for the stops (snap_bench.wire.dialects, snap_bench.asking.stops)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from snap_bench.asking.client import ChatReply
from snap_bench.asking.stops import Request, StopBoard, hopeless, stopped_models
from snap_bench.asking.throttle import Budget, BudgetLimits, SharedState
from snap_bench.design.models import OPENAI, OPENAI_COMPATIBLE, OPENROUTER, ModelSpec, dialect_of
from snap_bench.wire.dialects import encode, request_payload

MESSAGES = [{"role": "user", "content": "Say 4"}]
PLAIN = ModelSpec("m", "m", "vendor/m", "t", "http://127.0.0.1:8080/v1", None, None, None)


def test_the_dialect_is_read_from_the_host() -> None:
    assert dialect_of("https://openrouter.ai/api/v1") == OPENROUTER
    assert dialect_of("https://api.openai.com/v1") == OPENAI
    assert dialect_of("http://127.0.0.1:11434/v1") == OPENAI_COMPATIBLE
    assert dialect_of(None) == OPENAI_COMPATIBLE


def test_a_plain_server_gets_the_bodies_it_always_got() -> None:
    """The shipped local recordings match on the body: it must stay byte for byte what it was."""
    model = dataclasses.replace(PLAIN, reasoning="off", top_logprobs=5)
    was = {
        "model": "vendor/m",
        "messages": MESSAGES,
        "temperature": 0.5,
        "max_tokens": 12,
        "reasoning": {"effort": "none"},
        "logprobs": True,
        "top_logprobs": 5,
    }
    assert encode(request_payload(model, MESSAGES, 0.5, 12)) == encode(was)


def test_openrouter_gets_the_routing_block_with_require_parameters() -> None:
    model = dataclasses.replace(PLAIN, dialect=OPENROUTER, routing={"order": ["OpenAI"], "allow_fallbacks": False})
    body = request_payload(model, MESSAGES, 0.0, 12)
    assert body["provider"] == {"order": ["OpenAI"], "allow_fallbacks": False, "require_parameters": True}
    assert request_payload(dataclasses.replace(model, routing=None), MESSAGES, 0.0, 12)["provider"] == {
        "require_parameters": True
    }


def test_openai_gets_max_completion_tokens_of_at_least_16_and_a_top_level_effort() -> None:
    model = dataclasses.replace(PLAIN, dialect=OPENAI, reasoning="low")
    body = request_payload(model, MESSAGES, None, 12)
    assert body["max_completion_tokens"] == 16
    assert "max_tokens" not in body
    assert body["reasoning_effort"] == "low"
    assert "reasoning" not in body
    assert "temperature" not in body
    assert "provider" not in body


def test_the_providers_default_temperature_sends_none() -> None:
    assert "temperature" not in request_payload(PLAIN, MESSAGES, None, 12)


def failure(status: int, message: str, **fields: object) -> ChatReply:
    return ChatReply(None, f"HTTP {status}: {message}", status, 0.0, 1, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (failure(402, "This request requires more credits, or fewer max_tokens."), "credits"),
        (failure(401, "No auth credentials found"), "auth"),
        (failure(403, "Your input was flagged", moderated=True), None),
        (failure(403, "Forbidden"), "auth"),
        (failure(404, "No endpoints found for anthropic/claude-3-opus."), "model"),
        (failure(400, "zhipu/glm-4 is not a valid model ID"), "model"),
        (failure(404, "No endpoints found that can handle the requested parameters."), "parameter"),
        (failure(503, "No available provider that meets your routing requirements"), "routing"),
        (failure(503, "Service unavailable"), None),
        (failure(400, "Unsupported value: 'temperature' does not support 0.0"), "temperature"),
    ],
)
def test_each_refusal_is_classed_as_openrouter_documents_it(reply: ChatReply, kind: str | None) -> None:
    assert hopeless(reply) == kind


def test_no_credits_stop_every_model_asked_with_that_key(tmp_path: Path) -> None:
    key_of = {"a": "OPENROUTER_API_KEY", "b": "OPENROUTER_API_KEY", "local": None}
    board = StopBoard(tmp_path, key_of)
    request = Request("a", "vendor/a", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY")
    board.note(request, failure(402, "This request requires more credits"))
    assert board.stopped("a")
    assert board.stopped("b")
    assert board.stopped("local") is None
    assert set(stopped_models(tmp_path, key_of)) == {"a", "b"}


def test_a_moderation_refusal_never_stops_the_model(tmp_path: Path) -> None:
    board = StopBoard(tmp_path)
    request = Request("a", "vendor/a", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY")
    for _ in range(5):
        board.note(request, failure(403, "flagged", moderated=True))
    assert board.stopped("a") is None


def test_the_cost_limit_holds_every_requests_worst_case_until_it_settles(tmp_path: Path) -> None:
    budget = Budget(SharedState(tmp_path / "budget.json"), BudgetLimits(max_usd=1.0))
    assert budget.reserve(0.4) is None
    assert budget.reserve(0.4) is None
    assert budget.reserve(0.4) is not None  # 0.8 held: a third worst case would pass the limit
    budget.settle(0.4, 0.05)  # one answer cost far less than its worst case
    assert budget.reserve(0.4) is None  # 0.05 spent + 0.8 held
    assert budget.spent()["usd"] == pytest.approx(0.05)
