"""The providers' registry: every provider module is registered through the ``snap_bench.providers`` entry point
group, a team's installed package adds one the same way (a fake distribution's entry point here), and a
registration that cannot work is a configuration error naming the entry point and the fix."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

import snap_bench.providers
from snap_bench.asking import rate_headers, stops
from snap_bench.asking.credentials import configured_scrubber
from snap_bench.design.config import ConfigError, ConfigFiles
from snap_bench.design.models import load_models
from snap_bench.providers import Provider, openai, provider_of_url, registry
from snap_bench.recordings import cassettes
from snap_bench.wire import scrub
from snap_bench.wire.dialects import dialect_named
from tests.unit.providers import fake_team_provider

GROUP = "snap_bench.providers"
TEAM_POINT = metadata.EntryPoint("team-llm", "tests.unit.providers.fake_team_provider:PROVIDER", GROUP)


def _forget() -> None:
    """What was read of the registry (the registry and what its readers built from it once)."""
    for cached in (
        registry._registered,
        stops._refusal,
        rate_headers._styles,
        scrub.key_shapes,
        cassettes.secret_header_names,
        cassettes.leak_patterns,
    ):
        cached.cache_clear()


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[metadata.EntryPoint]]:
    """The group's entry points as installed, plus whatever the test appends (a team's package)."""
    points = list(metadata.entry_points(group=GROUP))
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: list(points) if group == GROUP else [])
    _forget()
    yield points
    monkeypatch.undo()
    _forget()


def own_modules() -> dict[str, Provider]:
    """module name -> the PROVIDER of every module of snap_bench.providers that has one."""
    found = {}
    for module in pkgutil.iter_modules(snap_bench.providers.__path__):
        provider = getattr(importlib.import_module(f"snap_bench.providers.{module.name}"), "PROVIDER", None)
        if isinstance(provider, Provider):
            found[f"snap_bench.providers.{module.name}"] = provider
    return found


def test_every_provider_module_is_registered_under_its_name_in_the_entry_point_group() -> None:
    points = {point.value: point.name for point in metadata.entry_points(group=GROUP)}
    modules = own_modules()
    assert modules, "no provider module found"
    assert {f"{module}:PROVIDER": provider.name for module, provider in modules.items()}.items() <= points.items()
    assert set(snap_bench.providers.registered()) >= {provider.name for provider in modules.values()}


def test_a_team_package_adds_a_provider_that_models_yaml_names_and_whose_key_stays_secret(
    installed: list[metadata.EntryPoint], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed.append(TEAM_POINT)
    config = tmp_path / "config"
    config.mkdir()
    (config / "models.yaml").write_text(
        "models:\n  team-model:\n    id: team/model-1\n    dialect: team-llm\n", encoding="utf-8"
    )
    model = load_models(ConfigFiles(config)).models["team-model"]
    # An entry naming the provider alone goes to its API with its key variable.
    assert (model.dialect, model.base_url, model.api_key_env) == (
        "team-llm",
        "https://llm.team.example/v1",
        "TEAM_LLM_KEY",
    )
    assert provider_of_url("https://llm.team.example/v1") is fake_team_provider.PROVIDER
    assert dialect_named("team-llm").headers("k") == {"x-team-key": "k"}
    # Its key variable is scrubbed whatever models.yaml names, its key header never recorded, its keys' shape
    # scrubbed and found as a leak.
    monkeypatch.setenv("TEAM_LLM_KEY", "a-team-secret-value")
    assert configured_scrubber([], tmp_path / ".env")("said a-team-secret-value") == "said <redacted>"
    assert "x-team-key" in cassettes.secret_header_names()
    assert scrub.Scrubber()("team-0123456789abcdef01234567") == "<redacted>"
    (tmp_path / "c.json").write_text('{"x-team-key": ["v"]}', encoding="utf-8")
    assert cassettes.leaked_secrets(tmp_path)


@pytest.mark.parametrize(
    ("point", "said"),
    [
        (
            metadata.EntryPoint("team-llm", "tests.unit.providers.fake_team_provider:NOT_A_PROVIDER", GROUP),
            "is a dict, not a snap_bench.providers.Provider. Fix: point it at the module's PROVIDER value",
        ),
        (
            metadata.EntryPoint("team", "tests.unit.providers.fake_team_provider:PROVIDER", GROUP),
            "is named 'team' but its provider is 'team-llm'. Fix: use one name for both",
        ),
        (
            metadata.EntryPoint("team-llm", "tests.unit.providers.no_such_module:PROVIDER", GROUP),
            "cannot be loaded (ModuleNotFoundError",
        ),
    ],
)
def test_a_registration_that_cannot_work_is_a_config_error_naming_its_entry_point(
    installed: list[metadata.EntryPoint], tmp_path: Path, point: metadata.EntryPoint, said: str
) -> None:
    installed.append(point)
    with pytest.raises(ConfigError) as raised:
        load_models(ConfigFiles(tmp_path))
    assert f"entry point {point.name} = {point.value} (group {GROUP})" in str(raised.value)
    assert said in str(raised.value)


def test_two_providers_claiming_one_host_are_refused(installed: list[metadata.EntryPoint], tmp_path: Path) -> None:
    openai_point = next(point for point in installed if point.name == "openai")
    installed.append(TEAM_POINT)
    host = fake_team_provider.PROVIDER.host
    installed.remove(openai_point)
    installed.append(metadata.EntryPoint("openai", "tests.unit.providers.test_registry:OPENAI_ON_THE_TEAM_HOST", GROUP))
    with pytest.raises(ConfigError, match=f"providers .* both claim the host {host}"):
        load_models(ConfigFiles(tmp_path))


def test_a_checkout_not_installed_finds_its_own_provider_modules(installed: list[metadata.EntryPoint]) -> None:
    installed.clear()
    assert set(snap_bench.providers.registered()) == {provider.name for provider in own_modules().values()}


# OpenAI's provider moved onto the team's host: a key could go to the wrong one of them.
OPENAI_ON_THE_TEAM_HOST = dataclasses.replace(openai.PROVIDER, host=fake_team_provider.HOST)


def test_a_provider_on_a_host_another_serves_through_its_subdomains_is_refused(
    installed: list[metadata.EntryPoint], tmp_path: Path
) -> None:
    # OpenRouter serves openrouter.ai and its subdomains: a team's provider on eu.openrouter.ai would make which
    # provider a base URL there speaks for (and whose key its entry takes) a matter of the names' order.
    installed.append(metadata.EntryPoint("acme", "tests.unit.providers.test_registry:ON_A_SUBDOMAIN", GROUP))
    with pytest.raises(
        ConfigError, match=re.escape("providers 'acme' and 'openrouter' both claim the host eu.openrouter.ai")
    ):
        load_models(ConfigFiles(tmp_path))


ON_A_SUBDOMAIN = dataclasses.replace(
    fake_team_provider.PROVIDER, name="acme", host="eu.openrouter.ai", base_url="https://eu.openrouter.ai/v1"
)
