"""What each model's endpoint says of it, read once per session: its catalogue entry (the parameters it
takes, its price), and what follows for the session (a temperature it would drop, a price it lacks, an id
it does not serve).

The controller reads the catalogues (where a key is available) and hands the facts to the xdist workers;
beside a live model's recordings it keeps the entry it was recorded with (``endpoint.json``), so an offline
replay asks the same design the recording session asked.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snap_bench.asking.asker import Endpoint
from snap_bench.asking.catalogue import (
    Catalogue,
    CatalogueEntry,
    CatalogueUnavailable,
    read_catalogue,
    reads_catalogue,
    temperature_ignored,
)
from snap_bench.asking.credentials import api_key
from snap_bench.asking.stops import StopBoard
from snap_bench.design.models import ModelSpec
from snap_bench.wire.atomic import write_atomically

ENDPOINT_FILE = "endpoint.json"
WORKER_INPUT_KEY = "snap_model_facts"


@dataclass(frozen=True)
class ModelFacts:
    model: str
    entry: CatalogueEntry | None = None
    # Where the entry came from: "catalogue" (read this session), "recorded" (endpoint.json), or None.
    source: str | None = None
    # Why a temperature sent to the model would be dropped (it is then asked at the provider's default).
    temperature_ignored: str | None = None
    # The catalogue was read and does not list the model's id (retired, or never an id there).
    unknown_id: bool = False
    closest_ids: tuple[str, ...] = ()
    # The catalogue could not be read (what went wrong).
    unread: str | None = None

    def to_json(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        values["entry"] = None if self.entry is None else self.entry.to_json()
        values["closest_ids"] = list(self.closest_ids)
        return values

    @classmethod
    def from_json(cls, values: Mapping[str, Any]) -> ModelFacts:
        entry = values.get("entry")
        return cls(
            model=str(values["model"]),
            entry=None if entry is None else CatalogueEntry.from_json(entry),
            source=values.get("source"),
            temperature_ignored=values.get("temperature_ignored"),
            unknown_id=bool(values.get("unknown_id")),
            closest_ids=tuple(values.get("closest_ids") or ()),
            unread=values.get("unread"),
        )


def session_facts(config: Any, models: list[ModelSpec], rootdir: Path, cassette_dir: Path) -> dict[str, ModelFacts]:
    """The endpoints' catalogue entries: handed over by the controller to a worker, else read here (not for a
    look at the plan without a key, which reads the entries recorded beside the cassettes)."""
    handed = getattr(config, "workerinput", {}).get(WORKER_INPUT_KEY)
    if isinstance(handed, dict):
        return {name: ModelFacts.from_json(values) for name, values in handed.items()}
    return gather_facts(models, rootdir, cassette_dir, read=not config.option.collectonly)


def gather_facts(models: list[ModelSpec], rootdir: Path, cassette_dir: Path, *, read: bool) -> dict[str, ModelFacts]:
    """Each model's facts: from its endpoint's catalogue where ``read`` and a key allow, else from the
    entry recorded beside its cassettes, else none."""
    catalogues: dict[str, Catalogue | CatalogueUnavailable] = {}
    facts: dict[str, ModelFacts] = {}
    for model in models:
        key = api_key(model.api_key_env, rootdir / ".env")
        if read and reads_catalogue(model) and key is not None and model.base_url is not None:
            if model.base_url not in catalogues:
                try:
                    catalogues[model.base_url] = read_catalogue(model.base_url, key, model.dialect)
                except CatalogueUnavailable as error:
                    catalogues[model.base_url] = error
            found = catalogues[model.base_url]
            if isinstance(found, CatalogueUnavailable):
                facts[model.name] = _facts(model, None, None, unread=str(found))
                continue
            entry = found.entries.get(model.provider_id)
            if entry is None:
                closest = tuple(found.closest(model.provider_id))
                facts[model.name] = ModelFacts(model.name, unknown_id=True, closest_ids=closest)
                continue
            facts[model.name] = _facts(model, entry, "catalogue")
            _keep_beside_recordings(cassette_dir / model.name / ENDPOINT_FILE, entry)
            continue
        recorded = cassette_dir / model.name / ENDPOINT_FILE
        entry = _recorded_entry(recorded) if not model.is_local else None
        facts[model.name] = _facts(model, entry, "recorded" if entry is not None else None)
    return facts


def _facts(model: ModelSpec, entry: CatalogueEntry | None, source: str | None, unread: str | None = None) -> ModelFacts:
    return ModelFacts(model.name, entry, source, temperature_ignored(model, entry), unread=unread)


def with_catalogue_price(model: ModelSpec, facts: ModelFacts | None) -> ModelSpec:
    """The entry with the catalogue's price: the one read this session wins over models.yaml's (it is
    today's); one recorded beside the cassettes fills only a price models.yaml does not give."""
    if facts is None or facts.entry is None or facts.entry.price is None:
        return model
    if model.price is not None and facts.source != "catalogue":
        return model
    return dataclasses.replace(model, price=facts.entry.price)


def _recorded_entry(path: Path) -> CatalogueEntry | None:
    try:
        return CatalogueEntry.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _keep_beside_recordings(path: Path, entry: CatalogueEntry) -> None:
    text = json.dumps(entry.to_json(), indent=1, sort_keys=True) + "\n"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text.encode("utf-8"))


