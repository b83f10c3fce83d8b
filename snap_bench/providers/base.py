"""What a provider is: one :class:`Provider` value per module, carrying everything snap-bench knows of one API
(where it is, which key it takes, how a request is written and a reply, an error and its rate-limit headers
are read, which headers hold secrets, its catalogue and its batch API).

A reply is read into :class:`Parsed`, the fields of a chat reply that the body says (the client adds the
status, latency and attempts). A refusal by the provider's safety systems (a content filter, a refusal stop, a
blocked prompt) is ``moderated``: an answer code of its own with the provider's reason, never scored.

Only facts and pure functions live here (no session state, no configuration files): the design, the wire,
the recordings and the asking all read them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from snap_bench.providers.batches import BatchApi

Messages = list[dict[str, str]]
# models.yaml's `reasoning: off` (snap_bench.design.entry_values reads it): thinking asked to stay off.
REASONING_OFF = "off"


class Entry(Protocol):
    """What a provider reads of a models.yaml entry (snap_bench.design.models.ModelSpec is one)."""

    @property
    def provider_id(self) -> str: ...

    @property
    def reasoning(self) -> str | None: ...

    @property
    def top_logprobs(self) -> int | None: ...

    @property
    def routing(self) -> dict[str, Any] | None: ...

    @property
    def dialect(self) -> str: ...


@dataclass(frozen=True)
class Parsed:
    """What a 200's body says: the answer's text, or why there is none."""

    text: str | None
    error: str | None = None
    prompt_tokens: int | None = None
    # Every output token billed, thinking included (OpenAI's convention: completion_tokens holds reasoning).
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    # "stop", "length" (cut by the output limit), or what the provider said.
    finish_reason: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    provider: str | None = None
    served_model: str | None = None
    system_fingerprint: str | None = None
    cost_usd: float | None = None
    moderated: bool = False
    # A 200 without an answer that is worth asking again (a malformed body, a transient upstream error).
    retry: bool = False


@dataclass(frozen=True)
class Refusals:
    """How the provider words a refusal that no retry mends, as regular expressions (case-insensitive) searched
    in an error's text; snap_bench.asking.stops stops a model on them. Each kind is read at the statuses
    stops.py names for it."""

    # A model the endpoint does not serve (400/404).
    no_such_model: tuple[str, ...] = ()
    # Parameters no provider of the model can meet (404).
    no_parameters: tuple[str, ...] = ()
    # A routing block no provider meets (503).
    no_route: tuple[str, ...] = ()
    # A temperature the model refuses (400).
    temperature: tuple[str, ...] = ()
    # The account's spend limit (400/429).
    spend_limit: tuple[str, ...] = ()
    # A key refused with a status that is not 401/403 (400).
    bad_key: tuple[str, ...] = ()
    # A parameter the server does not take (400/422).
    unsupported: tuple[str, ...] = ()


@dataclass(frozen=True)
class RateHeaderNames:
    """The response headers stating the request rate limit: the limit per minute, what is left of it, and when
    it is full again (None: the provider does not say), as a duration ("6m0s": ``duration``) or a time (RFC 3339:
    ``time``)."""

    limit: str
    remaining: str
    reset: str | None = None
    reset_is: str = "duration"


@dataclass(frozen=True)
class Listed:
    """One model of a provider's catalogue, as it lists it; what it does not say is None."""

    id: str
    supported_parameters: tuple[str, ...] | None = None
    # US dollars per million tokens.
    input_per_million: float | None = None
    output_per_million: float | None = None


@dataclass(frozen=True)
class CatalogueFormat:
    """A provider's model catalogue: where it is (from the base URL), the headers its key goes in, and its
    JSON document read into the models it lists (raising ValueError, KeyError or TypeError on anything else)."""

    url: Callable[[str], str]
    headers: Callable[[str | None], dict[str, str]]
    models: Callable[[Any], list[Listed]]


def never(status: int, body: str) -> bool:
    return False


def applies_temperature(model: Entry) -> str | None:
    return None


