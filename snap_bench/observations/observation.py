"""The two records the experiment is made of: a Condition to ask, and the Observation it produced."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from snap_bench.design.temperatures import DEFAULT_LEVEL
from snap_bench.observations.parsing import AnswerCode


@dataclass(frozen=True)
class Scored:
    """An answer scored by an instrument: the raw score, the score the analysis uses, and why."""

    score: int | None
    keyed_score: float | None
    code: AnswerCode | None
    reason: str
    construct: str | None
    # Facts about the answer particular to the instrument (e.g. "no_opinion"), kept in Observation.extra.
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Condition:
    """One cell of the design for one run, e.g. ``M01-P2-NEU-t0.5-C1-r3``.

    ``levels`` keeps the factors in the order they appear in the id, so the id is derived, never
    stored twice. The temperature is both a level (``t0.5``) and the number sent to the model; None
    (level ``tdefault``) sends none, leaving it to the provider.
    """

    instrument: str
    item: str
    levels: tuple[tuple[str, str], ...]
    temperature: float | None
    run: int

    @property
    def id(self) -> str:
        return "-".join([self.item, *(level for _, level in self.levels), f"r{self.run}"])

    @property
    def cell(self) -> str:
        """The id without the run: the unit that test-retest statistics compare across runs."""
        return "-".join([self.item, *(level for _, level in self.levels)])

    def at_provider_default(self) -> Condition:
        """This condition with its temperature left to the provider (level ``tdefault``)."""
        levels = tuple((f, DEFAULT_LEVEL if f == "temperature" else level) for f, level in self.levels)
        return dataclasses.replace(self, levels=levels, temperature=None)

    def level(self, factor: str) -> str:
        for name, level in self.levels:
            if name == factor:
                return level
        raise KeyError(f"condition {self.id} has no factor {factor!r}")


def at_provider_default(conditions: Iterable[Condition]) -> list[Condition]:
    """The conditions of a model that takes no temperature: each at the provider's default, and those
    that differed only in temperature merged into one (the first kept)."""
    kept: dict[str, Condition] = {}
    for condition in conditions:
        collapsed = condition.at_provider_default()
        kept.setdefault(collapsed.id, collapsed)
    return list(kept.values())


@dataclass(frozen=True, slots=True)
class Observation:
    """What one test recorded: the condition, what was sent, what came back and how it scored.

    ``score`` is the parsed answer as the model gave it; ``keyed_score`` is the score the analysis
    uses (reversed for reverse-keyed items). ``code`` is None for a valid answer, else -1 refusal,
    -2 invalid, -3 API error or timeout.
    """

    model: str
    instrument: str
    condition_id: str
    cell: str
    item: str
    factors: dict[str, str]
    temperature: float | None
    run: int
    messages: list[dict[str, str]]
    raw_answer: str | None
    score: int | None
    keyed_score: float | None
    code: int | None
    reason: str
    construct: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    attempts: int = 1
    replayed: bool = False
    reasoning_tokens: int | None = None
    # The answer tokens' log-probabilities where the endpoint gave them (snap_bench.observations.logprobs), else None.
    logprobs: dict[str, Any] | None = None
    timestamp: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # Who served the answer, as the response names it (OpenRouter load-balances a model over providers).
    provider: str | None = None
    served_model: str | None = None
    system_fingerprint: str | None = None
    # What the endpoint billed for this condition (usage.cost, every attempt), where it said.
    cost_usd: float | None = None
    # The endpoint replayed an earlier response from its cache: a repetition that measured nothing.
    cache_hit: bool = False
    # The reasoning effort asked (models.yaml `reasoning`), None where none was asked.
    reasoning_effort: str | None = None
    # The attempts answered with a 200, what the endpoint bills (of ``attempts``, refused ones are not);
    # None where not counted (observations written before it was).
    billed_requests: int | None = None

    @property
    def is_scored(self) -> bool:
        return self.code is None

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain JSON values (what asdict gives, without its deep copy of every leaf:
        it was a tenth of a replay's time, since each observation is turned into a dict twice)."""
        return {name: _plain(getattr(self, name)) for name in _FIELD_NAMES}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Observation:
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in values.items() if key in known})


_FIELD_NAMES = tuple(f.name for f in fields(Observation))


def _plain(value: Any) -> Any:
    """A copy of the containers of a JSON-like value (so the dict never aliases the observation's)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    return value


# Columns of the flat CSV export; nested fields (messages, factors, extra) are spread or JSON-encoded.
CSV_COLUMNS = (
    "model",
    "instrument",
    "condition_id",
    "cell",
    "item",
    "construct",
    "temperature",
    "run",
    "score",
    "keyed_score",
    "code",
    "reason",
    "raw_answer",
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "attempts",
    "replayed",
    "timestamp",
    "provider",
    "served_model",
    "system_fingerprint",
    "cost_usd",
    "cache_hit",
    "reasoning_effort",
)
