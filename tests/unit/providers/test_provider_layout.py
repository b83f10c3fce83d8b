"""A provider is one module: no file of snap_bench outside a provider's own module names its host (code,
docstrings and comments alike), so a provider's knowledge cannot leak into the shared code again."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "snap_bench"


def own_hosts() -> dict[str, Path]:
    """host -> the module of the registered provider that serves it (this package's own providers)."""
    hosts = {}
    for point in metadata.entry_points(group="snap_bench.providers"):
        module = point.module
        if module.startswith("snap_bench.providers."):
            provider = point.load()
            if provider.host is not None:
                hosts[provider.host] = REPO / (module.replace(".", "/") + ".py")
    return hosts


HOSTS = own_hosts()


def test_the_shipped_providers_have_hosts_to_look_for() -> None:
    assert len(HOSTS) >= 4


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_no_module_outside_its_providers_own_names_its_host(host: str) -> None:
    naming = sorted(
        str(path.relative_to(REPO))
        for path in PACKAGE.rglob("*.py")
        if path != HOSTS[host] and host in path.read_text(encoding="utf-8")
    )
    assert naming == [], f"{host} is {HOSTS[host].stem}'s: name it only in {HOSTS[host].relative_to(REPO)}"
