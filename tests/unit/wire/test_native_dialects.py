"""The dialect registry: the old dialects' bodies and URLs byte for byte as they were, Anthropic's and Gemini's
bodies as their documentation asks, their replies and errors read, and models.yaml choosing them."""

from __future__ import annotations

import dataclasses
import json
import textwrap
from pathlib import Path

import pytest

from snap_bench.asking.catalogue import temperature_ignored
from snap_bench.asking.client import ChatReply, reply_from_recording
from snap_bench.asking.spend import cost_usd
from snap_bench.asking.stops import hopeless
from snap_bench.design.config import ConfigFiles
from snap_bench.design.models import ANTHROPIC, GEMINI, OPENAI, OPENROUTER, ModelSpec, Price, dialect_of, load_models
from snap_bench.observations.observation import Condition
from snap_bench.providers import anthropic, gemini
from snap_bench.wire.dialects import dialect_named, encode, request_payload
from snap_bench.wire.request import condition_request

MESSAGES = [{"role": "system", "content": "Be brief. é"}, {"role": "user", "content": 'Rate M01: "quoted"'}]
PLAIN = ModelSpec("m", "m", "vendor/m", "t", "http://x/v1", None, None, None)
CLAUDE = dataclasses.replace(PLAIN, provider_id="claude-x", dialect=ANTHROPIC, base_url="https://api.anthropic.com")
FLASH = dataclasses.replace(
    PLAIN, provider_id="gemini-2.5-flash", dialect=GEMINI, base_url="https://generativelanguage.googleapis.com"
)

# Bodies built by the code before the dialect registry (the same entries, messages, temperatures and budgets):
# the shipped recordings match on these bytes.
BEFORE = [
    (
        PLAIN,
        0.5,
        12,
        b'{"max_tokens":12,"messages":[{"content":"Be brief. \xc3\xa9","role":"system"},{"content":"Rate M01: '
        b'\\"quoted\\"","role":"user"}],"model":"vendor/m","temperature":0.5}',
    ),
    (
        dataclasses.replace(PLAIN, dialect=OPENROUTER, reasoning="low", routing={"order": ["DeepInfra"]}),
        None,
        64,
        b'{"max_tokens":64,"messages":[{"content":"Be brief. \xc3\xa9","role":"system"},{"content":"Rate M01: '
        b'\\"quoted\\"","role":"user"}],"model":"vendor/m","provider":{"order":["DeepInfra"],'
        b'"require_parameters":true},"reasoning":{"effort":"low"}}',
    ),
    (
        dataclasses.replace(PLAIN, dialect=OPENAI, reasoning="off", top_logprobs=5),
        0.0,
        8,
        b'{"logprobs":true,"max_completion_tokens":16,"messages":[{"content":"Be brief. \xc3\xa9","role":"system"},'
        b'{"content":"Rate M01: \\"quoted\\"","role":"user"}],"model":"vendor/m","reasoning_effort":"none",'
        b'"temperature":0.0,"top_logprobs":5}',
    ),
    (
        dataclasses.replace(PLAIN, dialect=OPENAI, reasoning="high"),
        1.0,
        2000,
        b'{"max_completion_tokens":2000,"messages":[{"content":"Be brief. \xc3\xa9","role":"system"},{"content":'
        b'"Rate M01: \\"quoted\\"","role":"user"}],"model":"vendor/m","reasoning_effort":"high","temperature":1.0}',
    ),
]


class Toy:
    name = "toy"
    max_tokens = 12

    def messages(self, condition: Condition) -> list[dict[str, str]]:
        return MESSAGES


@pytest.mark.parametrize(("model", "temperature", "max_tokens", "before"), BEFORE)
def test_the_old_dialects_send_the_bytes_they_always_sent(
    model: ModelSpec, temperature: float | None, max_tokens: int, before: bytes
) -> None:
    assert encode(request_payload(model, MESSAGES, temperature, max_tokens)) == before
    condition = Condition("toy", "Q1", (), temperature, 1)
    request = condition_request(dataclasses.replace(model, max_tokens=max_tokens), "http://x/v1", Toy(), condition)
    assert (request.body, request.uri) == (before, "http://x/v1/chat/completions")


