"""What a model's entry adds to each request: its own output budget, its reasoning effort, log-probabilities.

A field is sent only when the entry sets it, so the body of an entry without them (and so the
recordings that match on the body) stays byte for byte what it was.
"""

from __future__ import annotations

from typing import Any

from snap_bench.asking.client import request_body
from snap_bench.design.models import REASONING_OFF, ModelSpec


def model_fields(model: ModelSpec) -> dict[str, Any]:
    """The request fields of ``model``'s entry beyond model, messages, temperature and max_tokens."""
    fields: dict[str, Any] = {}
    if model.reasoning is not None:
        fields["reasoning"] = {"effort": "none" if model.reasoning == REASONING_OFF else model.reasoning}
    if model.top_logprobs:
        fields["logprobs"] = True
        fields["top_logprobs"] = model.top_logprobs
    return fields


def condition_body(model: ModelSpec, messages: list[dict[str, str]], temperature: float, max_tokens: int) -> bytes:
    """The body sent for one condition: the entry's own ``max_tokens`` replaces the instrument's."""
    return request_body(model.provider_id, messages, temperature, model.max_tokens or max_tokens, model_fields(model))