def answer_budget(model: Entry, max_tokens: int) -> int:
    return max_tokens


@dataclass(frozen=True)
class Provider:
    """One API snap-bench can ask, as a value; a module per provider builds one (``PROVIDER``) and registers it
    in the ``snap_bench.providers`` entry point group (snap_bench.providers.registry)."""

    # What models.yaml's ``dialect:`` names it (and a recording's provider field).
    name: str
    # Its API's host (None: a server anywhere, asked in the provider's dialect when named); a base_url on it
    # speaks this provider's dialect and takes this provider's key.
    host: str | None
    # Where an entry naming only ``dialect:`` goes (with ``own_endpoint``), and its documented key variable.
    base_url: str | None
    key_env: str | None
    # (base_url, the model's provider id) -> where its chat request goes.
    url: Callable[[str, str], str]
    # The API key -> the headers that carry it (and whatever else the API requires).
    headers: Callable[[str | None], dict[str, str]]
    # (entry, messages, temperature or None for the provider's default, output budget) -> the body.
    payload: Callable[[Entry, Messages, float | None, int], dict[str, Any]]
    # A 200's body -> what it says.
    parse: Callable[[str], Parsed]
    # (status, error body) -> whether a status that is usually retried is hopeless this time (waiting cannot
    # mend it: OpenRouter's no-route 503, Anthropic's spend limit).
    hopeless_error: Callable[[int, str], bool] = never
    # (status, error body) -> whether the error is the provider's moderation refusing the input.
    moderated_error: Callable[[int, str], bool] = never
    # The entry -> why a temperature would not be applied (None where it would).
    temperature_ignored: Callable[[Entry], str | None] = applies_temperature
    # (entry, the answer's output budget) -> the max_tokens the request holds (Anthropic adds thinking's).
    output_budget: Callable[[Entry, int], int] = answer_budget
    # Hosts below ``host`` are the provider's too (OpenRouter's).
    subdomains: bool = False
    # An entry naming this provider's ``dialect:`` alone goes to its base_url with its key variable.
    own_endpoint: bool = False
    # Other variables its documentation names for its key (scrubbed like the key variable).
    other_key_envs: tuple[str, ...] = ()
    # Request and response headers that hold a credential: never written to a cassette.
    secret_headers: tuple[str, ...] = ()
    # What its keys look like (regular expressions): scrubbed wherever they appear, and a leak in a cassette.
    key_shapes: tuple[str, ...] = ()
    # A recorded request's URI -> whether it was sent to this provider's API (for recordings that do not name
    # their provider; None: recognised only by name).
    recorded_uri: Callable[[str], bool] | None = None
    refusals: Refusals = Refusals()
    rate_headers: RateHeaderNames | None = None
    catalogue: CatalogueFormat | None = None
    batch: BatchApi | None = None

    def serves(self, host: str) -> bool:
        """Whether ``host`` (lower case, no port) is this provider's API."""
        if self.host is None:
            return False
        return host == self.host or (self.subdomains and host.endswith("." + self.host))


def count(value: object) -> int | None:
    """A token count as the provider wrote it, or None for anything that is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def malformed(body: str, error: Exception) -> Parsed:
    """A 200 that does not hold a reply of the API: asked again, like a 5xx."""
    return Parsed(None, f"malformed reply ({type(error).__name__}): {short(body)}", retry=True)


def error_object(body: str) -> dict[str, Any]:
    """The ``error`` object of an error body (every dialect here wraps it so), or {}."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return {}
    return error if isinstance(error, dict) else {}


def listed_prices(pricing: Mapping[str, Any] | None) -> tuple[float | None, float | None]:
    """OpenRouter-style ``pricing`` (USD per token, as decimal strings) per million tokens, or (None, None)."""
    if isinstance(pricing, Mapping) and "prompt" in pricing and "completion" in pricing:
        return float(pricing["prompt"]) * 1e6, float(pricing["completion"]) * 1e6
    return None, None
