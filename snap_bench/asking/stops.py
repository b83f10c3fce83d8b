"""Stopping a model whose requests cannot work (a refused key, no server, a refused parameter, a model
the endpoint does not serve, no credits left).

Retrying such a failure for every condition only repeats it (a wrong key cost 5 attempts x every
condition). After ``STOP_AFTER_KIND[kind]`` conditions in a row fail the same hopeless way, the model is
stopped for the rest of the session, in every xdist worker: the decision lives in the session's shared
state folder. Its remaining conditions are recorded as not asked, with one message saying what to change.

Credits belong to the account, not the model: a 402 stops every model asked with that key at once.
A 403 for moderation is not a key problem: the flagged condition gets an answer code of its own and
the model goes on (OpenRouter's errors-and-debugging documentation).

How each provider words a hopeless refusal is its module's (``Provider.refusals``): every registered
provider's words are looked for in every error, as a proxy may pass another provider's on.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snap_bench.asking.client import ChatReply
from snap_bench.asking.state_folder import state_folder
from snap_bench.asking.throttle import SharedState
from snap_bench.providers import registered

# A few conditions, not one: a single 401 or refused connection can be a provider's hiccup.
STOP_AFTER = 2
# A refusal that names the request itself (a parameter, the model id, the routing, the account's credits)
# is the same every time: the first condition says so, and the model stops there.
STOP_AFTER_KIND = {
    "auth": STOP_AFTER,
    "unreachable": STOP_AFTER,
    "parameter": 1,
    "temperature": 1,
    "model": 1,
    "routing": 1,
    "credits": 1,
}
STATE_FILE = "stops.json"
NOT_ASKED = "not asked: "
# How servers word a refused parameter (OpenAI, OpenRouter, vLLM, llama.cpp, Anthropic's proxy), with what the
# providers' modules add.
_UNSUPPORTED_WORDS = (
    r"unsupported|not supported|does not support|is not allowed|unrecognized|unknown (?:parameter|field|argument)"
    r"|extra (?:inputs|fields) are not permitted|only the default"
)


@functools.cache
def _refusal(kind: str) -> re.Pattern[str] | None:
    """Every registered provider's words for one kind of refusal (a Refusals field), as one pattern."""
    words = [word for provider in registered().values() for word in getattr(provider.refusals, kind)]
    if kind == "unsupported":
        words.insert(0, _UNSUPPORTED_WORDS)
    return re.compile("|".join(words), re.IGNORECASE) if words else None


def _says(kind: str, error: str) -> bool:
    pattern = _refusal(kind)
    return pattern is not None and pattern.search(error) is not None


@dataclass(frozen=True)
class Request:
    """What the stop message names of the request that was refused."""

    model: str
    model_id: str
    url: str
    key_variable: str | None
    parameters: Sequence[str] = ()
    routing: Mapping[str, Any] | None = None
    # Current ids of the endpoint's catalogue nearest to the model's, where it was read.
    closest_ids: Sequence[str] = ()


def hopeless(reply: ChatReply) -> str | None:
    """Why asking again cannot help ("auth", "unreachable", "temperature", "parameter", "model", "routing",
    "credits"), or None."""
    if reply.error is None or reply.moderated:
        return None
    if reply.unreachable:
        return "unreachable"
    if reply.status == 402 or (reply.status in (400, 429) and _says("spend_limit", reply.error)):
        return "credits"
    if reply.status in (401, 403) or (reply.status == 400 and _says("bad_key", reply.error)):
        return "auth"
    if reply.status == 400 and _says("temperature", reply.error):
        return "temperature"
    if reply.status in (400, 404) and _says("no_such_model", reply.error):
        return "model"
    if reply.status == 404 and _says("no_parameters", reply.error):
        return "parameter"
    if reply.status == 503 and _says("no_route", reply.error):
        return "routing"
    if reply.status in (400, 422) and _says("unsupported", reply.error):
        return "temperature" if "temperature" in reply.error.lower() else "parameter"
    return None