def test_anthropic_puts_the_system_prompt_at_the_top_and_requires_max_tokens() -> None:
    body = request_payload(CLAUDE, MESSAGES, 0.5, 24)
    assert body == {
        "model": "claude-x",
        "max_tokens": 24,
        "system": "Be brief. é",
        "messages": [{"role": "user", "content": 'Rate M01: "quoted"'}],
        "temperature": 0.5,
    }
    assert "temperature" not in request_payload(CLAUDE, MESSAGES, None, 24)
    condition = Condition("toy", "Q1", (), 0.5, 1)
    request = condition_request(CLAUDE, "https://api.anthropic.com", Toy(), condition)
    assert request.uri == "https://api.anthropic.com/v1/messages"
    assert anthropic.headers("k") == {"anthropic-version": "2023-06-01", "x-api-key": "k"}


@pytest.mark.parametrize("effort", ["minimal", "low", "medium", "high", "xhigh"])
def test_anthropic_thinking_budget_is_at_least_1024_and_under_max_tokens(effort: str) -> None:
    model = dataclasses.replace(CLAUDE, reasoning=effort)
    body = request_payload(model, MESSAGES, None, 12)
    budget = body["thinking"]["budget_tokens"]
    assert body["thinking"]["type"] == "enabled"
    assert 1024 <= budget < body["max_tokens"] == budget + 12
    # the request's budget (held against --snap-max-cost) is what max_tokens allows
    assert condition_request(model, "https://a", Toy(), Condition("toy", "Q1", (), None, 1)).max_tokens == budget + 12
    assert temperature_ignored(model, None) is not None  # asked at the provider's default
    assert "thinking" not in request_payload(dataclasses.replace(CLAUDE, reasoning="off"), MESSAGES, None, 12)
    assert temperature_ignored(dataclasses.replace(CLAUDE, reasoning="off"), None) is None


def test_gemini_writes_contents_with_user_and_model_and_a_system_instruction() -> None:
    turns = [*MESSAGES, {"role": "assistant", "content": "4"}, {"role": "user", "content": "Again"}]
    body = request_payload(dataclasses.replace(FLASH, reasoning="low"), turns, 0.0, 64)
    assert body == {
        "contents": [
            {"role": "user", "parts": [{"text": 'Rate M01: "quoted"'}]},
            {"role": "model", "parts": [{"text": "4"}]},
            {"role": "user", "parts": [{"text": "Again"}]},
        ],
        "systemInstruction": {"parts": [{"text": "Be brief. é"}]},
        "generationConfig": {"maxOutputTokens": 64, "temperature": 0.0, "thinkingConfig": {"thinkingBudget": 2048}},
    }
    three = dataclasses.replace(FLASH, provider_id="gemini-3-pro-preview", reasoning="high")
    assert request_payload(three, MESSAGES, None, 64)["generationConfig"] == {
        "maxOutputTokens": 64,
        "thinkingConfig": {"thinkingLevel": "high"},
    }
    request = condition_request(
        FLASH, "https://generativelanguage.googleapis.com", Toy(), Condition("t", "Q", (), 1.0, 1)
    )
    assert request.uri == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    assert gemini.headers("k") == {"x-goog-api-key": "k"}


def test_an_anthropic_reply_leaves_the_thinking_out_and_reads_a_refusal_as_moderated() -> None:
    reply = {
        "model": "claude-x",
        "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "4"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 7},
    }
    read = reply_from_recording(json.dumps(reply), 1, dialect=ANTHROPIC)
    assert (read.text, read.error, read.prompt_tokens, read.completion_tokens, read.finish_reason) == (
        "4",
        None,
        10,
        7,
        "stop",
    )
    priced = dataclasses.replace(CLAUDE, price=Price(3.0, 15.0))
    assert cost_usd(priced, read) == pytest.approx((10 * 3.0 + 7 * 15.0) / 1e6)
    refused = reply_from_recording(json.dumps({**reply, "stop_reason": "refusal", "content": []}), 1, dialect=ANTHROPIC)
    assert refused.moderated
    assert refused.error is None
    assert "refusal" in (refused.finish_reason or "")
    cut = reply_from_recording(json.dumps({**reply, "stop_reason": "max_tokens", "content": []}), 1, dialect=ANTHROPIC)
    assert (cut.text, cut.finish_reason) == ("", "length")


