"""The models a session can ask: the packaged models.yaml, extended by a project's config/models.yaml, read into
typed entries."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from snap_bench.design.config import MODELS_FILE, ConfigError, ConfigFiles, Node, known_keys, load_yaml
from snap_bench.design.entry_values import (
    concurrency_setting,
    effort_levels_setting,
    provider_levels_setting,
    rate_setting,
    reasoning_setting,
    top_logprobs_setting,
    weights_setting,
)
from snap_bench.design.local_weights import LocalWeights
from snap_bench.providers import (
    ProviderError,
    anthropic,
    gemini,
    openai,
    openai_compatible,
    openrouter,
    provider_names,
    provider_of_url,
    registered,
)

# The default provider (models.yaml's defaults as shipped), and the providers' names an entry's dialect: takes
# (snap_bench.providers: one module per provider, registered through an entry point).
OPENROUTER_URL = openrouter.BASE_URL
OPENROUTER_KEY_ENV = openrouter.KEY_ENV
# How a request is written and a reply read: OpenRouter's API, OpenAI's own, or a plain OpenAI-compatible
# server (vLLM, llama.cpp, Ollama) that gets today's bodies unchanged, so their recordings still match.
OPENROUTER, OPENAI, OPENAI_COMPATIBLE = openrouter.NAME, openai.NAME, openai_compatible.NAME
# Providers' own APIs: Anthropic's Messages API and Gemini's generateContent.
ANTHROPIC, GEMINI = anthropic.NAME, gemini.NAME


# The keys of OpenRouter's provider routing object (its documentation's features/provider-routing page).
ROUTING_KEYS = (
    "order",
    "only",
    "ignore",
    "allow_fallbacks",
    "require_parameters",
    "data_collection",
    "zdr",
    "enforce_distillable_text",
    "quantizations",
    "sort",
    "max_price",
)


# What a models.yaml may hold: a key outside these is a typo, never silently left unread (a misspelt
# api_key_env would otherwise fall back to the default key variable).
TOP_KEYS = ("defaults", "pilot", "models")
DEFAULT_KEYS = ("base_url", "api_key_env", "rate_limit_per_minute", "concurrency")
ENTRY_KEYS = (
    "id",
    "label",
    "tier",
    "base_url",
    "api_key_env",
    "dialect",
    "provider",
    "price",
    "rate_limit_per_minute",
    "concurrency",
    "max_tokens",
    "reasoning",
    "logprobs",
    "takes_temperature",
    "stands_for",
    "retired",
    "local",
    "providers",
    "reasoning_efforts",
)
PRICE_KEYS = ("input_per_million", "output_per_million")
RETIRED_KEYS = ("date", "successor")
# Ports a URL without one uses: https://example.org and https://example.org:443 are one host.
_DEFAULT_PORTS = {"https": 443, "http": 80}


def host_of(url: str) -> str:
    """Where a request to ``url`` goes: its host, and its port when not the scheme's own."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # a malformed port: compared as written
        return parts.netloc.rpartition("@")[2].lower()
    host = (parts.hostname or "").lower()
    return host if port is None or port == _DEFAULT_PORTS.get(parts.scheme) else f"{host}:{port}"


def dialect_of(base_url: str | None) -> str:
    """The dialect a base URL speaks: its registered provider's by host, anything else plain."""
    return provider_of_url(base_url).name


@dataclass(frozen=True)
class Retirement:
    """A model its vendor no longer serves: when, and the entry that succeeds it in models.yaml."""

    date: str
    successor: str | None


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
    # A reasoning model's effort (REASONING_EFFORTS below, or "off"), its own output
    # budget (reasoning tokens count toward it), and how many log-probabilities per token to ask for.
    reasoning: str | None = None
    max_tokens: int | None = None
    top_logprobs: int | None = None
    dialect: str = OPENAI_COMPATIBLE
    # OpenRouter's provider routing object, sent verbatim (require_parameters is always added).
    routing: dict[str, Any] | None = None
    # Which model of the original designs this entry stands for (they named models that are retired now).
    stands_for: str | None = None
    retired: Retirement | None = None
    # models.yaml `takes_temperature: false`: the endpoint is known to drop a temperature (read where its
    # catalogue cannot be, so that a look at the plan without a key counts the temperatures really asked).
    takes_temperature: bool = True
    # The serving factors' levels its entry asks for (models.yaml `providers:` / `reasoning_efforts:`): the session
    # asks each crossing as a serving of its own (snap_bench.design.serving_entries); a serving itself has none.
    providers: tuple[str, ...] = ()
    reasoning_efforts: tuple[str, ...] = ()

    @property
    def is_local(self) -> bool:
        return self.weights is not None


