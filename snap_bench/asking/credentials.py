"""API keys from the environment or a ``.env`` file; a key is only ever held in memory."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from snap_bench.providers import key_variables as provider_key_variables
from snap_bench.wire.scrub import Scrubber

# .env entries whose names say they hold a credential.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD", re.IGNORECASE)


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


def configured_scrubber(key_variables: Iterable[str | None], dotenv: Path) -> Scrubber:
    """A scrubber of the keys named by models.yaml's ``api_key_env`` and the defaults, from the environment
    and .env (any .env entry whose name says it holds a credential included)."""
    # The variables every registered provider's documentation names hold keys whatever models.yaml names.
    names = {name for name in (*key_variables, *provider_key_variables()) if name}
    from_dotenv = read_dotenv(dotenv)
    values = [os.environ.get(name) for name in names]
    values += [value for name, value in from_dotenv.items() if name in names or _SECRET_NAME.search(name)]
    return Scrubber(values)
