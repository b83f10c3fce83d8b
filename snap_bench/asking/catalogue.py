"""An endpoint's model catalogue: which ids it serves, the parameters each takes and what each costs, read once
per session where a key is available, in the format of its provider (``Provider.catalogue``).

OpenRouter lists per model its ``supported_parameters`` and its ``pricing``; OpenAI lists only the ids. What the
catalogue does not say is None, never guessed.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

import httpx

from snap_bench.design.models import ModelSpec, Price
from snap_bench.providers import provider_named
from snap_bench.providers.base import Listed

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
    """Whether the model's endpoint has a catalogue worth reading (its provider has one: OpenRouter's and OpenAI's)."""
    return provider_named(model.dialect).catalogue is not None and not model.is_local


def read_catalogue(base_url: str, api_key: str | None, provider: str, timeout_s: float = 30.0) -> Catalogue:
    """The catalogue of ``provider`` at ``base_url``; raises CatalogueUnavailable with what went wrong."""
    reader = provider_named(provider).catalogue
    if reader is None:
        raise CatalogueUnavailable(f"{provider} has no catalogue")
    headers = reader.headers(api_key)
    url = reader.url(base_url)
    try:
        response = httpx.get(url, headers=headers, timeout=timeout_s)
    except httpx.HTTPError as error:
        raise CatalogueUnavailable(f"{url}: {type(error).__name__}: {error}") from None
    if response.status_code != 200:
        raise CatalogueUnavailable(f"{url}: HTTP {response.status_code}")
    try:
        entries = [_entry(listed) for listed in reader.models(response.json())]
    except (ValueError, KeyError, TypeError) as error:
        raise CatalogueUnavailable(f"{url}: not a model list ({type(error).__name__}: {error})") from None
    return Catalogue(base_url.rstrip("/"), {entry.id: entry for entry in entries})


class CatalogueUnavailable(Exception):
    """The catalogue could not be read: the session goes on without what it would have said."""


def _entry(listed: Listed) -> CatalogueEntry:
    price = None
    if listed.input_per_million is not None and listed.output_per_million is not None:
        price = Price(listed.input_per_million, listed.output_per_million)
    return CatalogueEntry(id=listed.id, supported_parameters=listed.supported_parameters, price=price)


def temperature_ignored(model: ModelSpec, entry: CatalogueEntry | None) -> str | None:
    """Why a temperature sent to ``model`` would not be applied, or None where it would be.

    OpenRouter passes a provider only the parameters it supports (the rest are dropped); the dialect says the
    rest (OpenAI's reasoning models take a temperature only at reasoning effort ``none``, Anthropic's none but 1
    with thinking on).
    """
    if entry is not None and entry.supported_parameters is not None and TEMPERATURE not in entry.supported_parameters:
        return f"the endpoint's catalogue lists no temperature among {model.provider_id}'s supported parameters"
    own_rule = provider_named(model.dialect).temperature_ignored(model)
    if own_rule is not None:
        return own_rule
    if not model.takes_temperature and (entry is None or entry.supported_parameters is None):
        # The catalogue, where read, is today's word and wins; this is models.yaml's, for a session without it.
        return "its models.yaml entry says takes_temperature: false (the endpoint's catalogue was not read)"
    return None


def dumps(catalogue: Catalogue) -> str:
    return json.dumps(catalogue.to_json(), sort_keys=True)