@dataclass(frozen=True)
class ModelRegistry:
    models: dict[str, ModelSpec]
    pilot: tuple[str, ...]
    source: Path
    # Where an entry-less `openrouter:vendor/model` goes: models.yaml's defaults (OpenRouter as shipped).
    default_base_url: str = OPENROUTER_URL
    default_key_env: str | None = OPENROUTER_KEY_ENV
    default_rate_limit: float | None = None
    # The file each entry was read from (the packaged models.yaml or the project's own).
    sources: dict[str, Path] = field(default_factory=dict)

    def resolve(self, names: list[str]) -> list[ModelSpec]:
        """Look names up (``openrouter:vendor/model`` needs no entry); an unknown one is a ConfigError."""
        unknown = [name for name in names if name not in self.models and not name.startswith(ADHOC_PREFIX)]
        retired = [self.models[name] for name in names if name in self.models and self.models[name].retired]
        if retired:
            where = self.sources.get(retired[0].name, self.source)
            raise ConfigError(where, f"models.{retired[0].name}.retired", *_retired_problem(retired[0]))
        if unknown:
            raise ConfigError(
                self.source,
                "models",
                f"unknown model {', '.join(map(repr, unknown))}",
                f"use one of: {', '.join(sorted(n for n, m in self.models.items() if not m.retired))}, "
                f"add an entry to {self.source.name}, "
                f"or name any OpenRouter model as {ADHOC_PREFIX}vendor/model-id",
            )
        return [self.models[name] if name in self.models else self.adhoc(name) for name in names]

    def adhoc(self, name: str) -> ModelSpec:
        """The entry an ``openrouter:vendor/model-id`` stands for: models.yaml's default endpoint, key and
        rate limit, no price, the instruments' own output budget; recorded under cassettes/vendor--model-id/."""
        provider_id = name.removeprefix(ADHOC_PREFIX)
        if not _ADHOC_ID.fullmatch(provider_id):
            raise ConfigError(
                self.source,
                "models",
                f"{name!r} is not an OpenRouter model id",
                f"write {ADHOC_PREFIX}vendor/model-id as OpenRouter names it (e.g. {ADHOC_PREFIX}openai/gpt-5.2)",
            )
        return ModelSpec(
            name=provider_id.replace("/", "--").replace(":", "_"),
            label=provider_id,
            provider_id=provider_id,
            tier="ad hoc",
            base_url=self.default_base_url,
            api_key_env=self.default_key_env,
            price=None,
            weights=None,
            rate_limit_per_minute=self.default_rate_limit,
            dialect=dialect_of(self.default_base_url),
        )


def _retired_problem(model: ModelSpec) -> tuple[str, str]:
    retirement = model.retired
    assert retirement is not None  # only called for retired entries
    problem = f"{model.name} ({model.provider_id}) was retired by its vendor ({retirement.date})"
    if retirement.successor:
        return problem, f"ask its successor in this file instead: --model={retirement.successor}"
    return problem, "choose a current model (snap-bench --help lists none; see the file's entries)"


# `--model=openrouter:vendor/model-id` asks that OpenRouter model without an entry in models.yaml.
ADHOC_PREFIX = "openrouter:"
_ADHOC_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._:-]*")


