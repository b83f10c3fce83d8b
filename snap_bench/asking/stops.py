"""Stopping a model whose requests cannot work (a refused key, no server, a refused parameter).

Retrying such a failure for every condition only repeats it (a wrong key cost 5 attempts x every
condition). After ``STOP_AFTER`` conditions in a row fail the same hopeless way, the model is stopped
for the rest of the session, in every xdist worker: the decision lives in the session's shared state
folder. Its remaining conditions are recorded as not asked, with one message saying what to change.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from snap_bench.asking.client import ChatReply
from snap_bench.asking.throttle import SharedState

# A few conditions, not one: a single 401 or refused connection can be a provider's hiccup.
STOP_AFTER = 2
# A parameter the provider refuses (a temperature a reasoning model does not take) is refused the same
# way every time: the first condition says so, and the model stops there.
STOP_AFTER_KIND = {"auth": STOP_AFTER, "unreachable": STOP_AFTER, "parameter": 1, "temperature": 1}
STATE_FILE = "stops.json"
NOT_ASKED = "not asked: "
# How providers word a refused parameter (OpenAI, OpenRouter, vLLM, llama.cpp, Anthropic's proxy).
_UNSUPPORTED = re.compile(
    r"unsupported|not supported|does not support|is not allowed|unrecognized|unknown (?:parameter|field|argument)"
    r"|extra (?:inputs|fields) are not permitted|only the default",
    re.IGNORECASE,
)


def hopeless(reply: ChatReply) -> str | None:
    """Why asking again cannot help ("auth", "unreachable", "temperature", "parameter"), or None."""
    if reply.error is None:
        return None
    if reply.unreachable:
        return "unreachable"
    if reply.status in (401, 403):
        return "auth"
    if reply.status in (400, 422) and _UNSUPPORTED.search(reply.error):
        return "temperature" if "temperature" in reply.error.lower() else "parameter"
    return None


def stop_message(model: str, url: str, key_variable: str | None, kind: str, said: str) -> str:
    """One paragraph: which model, which endpoint, what the provider said, what to change."""
    fixes = {
        "auth": f"the provider refused the key: check {key_variable or 'the key'} (environment or .env) "
        "and that it is valid for this endpoint",
        "unreachable": "nothing answered there: check the model's base_url in config/models.yaml "
        "(it must start with http:// or https://) and that the server is running",
        "temperature": "the model does not take the design's temperature (reasoning models often take only 1): "
        "run it with --snap-temperatures=1, or choose another model",
        "parameter": "the provider refused a parameter of the request: change the model's entry in "
        "config/models.yaml (e.g. its temperature or token limit) or choose another model",
    }
    return f"{model} stopped at {url}: {said}. Fix: {fixes[kind]}; then run again (recorded conditions are kept)."


class StopBoard:
    """Which models are stopped, and the run of hopeless failures per model, shared across processes."""

    def __init__(self, out_dir: Path) -> None:
        self._state = SharedState(out_dir / ".state" / STATE_FILE)

    def stopped(self, model: str) -> str | None:
        """The stop message of ``model``, or None while it may be asked."""
        # Asked before every request: read without the lock (a stop decided meanwhile lands on the next).
        message = self._state.peek().get("stopped", {}).get(model)
        return message if isinstance(message, str) else None

    def note(self, model: str, url: str, key_variable: str | None, reply: ChatReply) -> None:
        """Count a hopeless failure (a usable reply ends the run of them); stop the model at STOP_AFTER."""
        kind = hopeless(reply)
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
                    stopped[model] = stop_message(model, url, key_variable, kind, reply.error or "")
            return state, None

        self._state.update(change)


def stopped_models(out_dir: Path) -> dict[str, str]:
    """Model -> message for every model the session stopped (for a "could not measure" exit status)."""
    stopped = SharedState(out_dir / ".state" / STATE_FILE).read().get("stopped", {})
    return {str(model): str(message) for model, message in stopped.items()}


def clear_stops(out_dir: Path) -> None:
    """Forget the previous session's stops (each session starts with every model askable)."""
    (out_dir / ".state" / STATE_FILE).unlink(missing_ok=True)
