"""The providers snap-bench knows: every :class:`~snap_bench.providers.base.Provider` registered in the
``snap_bench.providers`` entry point group (this package's own, and any a team's installed package adds),
looked up by name, by a base URL's host, or by a recording.

A checkout run without being installed has no entry points: its own modules (each with a ``PROVIDER``) are then
found in this package instead.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Iterable
from importlib import metadata
from urllib.parse import urlsplit

from snap_bench.providers.base import Provider

GROUP = "snap_bench.providers"
# The provider of a base URL on no registered host, and of a recording that names none and is not recognised.
PLAIN = "openai-compatible"
_PACKAGE = __name__.rpartition(".")[0]
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


class ProviderError(Exception):
    """A provider that cannot be registered: where it was registered, what is wrong, and the fix."""

    def __init__(self, where: str, problem: str, fix: str) -> None:
        self.where, self.problem, self.fix = where, problem, fix
        super().__init__(f"{where}: {problem}. Fix: {fix}")


def registered() -> dict[str, Provider]:
    """Name -> provider, in name order."""
    return dict(_registered())


@functools.cache
def _registered() -> tuple[tuple[str, Provider], ...]:
    found: dict[str, Provider] = {}
    points = list(metadata.entry_points(group=GROUP))
    for point in points:
        _add(found, point.name, _load(point), _where(point))
    if not any(point.value.startswith(_PACKAGE + ".") for point in points):
        # Not installed (no metadata of this package): its own modules.
        for module in pkgutil.iter_modules(importlib.import_module(_PACKAGE).__path__):
            provider = getattr(importlib.import_module(f"{_PACKAGE}.{module.name}"), "PROVIDER", None)
            if isinstance(provider, Provider) and provider.name not in found:
                _add(found, provider.name, provider, f"{_PACKAGE}.{module.name}.PROVIDER")
    if PLAIN not in found:
        raise ProviderError(
            f"entry point group {GROUP}", f"no provider {PLAIN!r} is registered", "reinstall snap-bench"
        )
    _check_hosts(found.values())
    return tuple(sorted(found.items()))


def _where(point: metadata.EntryPoint) -> str:
    return f"entry point {point.name} = {point.value} (group {GROUP})"


def _load(point: metadata.EntryPoint) -> Provider:
    where = _where(point)
    try:
        provider = point.load()
    except Exception as error:  # a team's package may fail in any way: named, never a traceback
        raise ProviderError(
            where, f"cannot be loaded ({type(error).__name__}: {error})", "fix or uninstall the package it names"
        ) from None
    if not isinstance(provider, Provider):
        raise ProviderError(
            where,
            f"is a {type(provider).__name__}, not a snap_bench.providers.Provider",
            "point it at the module's PROVIDER value (docs/providers.md)",
        )
    return provider


def _add(found: dict[str, Provider], name: str, provider: Provider, where: str) -> None:
    if provider.name != name:
        raise ProviderError(where, f"is named {name!r} but its provider is {provider.name!r}", "use one name for both")
    if not _NAME.fullmatch(name):
        raise ProviderError(where, f"{name!r} is not a provider name", "use lower case letters, digits, '-' and '_'")
    if name in found and found[name] is not provider:
        raise ProviderError(where, f"a provider named {name!r} is registered twice", "rename one of them")
    found[name] = provider


def _check_hosts(providers: Iterable[Provider]) -> None:
    """One provider per host: no two on one host, and none on a host another serves through its subdomains (a
    regional subdomain of OpenRouter's host is OpenRouter's), where which one a base URL speaks for would hang on
    the names' order."""
    hosted = [provider for provider in providers if provider.host is not None]
    for provider in hosted:
        host = str(provider.host)
        owner = next((other for other in hosted if other is not provider and other.serves(host)), None)
        if owner is not None:
            first, second = sorted((owner.name, provider.name))
            raise ProviderError(
                f"entry point group {GROUP}",
                f"providers {first!r} and {second!r} both claim the host {host}",
                "register one provider per host (a key goes to its own provider's host only)",
            )


def provider_named(name: str) -> Provider:
    """The provider of that name (models.yaml checked it is one)."""
    return registered()[name]


def provider_names() -> tuple[str, ...]:
    return tuple(registered())


def provider_of_url(base_url: str | None) -> Provider:
    """The provider whose host a base URL is on; a URL on no registered host is a plain server's."""
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    for provider in registered().values():
        if provider.serves(host):
            return provider
    return provider_named(PLAIN)


def provider_of_recording(uri: str, named: str | None = None) -> Provider:
    """The provider a recorded request was sent through: the one it names, else (a recording made before
    recordings named it) the one whose API its URI is, else a plain server's."""
    providers = registered()
    if named is not None and named in providers:
        return providers[named]
    for provider in providers.values():
        if provider.recorded_uri is not None and provider.recorded_uri(uri):
            return provider
    return providers[PLAIN]


def key_variables() -> tuple[str, ...]:
    """Every key variable the providers' documentation names (scrubbed whatever models.yaml names)."""
    names = [name for provider in registered().values() for name in (provider.key_env, *provider.other_key_envs)]
    return tuple(dict.fromkeys(name for name in names if name))


def secret_headers() -> tuple[str, ...]:
    """The headers that carry a provider's credential, lower case."""
    return tuple(dict.fromkeys(h.lower() for provider in registered().values() for h in provider.secret_headers))


def key_shapes() -> tuple[str, ...]:
    """What the providers' keys look like (regular expressions)."""
    return tuple(dict.fromkeys(shape for provider in registered().values() for shape in provider.key_shapes))
