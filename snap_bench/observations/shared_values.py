"""Observations as the controller keeps them: equal values held once.

A session's observations repeat themselves: every run and temperature of a condition sends the same
messages, a model's name, an instrument's, a cell's and its factor levels recur thousands of times, and
most answers and reasons are one of a few short strings. Read back from a worker's report (JSON), each
would be an object of its own, about 5 KB of Python objects per observation, most of it the messages:
half a gigabyte for the ten-model study. Built through :class:`SharedValues`, equal strings, numbers,
message lists and factor dicts are one object each, and an observation costs a few hundred bytes (its
own id, timestamp and latency).

The shared lists and dicts are never written to: an Observation is frozen, and nothing in the package
changes a field's contents after it was made.
"""

from __future__ import annotations

from typing import Any

from snap_bench.observations.observation import Observation

# The fields whose values recur across observations (text and numbers), held once each.
_SCALAR_FIELDS = (
    "model",
    "instrument",
    "cell",
    "item",
    "temperature",
    "raw_answer",
    "keyed_score",
    "reason",
    "construct",
    "provider",
    "served_model",
    "system_fingerprint",
    "reasoning_effort",
    "timestamp",
)


class SharedValues:
    """Builds observations whose recurring values are shared with the observations built before."""

    def __init__(self) -> None:
        # Keyed with each value's type: 4 == 4.0 == True would otherwise hand back another type's object.
        self._scalars: dict[tuple[type, object], object] = {}
        self._messages: dict[tuple[object, ...], list[Any]] = {}
        self._dicts: dict[tuple[object, ...], dict[str, Any]] = {}

    def observation(self, values: dict[str, Any]) -> Observation:
        """An Observation of ``values`` (as ``Observation.to_dict`` gives them), equal to
        ``Observation.from_dict(values)``."""
        shared = dict(values)
        for name in _SCALAR_FIELDS:
            value = shared.get(name)
            if value is not None:
                shared[name] = self.scalar(value)
        if isinstance(shared.get("messages"), list):
            shared["messages"] = self.messages(shared["messages"])
        for name in ("factors", "extra"):
            if isinstance(shared.get(name), dict):
                shared[name] = self.flat_dict(shared[name])
        return Observation.from_dict(shared)

    def scalar(self, value: Any) -> Any:
        try:
            return self._scalars.setdefault((type(value), value), value)
        except TypeError:  # not hashable: kept as it is
            return value

    def messages(self, messages: list[Any]) -> list[Any]:
        try:
            key = tuple(_typed_items(message) for message in messages)
            return self._messages.setdefault(key, messages)
        except (AttributeError, TypeError):  # not a list of flat dicts: kept as it is
            return messages

    def flat_dict(self, values: dict[str, Any]) -> dict[str, Any]:
        """One dict for equal dicts of hashable values (factor levels); others are kept as they are."""
        try:
            key = _typed_items(values)
            return self._dicts.setdefault(key, values)
        except TypeError:
            return values


def _typed_items(values: dict[str, Any]) -> tuple[object, ...]:
    """A dict's items with each value's type, as a key for equal dicts (hashable values only)."""
    return tuple((key, type(value), value) for key, value in values.items())