def test_a_gemini_reply_counts_its_thoughts_as_output_and_reads_blocks_as_moderated() -> None:
    reply = {
        "candidates": [
            {"content": {"parts": [{"text": "plan", "thought": True}, {"text": "4"}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "thoughtsTokenCount": 30},
        "modelVersion": "gemini-2.5-flash",
    }
    read = reply_from_recording(json.dumps(reply), 1, dialect=GEMINI)
    assert (read.text, read.completion_tokens, read.reasoning_tokens, read.served_model) == (
        "4",
        32,
        30,
        "gemini-2.5-flash",
    )
    priced = dataclasses.replace(FLASH, price=Price(1.25, 10.0))
    assert cost_usd(priced, read) == pytest.approx((10 * 1.25 + 32 * 10.0) / 1e6)
    for reason in ("SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"):
        stopped = reply_from_recording(json.dumps({"candidates": [{"finishReason": reason}]}), 1, dialect=GEMINI)
        assert stopped.moderated
        assert stopped.finish_reason == reason
    blocked = reply_from_recording(json.dumps({"promptFeedback": {"blockReason": "OTHER"}}), 1, dialect=GEMINI)
    assert blocked.moderated
    assert blocked.finish_reason == "prompt blocked (OTHER)"
    empty = reply_from_recording(json.dumps({"candidates": []}), 1, dialect=GEMINI)
    assert empty.error is not None
    assert empty.text is None


def test_the_providers_hopeless_errors_stop_the_model() -> None:
    def failed(status: int, body: dict[str, object]) -> ChatReply:
        return ChatReply(None, f"HTTP {status}: {json.dumps(body)}", status, 0.0, 1)

    deprecated = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "`temperature` is deprecated for this model."},
    }
    thinking = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.",
        },
    }
    spend = {
        "type": "error",
        "error": {"type": "rate_limit_error", "details": {"error_code": "enforced_spend_limit_reached"}},
    }
    bad_key = {
        "error": {
            "code": 400,
            "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT",
        }
    }
    assert hopeless(failed(400, deprecated)) == "temperature"
    assert hopeless(failed(400, thinking)) == "temperature"
    assert hopeless(failed(429, spend)) == "credits"
    assert hopeless(failed(400, bad_key)) == "auth"
    no_claude = {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-x"}}
    no_gemini = {"error": {"code": 404, "message": "models/gemini-x is not found for API version v1beta"}}
    assert hopeless(failed(404, no_claude)) == "model"
    assert hopeless(failed(404, no_gemini)) == "model"
    assert dialect_named(ANTHROPIC).hopeless_error(429, json.dumps(spend))
    assert not dialect_named(ANTHROPIC).hopeless_error(429, '{"type":"error","error":{"type":"rate_limit_error"}}')
    assert not dialect_named(ANTHROPIC).hopeless_error(529, '{"type":"error","error":{"type":"overloaded_error"}}')


def test_models_yaml_chooses_the_dialect_by_host_or_by_name_with_the_providers_key(tmp_path: Path) -> None:
    assert dialect_of("https://api.anthropic.com") == ANTHROPIC
    assert dialect_of("https://generativelanguage.googleapis.com") == GEMINI
    (tmp_path / "models.yaml").write_text(
        textwrap.dedent("""\
            models:
              claude:
                id: claude-x
                dialect: anthropic
              flash:
                base_url: https://generativelanguage.googleapis.com
              own-key:
                dialect: gemini
                api_key_env: GOOGLE_API_KEY
            """),
        encoding="utf-8",
    )
    models = load_models(ConfigFiles(tmp_path)).models
    claude, flash, own = models["claude"], models["flash"], models["own-key"]
    assert (claude.dialect, claude.base_url, claude.api_key_env) == (
        ANTHROPIC,
        "https://api.anthropic.com",
        "ANTHROPIC_API_KEY",
    )
    assert (flash.dialect, flash.api_key_env) == (GEMINI, "GEMINI_API_KEY")
    assert (own.base_url, own.api_key_env) == ("https://generativelanguage.googleapis.com", "GOOGLE_API_KEY")
