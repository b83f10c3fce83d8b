"""The request of one condition, built once: the messages, the body's exact bytes and where it goes.

The asker sends these bytes, the recordings look them up, a stale recording is judged against them, and
asking ahead records them, so a request that one of them would build differently from another cannot
exist. The entry's own output budget replaces the instrument's, in the dialect of the entry's endpoint
(:mod:`snap_bench.wire.dialects`), which also says where the request goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from snap_bench.providers import PLAIN
from snap_bench.providers.openai_chat import chat_url
from snap_bench.wire.dialects import dialect_named, encode

if TYPE_CHECKING:
    from snap_bench.design.models import ModelSpec
    from snap_bench.observations.observation import Condition

METHOD = "POST"


class Asked(Protocol):
    """What renders a condition into messages (every Instrument does)."""

    @property
    def name(self) -> str: ...

    max_tokens: int

    def messages(self, condition: Condition) -> list[dict[str, str]]: ...


@dataclass(frozen=True)
class ConditionRequest:
    """What is sent for one condition of one model, and what its recording is filed under."""

    model: str
    instrument: str
    condition_id: str
    messages: list[dict[str, str]]
    # The endpoint as the recordings name it (a local server's fixed URL, whatever its port).
    uri: str
    body: bytes
    # The output budget asked for (thinking's included where the dialect adds it): the most one answer can cost.
    max_tokens: int
    # The dialect it is written in, which the reply is read in.
    dialect: str = PLAIN


def condition_request(model: ModelSpec, url: str, instrument: Asked, condition: Condition) -> ConditionRequest:
    """``condition`` of ``instrument`` as sent to ``model`` at ``url`` (the model's canonical base URL)."""
    messages = instrument.messages(condition)
    max_tokens = model.max_tokens or instrument.max_tokens
    dialect = dialect_named(model.dialect)
    body = encode(dialect.payload(model, messages, condition.temperature, max_tokens))
    uri = dialect.url(url, model.provider_id)
    sent_budget = dialect.output_budget(model, max_tokens)
    return ConditionRequest(
        model.name, instrument.name, condition.id, messages, uri, body, sent_budget, dialect=dialect.name
    )


def chat_uri(base_url: str) -> str:
    """Where a chat request to ``base_url`` goes in the OpenAI chat dialects."""
    return chat_url(base_url)
