"""API keys from the environment or a ``.env`` file; a key is only ever held in memory."""

from __future__ import annotations

import os
from pathlib import Path


def read_dotenv(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of a .env file (``export`` prefixes, quotes and comments allowed)."""
    if not path.is_file():
        return {}
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[name.strip()] = value
    return values


def api_key(env_name: str | None, dotenv: Path) -> str | None:
    """The key named ``env_name``: the environment wins over the .env file. None if unset or empty."""
    if env_name is None:
        return None
    value = os.environ.get(env_name) or read_dotenv(dotenv).get(env_name)
    return value or None
