"""The body sent for one condition: the entry's own output budget replaces the instrument's, in the
dialect of the entry's endpoint (snap_bench.asking.dialects)."""

from __future__ import annotations

from snap_bench.asking.dialects import encode, request_payload
from snap_bench.design.models import ModelSpec


def condition_body(
    model: ModelSpec, messages: list[dict[str, str]], temperature: float | None, max_tokens: int
) -> bytes:
    return encode(request_payload(model, messages, temperature, model.max_tokens or max_tokens))
