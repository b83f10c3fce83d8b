"""models.yaml keys: a misspelt key is named with the closest known one, and a provider's key variable that
an entry does not name is never sent to a host other than its provider's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from snap_bench.design.config import MODELS_FILE, ConfigError, ConfigFiles
from snap_bench.design.models import load_models


def models(tmp_path: Path, text: str) -> tuple[Path, ConfigFiles]:
    path = tmp_path / "config" / MODELS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path, ConfigFiles(path.parent)


def refused(config: ConfigFiles) -> str:
    with pytest.raises(ConfigError) as raised:
        load_models(config)
    return str(raised.value)


def test_a_misspelt_key_variable_is_named_with_the_closest_key_not_replaced_by_the_default(tmp_path: Path) -> None:
    path, config = models(
        tmp_path,
        """\
        models:
          mine:
            id: vendor/mine
            base_url: https://llm.example.com/v1
            api_key_evn: FAKE_KEY
        """,
    )
    message = refused(config)
    assert message.startswith(f"{path}: models.mine.api_key_evn: unknown key. Fix: write `api_key_env` (the closest")
    assert "use one of: id, label, tier, base_url, api_key_env" in message


@pytest.mark.parametrize(
    ("text", "where", "closest"),
    [
        ("defaults:\n  api_key: MY_KEY\n", "defaults.api_key", "api_key_env"),
        ("model:\n  mine: {id: vendor/mine}\n", "model", "models"),
        ("models:\n  mine:\n    id: vendor/mine\n    price: {input_per_milion: 1, output_per_million: 2}\n",
         "models.mine.price.input_per_milion", "input_per_million"),
        ("models:\n  mine:\n    id: vendor/mine\n    retired: {date: 2026-01-05, sucessor: x}\n",
         "models.mine.retired.sucessor", "successor"),
    ],
)  # fmt: skip
def test_unknown_keys_elsewhere_in_the_file_are_named_too(tmp_path: Path, text: str, where: str, closest: str) -> None:
    path, config = models(tmp_path, text)
    assert refused(config).startswith(f"{path}: {where}: unknown key. Fix: write `{closest}` (the closest known key)")


def test_an_entry_on_another_host_must_name_its_key_variable(tmp_path: Path) -> None:
    path, config = models(tmp_path, "models:\n  mine:\n    id: vendor/mine\n    base_url: https://llm.example.com/v1\n")
    message = refused(config)
    assert message.startswith(f"{path}: models.mine.base_url: ")
    assert "OPENROUTER_API_KEY" in message
    assert "openrouter.ai" in message
    assert "llm.example.com" in message
    assert message.endswith("Fix: name its key variable with api_key_env: (null for a server that needs no key)")
    # named, named as none, or on the default key's own host (its port written or not): accepted
    _, config = models(
        tmp_path,
        """\
        models:
          named:
            id: vendor/named
            base_url: https://llm.example.com/v1
            api_key_env: EXAMPLE_KEY
          keyless:
            id: vendor/keyless
            base_url: http://127.0.0.1:11434/v1
            api_key_env: null
          same-host:
            id: vendor/same
            base_url: https://openrouter.ai:443/api/v1/
          claude:
            id: claude-x
            dialect: anthropic
        """,
    )
    registry = load_models(config)
    keys = {name: registry.models[name].api_key_env for name in ("named", "keyless", "same-host", "claude")}
    assert keys == {
        "named": "EXAMPLE_KEY",
        "keyless": None,
        "same-host": "OPENROUTER_API_KEY",
        "claude": "ANTHROPIC_API_KEY",
    }


def test_a_providers_own_key_stays_with_its_dialects_host(tmp_path: Path) -> None:
    _, config = models(
        tmp_path,
        "models:\n  claude:\n    id: claude-x\n    dialect: anthropic\n    base_url: http://127.0.0.1:8080\n",
    )
    message = refused(config)
    assert "models.claude.base_url" in message
    assert "ANTHROPIC_API_KEY" in message
    assert "127.0.0.1:8080" in message


def test_defaults_that_move_the_endpoint_must_name_its_key_variable(tmp_path: Path) -> None:
    path, config = models(tmp_path, "defaults:\n  base_url: http://127.0.0.1:11434/v1\nmodels:\n")
    message = refused(config)
    assert message.startswith(f"{path}: defaults.base_url: OPENROUTER_API_KEY, the key variable of openrouter.ai,")
    assert "Fix: name its key variable with api_key_env: under defaults" in message
    # defaults naming the endpoint and its key together apply to every entry
    _, config = models(
        tmp_path,
        """\
        defaults:
          base_url: http://127.0.0.1:8080/v1
          api_key_env: GATEWAY_KEY
        models:
          mine: {id: vendor/mine}
        """,
    )
    registry = load_models(config)
    assert (registry.models["mine"].base_url, registry.models["mine"].api_key_env) == (
        "http://127.0.0.1:8080/v1",
        "GATEWAY_KEY",
    )
