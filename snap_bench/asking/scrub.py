"""The one scrubber every string the session writes passes through: configured keys and key-shaped text.

A provider may echo the key it was sent (``Incorrect API key provided: sk-...``); that text becomes an
observation's reason, and from there reaches the JSONL/CSV, the report, JUnit and the terminal. So
observations are scrubbed when they are made, and cassettes when they are recorded, with this.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from snap_bench.asking.credentials import read_dotenv

REDACTED = "<redacted>"
# Shorter configured values are not treated as secrets: replacing "1" or "true" everywhere would
# damage answers, and no provider key is that short.
MIN_SECRET_LENGTH = 8
# Environment variables holding keys whatever models.yaml names (OpenRouter is the default provider).
DEFAULT_KEY_VARIABLES = ("OPENROUTER_API_KEY", "OPENAI_API_KEY")
# .env entries whose names say they hold a credential.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)
# What a key looks like: provider key formats and bearer tokens.
KEY_SHAPES = (
    re.compile(r"sk-or-v1-[A-Za-z0-9]{16,}"),
    re.compile(r"sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"),
    re.compile(r"(?<=Bearer )[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE),
)


class Scrubber:
    """Replaces the configured secrets and anything shaped like a key with ``<redacted>``."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        values = {secret for secret in secrets if secret and len(secret) >= MIN_SECRET_LENGTH}
        # Longest first, so a key that contains another is removed whole.
        self.secrets = sorted(values, key=len, reverse=True)

    @classmethod
    def configured(cls, key_variables: Iterable[str | None], dotenv: Path) -> Scrubber:
        """The keys named by models.yaml's ``api_key_env`` and the defaults, from the environment and .env."""
        names = {name for name in (*key_variables, *DEFAULT_KEY_VARIABLES) if name}
        from_dotenv = read_dotenv(dotenv)
        values = [os.environ.get(name) for name in names]
        values += [value for name, value in from_dotenv.items() if name in names or _SECRET_NAME.search(name)]
        return cls(values)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, REDACTED)
        for shape in KEY_SHAPES:
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
