"""The FAKE OpenRouter answers as OpenRouter's documentation says, so tests built on it mean something."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.fake_openrouter import (
    FAKE_OPENROUTER_KEY,
    FakeModel,
    FakeOpenRouter,
    FakeProvider,
    Fault,
    OpenRouterScript,
)

GPT = "openai/gpt-4o-mini"
LLAMA = "meta-llama/llama-3.1-8b-instruct"
R1 = "deepseek/deepseek-r1"
AUTH = {"Authorization": f"Bearer {FAKE_OPENROUTER_KEY}"}


def ask(
    server: FakeOpenRouter,
    model: str = GPT,
    content: str = "What is 2 + 2?",
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": content}], **extra}
    return httpx.post(f"{server.base_url}/chat/completions", json=body, headers=AUTH | (headers or {}), timeout=10)


@pytest.fixture
def server() -> Iterator[FakeOpenRouter]:
    with FakeOpenRouter() as fake:
        yield fake


def test_the_catalogue_lists_each_model_with_decimal_prices(server: FakeOpenRouter) -> None:
    assert server.base_url.endswith("/api/v1")
    response = httpx.get(f"{server.base_url}/models", timeout=10)
    entries = {entry["id"]: entry for entry in response.json()["data"]}
    assert set(entries) == {GPT, LLAMA, R1}
    assert entries[GPT]["pricing"] == {"prompt": "0.00000015", "completion": "0.0000006", "request": "0", "image": "0"}
    assert "logprobs" in entries[GPT]["supported_parameters"]
    assert entries[GPT]["context_length"] == 128_000
    assert server.script.catalogue_reads == 1


def test_a_wrong_key_is_401(server: FakeOpenRouter) -> None:
    response = ask(server, headers={"Authorization": "Bearer wrong"})
    assert response.status_code == 401
    assert response.json() == {"error": {"code": 401, "message": "No auth credentials found"}}
    assert server.script.exchanges[0].authorization == "Bearer wrong"


def test_402_once_the_credit_runs_out() -> None:
    with FakeOpenRouter(OpenRouterScript(credits_usd=1e-6)) as server:
        statuses = [ask(server, max_tokens=50).status_code for _ in range(4)]
        refusal = ask(server, max_tokens=50).json()
    assert statuses == [200, 402, 402, 402]  # the first answer costs more than the credit left
    assert refusal["error"]["code"] == 402
    assert refusal["error"]["message"].startswith("This request requires more credits, or fewer max_tokens. ")
    assert "You requested up to 50 tokens, but can only afford 0." in refusal["error"]["message"]
    assert server.script.requests_after(402) == 3
    assert server.script.charges[1:] == [0.0] * 4


def test_an_invalid_model_id_is_400_an_unknown_one_404() -> None:
    with FakeOpenRouter(OpenRouterScript(invalid_model_ids=frozenset({"gpt4"}))) as server:
        invalid, unknown = ask(server, model="gpt4"), ask(server, model="acme/none")
    assert invalid.status_code == 400
    assert invalid.json()["error"] == {"code": 400, "message": "gpt4 is not a valid model ID"}
    assert unknown.status_code == 404
    assert unknown.json()["error"] == {"code": 404, "message": "No endpoints found for acme/none."}


def test_an_unsupported_parameter_is_dropped_unless_required(server: FakeOpenRouter) -> None:
    dropped = ask(server, model=LLAMA, temperature=0, logprobs=True, top_logprobs=3)
    assert dropped.status_code == 200
    assert "logprobs" not in dropped.json()["choices"][0]
    required = ask(server, model=LLAMA, logprobs=True, provider={"require_parameters": True})
    assert required.status_code == 404
    message = "No endpoints found that can handle the requested parameters."
    assert required.json()["error"] == {"code": 404, "message": message}
    kept = ask(server, model=GPT, logprobs=True, provider={"require_parameters": True})
    assert kept.json()["choices"][0]["logprobs"]["content"][0]["token"] == "4"
    assert server.script.dropped_parameters == [["logprobs", "top_logprobs"], [], []]


def test_routing_by_only_ignore_and_order(server: FakeOpenRouter) -> None:
    def served(provider: dict[str, Any]) -> str:
        return str(ask(server, model=LLAMA, provider=provider).json()["provider"])

    assert {served({"only": ["together"]}) for _ in range(3)} == {"Together"}
    assert {served({"ignore": ["DeepInfra", "Together"]}) for _ in range(3)} == {"Fireworks"}
    assert {served({"order": ["Fireworks", "DeepInfra"]}) for _ in range(3)} == {"Fireworks"}
    assert served({"order": ["Fireworks"], "ignore": ["Fireworks"]}) == "DeepInfra"  # a fallback
    assert served({"data_collection": "deny", "quantizations": ["fp8"]}) == "Together"


def test_no_eligible_provider_is_503(server: FakeOpenRouter) -> None:
    strict = {"order": ["Fireworks"], "ignore": ["Fireworks"], "allow_fallbacks": False}
    for provider in ({"only": ["Groq"]}, strict):
        response = ask(server, model=LLAMA, provider=provider)
        assert response.status_code == 503
        message = "No available provider that meets your routing requirements"
        assert response.json()["error"] == {"code": 503, "message": message}
    assert server.script.providers_served == [None, None]


def test_providers_take_turns_and_can_answer_differently() -> None:
    def by_provider(request: dict[str, Any], provider: str) -> str:
        return "5" if provider == "Azure" else "4"

    with FakeOpenRouter(OpenRouterScript(answer=by_provider)) as server:
        replies = [ask(server).json() for _ in range(4)]
    assert [reply["provider"] for reply in replies] == ["OpenAI", "Azure", "OpenAI", "Azure"]
    assert [reply["choices"][0]["message"]["content"] for reply in replies] == ["4", "5", "4", "5"]
    assert [reply["system_fingerprint"] for reply in replies[:2]] == ["fp_openai", "fp_azure"]
    assert server.script.providers_served == ["OpenAI", "Azure", "OpenAI", "Azure"]


def test_a_flagged_input_is_403_with_metadata() -> None:
    with FakeOpenRouter(OpenRouterScript(flagged_words=frozenset({"idiot"}))) as server:
        response = ask(server, content="You idiot, what is 2 + 2?")
        unmoderated = ask(server, model=LLAMA, content="You idiot, what is 2 + 2?")
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["message"] == (
        'openai/gpt-4o-mini requires moderation on OpenAI. Your input was flagged for "harassment". '
        "No credits were charged."
    )
    assert error["metadata"] == {
        "reasons": ["harassment"],
        "flagged_input": "You idiot, what is 2 + 2?",
        "provider_name": "OpenAI",
        "model_slug": GPT,
    }
    assert unmoderated.status_code == 200  # Llama's providers do not moderate
    assert server.script.billed_usd == unmoderated.json()["usage"]["cost"]


def test_a_generation_error_is_a_200_billed_nothing() -> None:
    with FakeOpenRouter(OpenRouterScript(faults=deque([Fault(kind="generation_error")]))) as server:
        failed, answered = ask(server).json(), ask(server).json()
    assert failed["choices"][0] == {
        "index": 0,
        "finish_reason": "error",
        "native_finish_reason": "error",
        "error": {"code": 502, "message": "Upstream provider error"},
        "message": {"role": "assistant", "content": ""},
    }
    assert failed["usage"]["cost"] == 0
    assert answered["choices"][0]["message"]["content"] == "4"
    assert server.script.charges == [0.0, answered["usage"]["cost"]]


def test_a_content_filter_is_an_empty_200_billed_in_full() -> None:
    with FakeOpenRouter(OpenRouterScript(faults=deque([Fault(kind="content_filter")]))) as server:
        reply = ask(server).json()
    choice = reply["choices"][0]
    assert (choice["finish_reason"], choice["message"]["content"]) == ("content_filter", "")
    assert reply["usage"]["cost"] > 0
    assert server.script.billed_usd == reply["usage"]["cost"]


def test_status_faults_carry_retry_after_and_rate_faults_are_deterministic() -> None:
    script = OpenRouterScript(faults=deque([Fault(status=429, retry_after="2")]), fault_every=3)
    with FakeOpenRouter(script) as server:
        limited = ask(server)
        finishes = [ask(server).json()["choices"][0]["finish_reason"] for _ in range(6)]
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "2"
    assert finishes == ["stop", "stop", "error", "stop", "stop", "error"]

    def seeded() -> list[str]:
        with FakeOpenRouter(OpenRouterScript(fault_rate=0.5, fault_seed=7)) as server:
            return [ask(server).json()["choices"][0]["finish_reason"] for _ in range(8)]

    first = seeded()
    assert seeded() == first
    assert set(first) == {"stop", "error"}


def test_a_cached_request_is_a_hit_with_zeroed_usage(server: FakeOpenRouter) -> None:
    cache = {"X-OpenRouter-Cache": "true"}
    first, second = ask(server, headers=cache), ask(server, headers=cache)
    uncached = ask(server)
    assert first.headers["x-openrouter-cache-status"] == "MISS"
    assert second.headers["x-openrouter-cache-status"] == "HIT"
    assert "x-openrouter-cache-status" not in uncached.headers
    assert second.json()["choices"] == first.json()["choices"]
    assert second.json()["provider"] == first.json()["provider"]
    assert second.json()["id"] != first.json()["id"]
    usage = second.json()["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["total_tokens"], usage["cost"]) == (0, 0, 0, 0)
    assert first.json()["usage"]["cost"] > 0
    assert server.script.billed_usd == pytest.approx(first.json()["usage"]["cost"] * 2, abs=1e-12)
    assert [exchange.cache_status for exchange in server.script.exchanges] == ["MISS", "HIT", None]


def test_cache_all_caches_without_the_header() -> None:
    with FakeOpenRouter(OpenRouterScript(cache_all=True)) as server:
        statuses = [ask(server).headers["x-openrouter-cache-status"] for _ in range(2)]
        other = ask(server, content="What is 3 + 3?").headers["x-openrouter-cache-status"]
    assert (statuses, other) == (["MISS", "HIT"], "MISS")
    assert server.script.charges[1] == 0.0


def test_the_billed_total_is_the_sum_of_usage_costs() -> None:
    model = FakeModel(
        id="acme/thinker",
        prompt_price=3e-7,
        completion_price=1.1e-6,
        reasoning_tokens=40,
        providers=(FakeProvider("Acme", system_fingerprint="fp_acme_1"),),
    )
    with FakeOpenRouter(OpenRouterScript(models=(model,))) as server:
        replies = [ask(server, model="acme/thinker", content="x" * length).json() for length in (3, 40, 400)]
    usages = [reply["usage"] for reply in replies]
    assert [usage["prompt_tokens"] for usage in usages] == [1, 10, 100]
    assert all(usage["completion_tokens"] == 41 for usage in usages)
    assert all(usage["completion_tokens_details"]["reasoning_tokens"] == 40 for usage in usages)
    assert usages[0]["cost"] == pytest.approx(1 * 3e-7 + 41 * 1.1e-6, abs=1e-15)
    assert abs(sum(usage["cost"] for usage in usages) - server.script.billed_usd) < 1e-9
    assert server.script.credits_usd == pytest.approx(1_000_000.0 - server.script.billed_usd)
    assert replies[0]["system_fingerprint"] == "fp_acme_1"
    assert server.script.chat_requests == 3
