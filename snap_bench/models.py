"""The models a session can ask: config/models.yaml read into typed entries."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from snap_bench.config import ConfigError, Node, load_yaml
from snap_bench.local_model import LocalWeights

OPENROUTER_URL = "https://openrouter.ai/api/v1"
MODELS_FILE = "models.yaml"


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input_per_million: float
    output_per_million: float


@dataclass(frozen=True)
class ModelSpec:
    """One entry of models.yaml.

    ``name`` is what users type (``--model=gpt-5.2``) and what cassette folders are called;
    ``provider_id`` is what the endpoint calls the model. A local entry has ``weights`` and no
    ``base_url``: its server is started by the session when something has to be recorded.
    """

    name: str
    label: str
    provider_id: str
    tier: str
    base_url: str | None
    api_key_env: str | None
    price: Price | None
    weights: LocalWeights | None
    rate_limit_per_minute: float | None = None
    # Requests in flight at once for this model across the session's processes (None: one per process).
    concurrency: int | None = None

    @property
    def is_local(self) -> bool:
        return self.weights is not None


@dataclass(frozen=True)
class ModelRegistry:
    models: dict[str, ModelSpec]
    pilot: tuple[str, ...]
    source: Path

    def resolve(self, names: list[str]) -> list[ModelSpec]:
        """Look names up; an unknown one is a ConfigError listing the known names."""
        unknown = [name for name in names if name not in self.models]
        if unknown:
            raise ConfigError(
                self.source,
                "models",
                f"unknown model {', '.join(map(repr, unknown))}",
                f"use one of: {', '.join(sorted(self.models))}, or add an entry to {self.source.name}",
            )
        return [self.models[name] for name in names]


def load_models(config_dir: Path) -> ModelRegistry:
    document = load_yaml(config_dir / MODELS_FILE)
    defaults = document.get("defaults", {})
    default_url = defaults.get("base_url", OPENROUTER_URL).text()
    default_key_env = defaults.get("api_key_env", "OPENROUTER_API_KEY").optional_text()
    default_rate = defaults.get("rate_limit_per_minute", None)
    default_concurrency = defaults.get("concurrency", None)

    models: dict[str, ModelSpec] = {}
    for name, entry in document.get("models").items():
        models[name] = _model(name, entry, default_url, default_key_env, default_rate, default_concurrency)
    if not models:
        raise document.get("models").error("no models", "add at least one entry")

    pilot_node = document.get("pilot", [])
    pilot = tuple(pilot_node.unique_texts()) if pilot_node.value else ()
    for element in pilot_node.elements() if pilot_node.value else []:
        if element.value not in models:
            raise element.error(
                f"pilot model {element.value!r} is not under models", "name a model listed under models"
            )
    return ModelRegistry(models=models, pilot=pilot, source=config_dir / MODELS_FILE)


def _model(
    name: str, entry: Node, default_url: str, default_key_env: str | None, default_rate: Node, default_concurrency: Node
) -> ModelSpec:
    if not name.replace("-", "").replace(".", "").replace("_", "").isalnum():
        raise entry.error(
            f"model name {name!r} has characters unfit for a folder or a test id",
            "use letters, digits, '-', '.' and '_' only",
        )
    weights = _weights(entry.get("local")) if entry.has("local") else None
    price = None
    if entry.has("price"):
        price_node = entry.get("price")
        price = Price(
            input_per_million=price_node.get("input_per_million").number(0, 10_000, "price"),
            output_per_million=price_node.get("output_per_million").number(0, 10_000, "price"),
        )
    return ModelSpec(
        name=name,
        label=entry.get("label", name).text(),
        provider_id=entry.get("id", name).text(),
        tier=entry.get("tier", "unspecified").text(),
        base_url=None if weights else entry.get("base_url", default_url).text().rstrip("/"),
        api_key_env=None if weights else entry.get("api_key_env", default_key_env).optional_text(),
        price=price,
        weights=weights,
        rate_limit_per_minute=_rate(
            entry.get("rate_limit_per_minute", None) if entry.has("rate_limit_per_minute") else default_rate
        ),
        concurrency=_concurrency(entry.get("concurrency", None) if entry.has("concurrency") else default_concurrency),
    )


def _rate(node: Node) -> float | None:
    return None if node.value is None else node.number(0.001, 1_000_000, "rate limit (requests per minute)")


def _concurrency(node: Node) -> int | None:
    if node.value is None:
        return None
    value = node.number(1, 10_000, "concurrency (requests in flight at once)")
    if value != int(value):
        raise node.error(f"concurrency {value!r} is not a whole number", "give a whole number of requests, e.g. 8")
    return int(value)


def _weights(node: Node) -> LocalWeights:
    sha256 = node.get("sha256").text().lower()
    if len(sha256) != 64 or any(char not in "0123456789abcdef" for char in sha256):
        raise node.get("sha256").error("not a sha256 digest", "give the 64 hex digits of the weights file")
    try:
        return _local_weights(node, sha256)
    except ValueError as error:
        raise node.error(str(error), "give either module + file, or parts + file (see the shipped entries)") from None


def _local_weights(node: Node, sha256: str) -> LocalWeights:
    if node.has("parts"):
        return LocalWeights(
            requirement=node.get("requirement").text(),
            sha256=sha256,
            part_modules=tuple(node.get("parts").unique_texts()),
            joined_name=node.get("file").text(),
        )
    return LocalWeights(
        requirement=node.get("requirement").text(),
        sha256=sha256,
        module=node.get("module").text(),
        file=node.get("file").text(),
    )