def load_models(config: ConfigFiles) -> ModelRegistry:
    """The packaged models.yaml extended by the project's own: the project's entries win by name (an entry
    is replaced whole), its ``defaults`` are merged key by key over the packaged ones and apply to every
    entry, and its ``pilot``, when given, replaces the packaged one. Every error names the file it read."""
    try:
        registered()
    except ProviderError as error:  # a team's provider that cannot be registered: named, never a traceback
        raise ConfigError(error.where, "", error.problem, error.fix) from None
    documents = [load_yaml(config.packaged / MODELS_FILE)]
    own = config.own(MODELS_FILE)
    if own is not None:
        documents.append(load_yaml(own))
    defaults: dict[str, Node] = {}
    entries: dict[str, Node] = {}
    pilot_node: Node | None = None
    # The base_url in effect where the default key variable was named: the host that key belongs to.
    key_url: Node | None = None
    for document in documents:
        known_keys(document, TOP_KEYS)
        document_defaults = _entries(document.get("defaults", None))
        if document_defaults:
            known_keys(document.get("defaults"), DEFAULT_KEYS)
        defaults.update(document_defaults)
        if any(name == "api_key_env" for name, _ in document_defaults):
            key_url = defaults.get("base_url")
        entries.update(_entries(document.get("models", None)))
        if document.has("pilot"):
            pilot_node = document.get("pilot")

    def default(name: str, fallback: Any) -> Node:
        return defaults.get(name) or Node(fallback, documents[0].path, f"defaults.{name}")

    default_url = default("base_url", OPENROUTER_URL).text()
    default_key_env = default("api_key_env", OPENROUTER_KEY_ENV).optional_text()
    default_rate = default("rate_limit_per_minute", None)
    default_concurrency = default("concurrency", None)
    key_host = host_of((key_url or default("base_url", OPENROUTER_URL)).text())
    if default_key_env is not None and host_of(default_url) != key_host:
        # A project's defaults moved the endpoint and kept the packaged key variable: every entry would send
        # that provider's key to the new host.
        raise default("base_url", OPENROUTER_URL).error(
            f"{default_key_env}, the key variable of {key_host}, would be sent to {host_of(default_url)}",
            "name its key variable with api_key_env: under defaults (null for a server that needs no key)",
        )

    models: dict[str, ModelSpec] = {}
    for name, entry in entries.items():
        models[name] = _model(name, entry, default_url, (default_key_env, key_host), default_rate, default_concurrency)
    if not models:
        raise documents[-1].get("models", None).error("no models", "add at least one entry")

    for name, model in models.items():
        successor = model.retired.successor if model.retired else None
        if successor is not None and successor not in models:
            raise (
                entries[name]
                .get("retired")
                .get("successor")
                .error(f"successor {successor!r} is not under models", "name an entry of models.yaml")
            )

    pilot: tuple[str, ...] = ()
    if pilot_node is not None and pilot_node.value:
        pilot = tuple(pilot_node.unique_texts())
        for element in pilot_node.elements():
            if element.value not in models:
                raise element.error(
                    f"pilot model {element.value!r} is not under models", "name a model listed under models"
                )
    return ModelRegistry(
        models=models,
        pilot=pilot,
        source=config.folder / MODELS_FILE,
        default_base_url=default_url.rstrip("/"),
        default_key_env=default_key_env,
        default_rate_limit=rate_setting(default_rate),
        sources={name: entry.path for name, entry in entries.items()},
    )


def _entries(node: Node) -> list[tuple[str, Node]]:
    """The keys of a mapping that may be left empty (``defaults:`` with every line commented out)."""
    return [] if node.value is None else list(node.items())


