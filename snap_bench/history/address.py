"""Where the results history is kept: a SQLite file (a path) or a PostgreSQL database (a ``postgresql://`` URL).

A URL never carries a password: it would sit in a command line, a CI log or a file of the repository (the ini
key ``snap_history``). The password comes from the environment the URL is used in, as libpq reads it
(``PGPASSWORD``, a ``~/.pgpass`` line), or from an environment variable the URL names with the query parameter
``password_env`` (``postgresql://snap@db:5432/history?password_env=SNAP_HISTORY_PASSWORD``). What is shown of
an address (terminal, report, analysis.json, error messages) is the URL as given, which holds no password.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# libpq's two URL schemes.
SCHEMES = ("postgresql", "postgres")
# The query parameter naming the environment variable that holds the password (libpq does not know it: it is
# taken out of the URL before the URL reaches the driver).
PASSWORD_ENV = "password_env"
# Seconds to wait for the server before the store counts as unreachable (unless the URL sets connect_timeout).
CONNECT_TIMEOUT_S = 10
URL_FORM = "postgresql://USER@HOST:PORT/DATABASE"
SECRET_FIX = (
    "set PGPASSWORD in the environment, add a line to ~/.pgpass, or name an environment variable that holds "
    f"it: {URL_FORM}?{PASSWORD_ENV}=VARIABLE"
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):(//)?")


class PasswordNotSet(Exception):
    """The URL names an environment variable for its password, and it is not set."""


class StoreAddressError(ValueError):
    """A value of --snap-history / --store that is neither a path nor a usable PostgreSQL URL; the message
    names the fix and never holds a password."""


@dataclass(frozen=True)
class StoreAddress:
    """A SQLite file (``path``) or a PostgreSQL URL (``url``, holding no password)."""

    path: Path | None = None
    url: str = ""

    @property
    def is_postgres(self) -> bool:
        return self.path is None

    def __str__(self) -> str:
        return self.url if self.path is None else str(self.path)

    def password_variable(self) -> str | None:
        """The environment variable the URL names for its password, if it names one."""
        for key, value in parse_qsl(urlsplit(self.url).query):
            if key == PASSWORD_ENV:
                return value
        return None

    def connection_arguments(self) -> tuple[str, dict[str, str]]:
        """The URL for libpq (without ``password_env``) and the keyword arguments to connect with.

        Raises :class:`PasswordNotSet` naming the variable when the URL names one that is not set.
        """
        parts = urlsplit(self.url)
        query = [(key, value) for key, value in parse_qsl(parts.query) if key != PASSWORD_ENV]
        conninfo = urlunsplit(parts._replace(query=urlencode(query)))
        arguments = {"application_name": "snap-bench"}
        if "connect_timeout" not in dict(query):
            arguments["connect_timeout"] = str(CONNECT_TIMEOUT_S)
        variable = self.password_variable()
        if variable is not None:
            password = os.environ.get(variable)
            if not password:
                raise PasswordNotSet(
                    f"the environment variable {variable} named by the URL ({PASSWORD_ENV}) is not set "
                    "(a pull request from a fork gets no secrets)"
                )
            arguments["password"] = password
        return conninfo, arguments

    def secrets(self) -> list[str]:
        """Every password this address may be used with, to keep out of any message."""
        found = [os.environ.get("PGPASSWORD", "")]
        variable = self.password_variable()
        if variable is not None:
            found.append(os.environ.get(variable, ""))
        return [secret for secret in found if secret]

    def scrub(self, message: str) -> str:
        """``message`` with any password of this address replaced by ``***``."""
        for secret in self.secrets():
            message = message.replace(secret, "***")
        return message


def store_address(value: str | Path, base: Path | None = None, source: str = "--snap-history") -> StoreAddress:
    """A path (relative to ``base``, else the working folder) or a ``postgresql://`` URL; a usage problem
    (a misspelt scheme, a password in the URL) raises :class:`StoreAddressError` naming the fix."""
    text = str(value)
    scheme = _SCHEME.match(text)
    if isinstance(value, Path) or scheme is None or (scheme.group(2) is None and len(scheme.group(1)) == 1):
        path = Path(text).expanduser()  # (a single letter before the colon is a Windows drive)
        return StoreAddress(path=(path if path.is_absolute() or base is None else base / path).resolve())
    name = scheme.group(1)
    shown = redacted(text)
    if name not in SCHEMES:
        if scheme.group(2) is None and not name.lower().startswith(("postgres", "pg", "psql", "sqlite")):
            path = Path(text)  # a colon in a file name ("runs:2.sqlite"): still a path
            return StoreAddress(path=(path if path.is_absolute() or base is None else base / path).resolve())
        raise StoreAddressError(f"{source}: {shown!r} is neither a file path nor a PostgreSQL URL. {_scheme_fix(name)}")
    if scheme.group(2) is None:
        raise StoreAddressError(f"{source}: {shown!r} is not a PostgreSQL URL. Fix: write it as {URL_FORM}")
    parts = urlsplit(text)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if parts.password is not None or any(key == "password" for key, _ in query):
        raise StoreAddressError(
            f"{source}: the URL {shown!r} carries a password, and a password is never read from the URL (it would "
            f"sit in a command line, a log or a file of the repository). Fix: remove it from the URL and {SECRET_FIX}"
        )
    if any(key == PASSWORD_ENV and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) for key, value in query):
        raise StoreAddressError(
            f"{source}: {PASSWORD_ENV} in {shown!r} must name an environment variable (letters, digits, "
            f"underscores), e.g. {URL_FORM}?{PASSWORD_ENV}=SNAP_HISTORY_PASSWORD"
        )
    return StoreAddress(url=text)


def _scheme_fix(name: str) -> str:
    if name.lower() == "sqlite":
        return "Fix: give the SQLite file's path itself, e.g. reports/history.sqlite"
    if name.lower().startswith("postgresql+"):
        return f"Fix: drop the driver suffix, {URL_FORM} (the driver is psycopg)"
    close = difflib.get_close_matches(name.lower(), SCHEMES, n=1, cutoff=0.5)
    guess = f"unknown scheme {name!r}, did you mean postgresql://? " if close else f"unknown scheme {name!r}. "
    return f"{guess[0].upper()}{guess[1:]}Fix: write {URL_FORM}, or give a file path for SQLite"


def redacted(text: str) -> str:
    """A URL-like text with the password of its user part and any ``password=`` parameter replaced by ``***``."""
    text = re.sub(r"(://[^/@:?#]*):[^@/?#]*@", r"\1:***@", text)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", text)
