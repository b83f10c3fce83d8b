"""The throughput bench's peers get snap-bench's very requests (bench/peers.py); no timing here."""

from __future__ import annotations

import json
from typing import Any

from bench.peers import _needed_node, promptfoo_config, request_fields
from bench.throughput import same_requests


def body(user: str, temperature: float) -> dict[str, Any]:
    messages = [{"role": "system", "content": 'Say "yes".'}, {"role": "user", "content": user}]
    return {"model": "fake/model", "messages": messages, "temperature": temperature, "max_tokens": 24}


def test_promptfoo_config_holds_one_test_per_request_and_each_requests_fields() -> None:
    requests = [body("a", 0.0), body("b", 0.5), body("c", 0.0)]
    config = promptfoo_config("http://127.0.0.1:1/v1", requests)
    assert config["providers"] == [
        {
            "id": "openai:chat:fake/model",
            "config": {"apiBaseUrl": "http://127.0.0.1:1/v1", "apiKey": "sk-loopback-dummy"},
        }
    ]
    prompts = {prompt["label"]: prompt for prompt in config["prompts"]}
    assert len(prompts) == 2  # one per distinct set of fields
    for request, test in zip(requests, config["tests"], strict=True):
        (label,) = test["prompts"]
        assert (
            prompts[label]["config"]
            == request_fields(request)
            == {"temperature": request["temperature"], "max_tokens": 24}
        )
        assert json.loads(test["vars"]["chat"]) == request["messages"]


def test_same_requests_is_a_multiset_comparison_blind_to_int_and_float() -> None:
    sent = [body("a", 0.0), body("b", 1.0)]
    as_javascript_sends = [{**body("b", 1.0), "temperature": 1}, {**body("a", 0.0), "temperature": 0}]
    assert same_requests(as_javascript_sends, sent) == "same"
    assert same_requests([body("a", 0.0)], sent).startswith("1 missing, 0 other")
    assert same_requests([*sent, {**body("a", 0.0), "seed": 1}], sent).startswith("0 missing, 1 other")


def test_the_node_range_read_from_an_engines_field() -> None:
    assert _needed_node(">=22.22.0") == (22, 22, 0)
    assert _needed_node("^20 || ^22") == (0,)
