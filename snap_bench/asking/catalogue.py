"""An endpoint's model catalogue (``GET {base_url}/models``): which ids it serves, the parameters each takes
and what each costs, read once per session where a key is available.

OpenRouter lists per model its ``supported_parameters`` and its ``pricing`` (USD per token, as strings);
OpenAI lists only the ids. What the catalogue does not say is None, never guessed.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

import httpx

from snap_bench.design.models import OPENAI, OPENROUTER, ModelSpec, Price
from snap_bench.wire.dialects import dialect_named

TEMPERATURE = "temperature"


@dataclass(frozen=True)
class CatalogueEntry:
    id: str
    # None: the catalogue does not say which parameters the model takes (OpenAI's does not).
    supported_parameters: tuple[str, ...] | None
    price: Price | None

    def to_json(self) -> dict[str, Any]:
        price = self.price
        return {
            "id": self.id,
            "supported_parameters": None if self.supported_parameters is None else list(self.supported_parameters),
            "price": None
            if price is None
            else {"input_per_million": price.input_per_million, "output_per_million": price.output_per_million},
        }

    @classmethod
    def from_json(cls, values: dict[str, Any]) -> CatalogueEntry:
        params, price = values.get("supported_parameters"), values.get("price")
        return cls(
            id=str(values["id"]),
            supported_parameters=None if params is None else tuple(str(p) for p in params),
            price=None if not price else Price(float(price["input_per_million"]), float(price["output_per_million"])),
        )


@dataclass(frozen=True)
class Catalogue:
    base_url: str
    entries: dict[str, CatalogueEntry]

    def closest(self, model_id: str, count: int = 3) -> list[str]:
        """The current ids nearest to ``model_id`` (a retired or misspelt one), best first."""
        return difflib.get_close_matches(model_id, list(self.entries), n=count, cutoff=0.5)

    def to_json(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "models": [entry.to_json() for entry in self.entries.values()]}

    @classmethod
    def from_json(cls, values: dict[str, Any]) -> Catalogue:
        entries = [CatalogueEntry.from_json(entry) for entry in values.get("models", [])]
        return cls(str(values["base_url"]), {entry.id: entry for entry in entries})


def reads_catalogue(model: ModelSpec) -> bool:
    """Whether the model's endpoint has a catalogue worth reading (OpenRouter's and OpenAI's have)."""
    return model.dialect in (OPENROUTER, OPENAI) and not model.is_local


def read_catalogue(base_url: str, api_key: str | None, timeout_s: float = 30.0) -> Catalogue:
    """``GET {base_url}/models``; raises CatalogueUnavailable with what went wrong."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = f"{base_url.rstrip('/')}/models"
    try:
        response = httpx.get(url, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as error:
        raise CatalogueUnavailable(f"{url}: {type(error).__name__}: {error}") from None
    if response.status_code != 200:
        raise CatalogueUnavailable(f"{url}: HTTP {response.status_code}")
    try:
        data = response.json()["data"]
        entries = [_entry(item) for item in data]
    except (ValueError, KeyError, TypeError) as error:
        raise CatalogueUnavailable(f"{url}: not a model list ({type(error).__name__}: {error})") from None
    return Catalogue(base_url.rstrip("/"), {entry.id: entry for entry in entries})


class CatalogueUnavailable(Exception):
    """The catalogue could not be read: the session goes on without what it would have said."""


def _entry(item: dict[str, Any]) -> CatalogueEntry:
    params = item.get("supported_parameters")
    pricing = item.get("pricing")
    price = None
    if isinstance(pricing, dict) and "prompt" in pricing and "completion" in pricing:
        # USD per token as decimal strings; the price table is per million tokens.
        price = Price(float(pricing["prompt"]) * 1e6, float(pricing["completion"]) * 1e6)
    return CatalogueEntry(
        id=str(item["id"]),
        supported_parameters=tuple(str(p) for p in params) if isinstance(params, list) else None,
        price=price,
    )


def temperature_ignored(model: ModelSpec, entry: CatalogueEntry | None) -> str | None:
    """Why a temperature sent to ``model`` would not be applied, or None where it would be.

    OpenRouter passes a provider only the parameters it supports (the rest are dropped); the dialect says the
    rest (OpenAI's reasoning models take a temperature only at reasoning effort ``none``, Anthropic's none but 1
    with thinking on).
    """
    if entry is not None and entry.supported_parameters is not None and TEMPERATURE not in entry.supported_parameters:
        return f"the endpoint's catalogue lists no temperature among {model.provider_id}'s supported parameters"
    own_rule = dialect_named(model.dialect).temperature_ignored(model)
    if own_rule is not None:
        return own_rule
    if not model.takes_temperature and (entry is None or entry.supported_parameters is None):
        # The catalogue, where read, is today's word and wins; this is models.yaml's, for a session without it.
        return "its models.yaml entry says takes_temperature: false (the endpoint's catalogue was not read)"
    return None


def dumps(catalogue: Catalogue) -> str:
    return json.dumps(catalogue.to_json(), sort_keys=True)