def _model(
    name: str,
    entry: Node,
    default_url: str,
    default_key: tuple[str | None, str],
    default_rate: Node,
    default_concurrency: Node,
) -> ModelSpec:
    """One entry; ``default_key`` is the default key variable and the host it belongs to."""
    if not name.replace("-", "").replace(".", "").replace("_", "").isalnum():
        raise entry.error(
            f"model name {name!r} has characters unfit for a folder or a test id",
            "use letters, digits, '-', '.' and '_' only",
        )
    known_keys(entry, ENTRY_KEYS)
    default_key_env, key_host = default_key
    weights = weights_setting(entry.get("local")) if entry.has("local") else None
    price = None
    if entry.has("price"):
        price_node = entry.get("price")
        known_keys(price_node, PRICE_KEYS)
        price = Price(
            input_per_million=price_node.get("input_per_million").number(0, 10_000, "price"),
            output_per_million=price_node.get("output_per_million").number(0, 10_000, "price"),
        )
    # An entry that names a provider's own dialect but no endpoint or key goes to that provider with its key.
    native = _own_endpoint(entry.get("dialect").value) if entry.has("dialect") else None
    if native is not None:
        default_url, default_key_env, key_host = native
    base_url = None if weights else entry.get("base_url", default_url).text().rstrip("/")
    dialect = entry.get("dialect").choice(provider_names()) if entry.has("dialect") else dialect_of(base_url)
    has = entry.has
    if native is None and not entry.has("api_key_env") and base_url is not None:
        # A base_url on a provider's own host (no dialect:) asks with that provider's key, not OpenRouter's.
        by_host = _own_endpoint(dialect_of(base_url))
        if by_host is not None:
            _url, default_key_env, key_host = by_host
    if base_url is not None and not entry.has("api_key_env") and default_key_env is not None:
        _key_stays_home(entry.get("base_url", default_url), base_url, default_key_env, key_host)
    return ModelSpec(
        name=name,
        label=entry.get("label", name).text(),
        provider_id=entry.get("id", name).text(),
        tier=entry.get("tier", "unspecified").text(),
        base_url=base_url,
        api_key_env=None if weights else entry.get("api_key_env", default_key_env).optional_text(),
        price=price,
        weights=weights,
        rate_limit_per_minute=rate_setting(
            entry.get("rate_limit_per_minute", None) if entry.has("rate_limit_per_minute") else default_rate
        ),
        concurrency=concurrency_setting(
            entry.get("concurrency", None) if entry.has("concurrency") else default_concurrency
        ),
        reasoning=reasoning_setting(entry.get("reasoning")) if entry.has("reasoning") else None,
        max_tokens=entry.get("max_tokens").integer(1, 1_000_000) if entry.has("max_tokens") else None,
        top_logprobs=top_logprobs_setting(entry.get("logprobs")) if entry.has("logprobs") else None,
        dialect=dialect,
        routing=_routing(entry.get("provider")) if entry.has("provider") else None,
        stands_for=entry.get("stands_for").text() if entry.has("stands_for") else None,
        retired=_retirement(entry.get("retired")) if entry.has("retired") else None,
        takes_temperature=entry.get("takes_temperature").boolean() if entry.has("takes_temperature") else True,
        providers=provider_levels_setting(entry.get("providers"), dialect, OPENROUTER) if has("providers") else (),
        reasoning_efforts=effort_levels_setting(entry.get("reasoning_efforts")) if has("reasoning_efforts") else (),
    )


def _own_endpoint(name: object) -> tuple[str, str, str] | None:
    """(base URL, key variable, host) of a provider with an API of its own that an entry naming its dialect alone
    is sent to (Anthropic's, Gemini's), or None."""
    provider = registered().get(name) if isinstance(name, str) else None
    if provider is None or not provider.own_endpoint or None in (provider.base_url, provider.key_env, provider.host):
        return None
    return str(provider.base_url), str(provider.key_env), str(provider.host)


def _key_stays_home(node: Node, base_url: str, key_env: str, key_host: str) -> None:
    """A key variable the entry does not name is a provider's (or the defaults'): it goes to that host only.
    Elsewhere the entry names its own, so that no typo or copied base_url sends a provider's key away."""
    if host_of(base_url) != key_host:
        raise node.error(
            f"the entry names no key variable, and the default one ({key_env}) is {key_host}'s key: it would be "
            f"sent to {host_of(base_url)}",
            "name its key variable with api_key_env: (null for a server that needs no key)",
        )


def _routing(node: Node) -> dict[str, Any]:
    """models.yaml `provider:`, OpenRouter's routing object: its keys checked (a typo would be ignored by the
    provider, silently routing elsewhere), its values sent as written."""
    if not isinstance(node.value, dict):
        raise node.error("not a mapping", "write provider: {order: [OpenAI], allow_fallbacks: false}")
    unknown = [key for key in node.value if key not in ROUTING_KEYS]
    if unknown:
        raise node.error(f"unknown routing key {', '.join(map(repr, unknown))}", f"use: {', '.join(ROUTING_KEYS)}")
    return dict(node.value)


def _retirement(node: Node) -> Retirement:
    if not isinstance(node.value, dict):
        raise node.error("not a mapping", "write retired: {date: 2026-01-05, successor: MODEL}")
    known_keys(node, RETIRED_KEYS)
    successor = node.get("successor").text() if node.has("successor") else None
    # `date`, not `on`: YAML 1.1 reads a bare `on` key as true.
    return Retirement(date=str(node.get("date").value), successor=successor)
