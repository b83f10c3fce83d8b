"""A reasoning model's cost: its reasoning tokens are paid for whether the provider counts them in the completion
or apart (the sessions of reasoning models: tests/session/test_reasoning.py)."""

from __future__ import annotations

import pytest

from snap_bench.asking.asker import cost_usd
from snap_bench.asking.client import ChatReply
from snap_bench.design.models import ModelSpec, Price


def test_reasoning_tokens_reported_apart_from_the_completion_are_added_to_the_cost() -> None:
    model = ModelSpec("m", "m", "v/m", "t", "http://x", None, Price(1.0, 2.0), None)
    included = ChatReply("4", None, 200, 0.1, 1, prompt_tokens=20, completion_tokens=501, reasoning_tokens=500)
    apart = ChatReply("4", None, 200, 0.1, 1, prompt_tokens=20, completion_tokens=1, reasoning_tokens=500)
    assert cost_usd(model, included) == pytest.approx((20 * 1.0 + 501 * 2.0) / 1e6)
    assert cost_usd(model, apart) == pytest.approx((20 * 1.0 + 501 * 2.0) / 1e6)