def stop_message(request: Request, kind: str, said: str) -> str:
    """One paragraph: which model, which endpoint, what the provider said, what to change."""
    parameters = ", ".join(request.parameters) or "none"
    closest = ", ".join(request.closest_ids)
    fixes = {
        "auth": f"the provider refused the key: check {request.key_variable or 'the key'} (environment or .env) "
        "and that it is valid for this endpoint",
        "unreachable": "nothing answered there: check the model's base_url in config/models.yaml "
        "(it must start with http:// or https://) and that the server is running",
        "temperature": "the model does not take the design's temperature (reasoning models often take only 1): "
        "set takes_temperature: false in its config/models.yaml entry (it is then asked at the provider's "
        "default), or run it with --snap-temperatures=1 or --snap-temperatures=default, or choose another model",
        "parameter": f"the provider refused a parameter of the request (sent: {parameters}; on OpenRouter, no "
        "provider of the model takes them all): change the model's entry in config/models.yaml (its reasoning, "
        "logprobs or token limit) or choose another model",
        "model": f"the endpoint serves no model {request.model_id!r} (retired, or never an id there): "
        + (f"current ids nearest to it: {closest}; " if closest else "")
        + "change its id in config/models.yaml",
        "routing": f"no provider meets the model's routing block {dict(request.routing or {})}: widen its "
        "provider: entry in config/models.yaml (order, only, ignore, allow_fallbacks, quantizations)",
        "credits": f"the account of {request.key_variable or 'the key'} has no credits left (HTTP 402) or reached "
        "its spend limit: add credits or raise the limit, or lower --snap-max-cost; every model asked with this key "
        "is stopped",
    }
    return (
        f"{request.model} stopped at {request.url}: {said}. Fix: {fixes[kind]}; then run again "
        "(recorded conditions are kept)."
    )


class StopBoard:
    """Which models are stopped, and the run of hopeless failures per model, shared across processes.

    ``key_of`` names each model's key variable, so that a stop of the account (no credits) reaches every
    model asked with that key.
    """

    def __init__(self, out_dir: Path, key_of: Mapping[str, str | None] | None = None) -> None:
        self._state = SharedState(state_folder(out_dir) / STATE_FILE)
        self._key_of = dict(key_of or {})

    def stopped(self, model: str) -> str | None:
        """The stop message of ``model``, or None while it may be asked."""
        # Asked before every request: read without the lock (a stop decided meanwhile lands on the next).
        return _stop_of(self._state.peek(), model, self._key_of.get(model))

    def stop(self, request: Request, kind: str, said: str) -> None:
        """Stop the model now, before it is asked (e.g. the catalogue does not list its id)."""
        message = stop_message(request, kind, said)

        def change(state: dict[str, Any]) -> tuple[dict[str, Any], None]:
            state.setdefault("stopped", {}).setdefault(request.model, message)
            return state, None

        self._state.update(change)

    def note(self, request: Request, reply: ChatReply) -> None:
        """Count a hopeless failure (a usable reply ends the run of them); stop the model at its kind's count."""
        kind = hopeless(reply)
        model = request.model
        if kind is None and not self._state.peek().get("runs", {}).get(model):
            return  # the usual case, a usable reply with no run to end: nothing to write, no lock to wait for

        def change(state: dict[str, Any]) -> tuple[dict[str, Any], None]:
            runs: dict[str, int] = state.setdefault("runs", {})
            stopped: dict[str, str] = state.setdefault("stopped", {})
            if kind is None:
                runs[model] = 0
            else:
                runs[model] = runs.get(model, 0) + 1
                if runs[model] >= STOP_AFTER_KIND[kind] and model not in stopped:
                    stopped[model] = stop_message(request, kind, reply.error or "")
                    if kind == "credits" and request.key_variable:
                        state.setdefault("stopped_keys", {})[request.key_variable] = stopped[model]
            return state, None

        self._state.update(change)


def _stop_of(state: Mapping[str, Any], model: str, key_variable: str | None) -> str | None:
    message = state.get("stopped", {}).get(model)
    if message is None and key_variable is not None:
        message = state.get("stopped_keys", {}).get(key_variable)
    return message if isinstance(message, str) else None


def stopped_models(out_dir: Path, key_of: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """Model -> message for every model the session stopped (for a "could not measure" exit status);
    ``key_of`` adds the models whose account ran out of credits."""
    state = SharedState(state_folder(out_dir) / STATE_FILE).read()
    stopped = {str(model): str(message) for model, message in state.get("stopped", {}).items()}
    for model, key_variable in (key_of or {}).items():
        message = _stop_of(state, model, key_variable)
        if message is not None:
            stopped.setdefault(model, message)
    return stopped


def clear_stops(out_dir: Path) -> None:
    """Forget the previous session's stops (each session starts with every model askable)."""
    (state_folder(out_dir) / STATE_FILE).unlink(missing_ok=True)