def notices(facts: Mapping[str, ModelFacts], default_everywhere: bool) -> list[str]:
    """What the terminal and the report say once about the catalogues' consequences."""
    lines = []
    for name, fact in sorted(facts.items()):
        if fact.temperature_ignored and not default_everywhere:
            lines.append(
                f"{name}: asked at the provider's default temperature (level tdefault), not at the design's "
                f"temperatures: {fact.temperature_ignored}"
            )
        if fact.unread:
            lines.append(
                f"{name}: the endpoint's catalogue could not be read ({fact.unread}); prices and "
                "supported parameters are models.yaml's"
            )
    return lines


def price_source(facts: ModelFacts | None, configured: ModelSpec | None) -> str:
    """Where a model's price comes from (the dry run says it beside its estimate)."""
    if facts is not None and facts.source == "catalogue" and facts.entry is not None and facts.entry.price:
        return "the endpoint's catalogue"
    if configured is not None and configured.price is not None:
        return "models.yaml"
    return "the catalogue entry recorded beside its cassettes"


def stop_unserved_models(
    models: list[ModelSpec], facts: Mapping[str, ModelFacts], endpoints: Mapping[str, Endpoint], board: StopBoard
) -> None:
    """A live model whose endpoint's catalogue lists no such id is stopped before its first request."""
    for model in models:
        fact, endpoint = facts.get(model.name), endpoints.get(model.name)
        if fact is not None and fact.unknown_id and endpoint is not None and endpoint.live:
            said = f"the endpoint's catalogue lists no model {model.provider_id!r}"
            board.stop(endpoint.stop_request(b"{}"), "model", said)


def cost_limit_problem(
    max_cost_usd: float | None, models: list[ModelSpec], endpoints: Mapping[str, Endpoint]
) -> str | None:
    """--snap-max-cost holds only where each request's worst case is known: a price for every live model."""
    if max_cost_usd is None:
        return None
    unpriced = [
        model.name
        for model in models
        if model.price is None and not model.is_local and model.name in endpoints and endpoints[model.name].live
    ]
    if not unpriced:
        return None
    return (
        f"--snap-max-cost={max_cost_usd:g} cannot be held for {', '.join(unpriced)}: no price in models.yaml and "
        "none from the endpoint's catalogue. Fix: add price: {input_per_million: X, output_per_million: Y} to "
        "the entry, or run without --snap-max-cost."
    )
