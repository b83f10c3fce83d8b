"""The one scrubber every string the session writes passes through: configured keys and key-shaped text.

A provider may echo the key it was sent (``Incorrect API key provided: sk-...``); that text becomes an
observation's reason, and from there reaches the JSONL/CSV, the report, JUnit and the terminal. So
observations are scrubbed when they are made, and cassettes when they are recorded, with this. Which keys
are configured is asked of the environment and .env (:func:`snap_bench.asking.credentials.configured_scrubber`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from snap_bench.providers import key_shapes as provider_key_shapes

REDACTED = "<redacted>"
# Shorter configured values are not treated as secrets: replacing "1" or "true" everywhere would
# damage answers, and no provider key is that short.
MIN_SECRET_LENGTH = 8
# What a key looks like: the registered providers' key formats (their modules' key_shapes), and bearer tokens.
BEARER_TOKEN = re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE)


@functools.cache
def key_shapes() -> tuple[re.Pattern[str], ...]:
    return (*(re.compile(shape) for shape in provider_key_shapes()), BEARER_TOKEN)


class Scrubber:
    """Replaces the configured secrets and anything shaped like a key with ``<redacted>``."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        values = {secret for secret in secrets if secret and len(secret) >= MIN_SECRET_LENGTH}
        # Longest first, so a key that contains another is removed whole.
        self.secrets = sorted(values, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        for shape in key_shapes():
            text = shape.sub(REDACTED, text)
        return text

    def deep(self, value: Any) -> Any:
        """``value`` with every string inside it (dict values, list items) scrubbed."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {key: self.deep(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.deep(item) for item in value]
        if isinstance(value, tuple):
            return tuple(self.deep(item) for item in value)
        return value
