"""A serving's entry: its base entry pinned to one provider (OpenRouter's routing, fallbacks off) or set to one
effort; the provider an entry pins; whether a model takes an effort; models.yaml's providers: and
reasoning_efforts: keys, each mistake naming the file, the key and the fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from snap_bench.design.config import MODELS_FILE, ConfigError, ConfigFiles
from snap_bench.design.models import OPENAI_COMPATIBLE, OPENROUTER, ModelSpec, load_models
from snap_bench.design.serving import Serving
from snap_bench.design.serving_entries import pinned_provider, serving_entry, servings, takes_effort

BASE = ModelSpec(
    name="m",
    label="M",
    provider_id="vendor/m",
    tier="t",
    base_url="https://openrouter.ai/api/v1",
    api_key_env="OPENROUTER_API_KEY",
    price=None,
    weights=None,
    dialect=OPENROUTER,
    routing={"order": ["groq"], "ignore": ["x"], "data_collection": "deny"},
    providers=("groq", "deepinfra/turbo"),
    reasoning_efforts=("low",),
)


def test_a_provider_level_pins_that_provider_alone_and_keeps_the_entrys_other_routing() -> None:
    entry = serving_entry(BASE, Serving("m", "deepinfra/turbo"))
    assert entry.name == "m@deepinfra--turbo"
    # order and ignore would contradict `only`; data_collection is the team's own rule and stays
    assert entry.routing == {"data_collection": "deny", "only": ["deepinfra/turbo"], "allow_fallbacks": False}
    assert (entry.reasoning, entry.providers, entry.reasoning_efforts) == (None, (), ())
    assert pinned_provider(entry) == "deepinfra/turbo"
    assert pinned_provider(BASE) is None


def test_an_effort_level_sets_the_effort_and_keeps_the_routing() -> None:
    entry = serving_entry(BASE, Serving("m", effort="high"))
    assert (entry.name, entry.reasoning, entry.routing) == ("m@effort-high", "high", BASE.routing)
    assert entry.label == "M (effort high)"


def test_the_levels_are_crossed() -> None:
    assert [s.name for s in servings(BASE, ["a", "b"], ["low", "high"])] == [
        "m@a@effort-low",
        "m@a@effort-high",
        "m@b@effort-low",
        "m@b@effort-high",
    ]
    assert [s.name for s in servings(BASE, [], ["low"])] == ["m@effort-low"]
    assert servings(BASE, [], []) == []


@pytest.mark.parametrize(
    ("routing", "dialect", "pinned"),
    [
        ({"only": ["groq"], "allow_fallbacks": False}, OPENROUTER, "groq"),
        ({"only": ["groq"]}, OPENROUTER, None),  # fallbacks allowed: another provider may answer
        ({"only": ["groq", "together"], "allow_fallbacks": False}, OPENROUTER, None),
        ({"only": ["groq"], "allow_fallbacks": False}, OPENAI_COMPATIBLE, None),  # no routing there
        (None, OPENROUTER, None),
    ],
)
def test_the_provider_pinned(routing: dict[str, object] | None, dialect: str, pinned: str | None) -> None:
    model = ModelSpec("m", "M", "vendor/m", "t", None, None, None, None, dialect=dialect, routing=routing)
    assert pinned_provider(model) == pinned


def test_a_model_takes_an_effort_where_its_entry_or_its_catalogue_says_so() -> None:
    plain = ModelSpec("m", "M", "vendor/m", "t", None, None, None, None)
    assert takes_effort(ModelSpec("m", "M", "vendor/m", "t", None, None, None, None, reasoning="off"), None)
    assert takes_effort(plain, ("max_tokens", "reasoning"))
    assert takes_effort(plain, ("reasoning_effort",))
    assert not takes_effort(plain, ("max_tokens", "include_reasoning"))
    assert not takes_effort(plain, None)


def _refused(tmp_path: Path, entry: str) -> tuple[Path, str]:
    path = tmp_path / "config" / MODELS_FILE
    path.parent.mkdir(parents=True)
    path.write_text(textwrap.dedent("models:\n  mine:\n    id: vendor/mine\n") + entry, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_models(ConfigFiles(path.parent))
    return path, str(raised.value)


@pytest.mark.parametrize(
    ("entry", "key", "said"),
    [
        ("    base_url: http://127.0.0.1:9/v1\n    api_key_env: K\n    providers: [groq]\n", "models.mine.providers",
         "pinning a provider is OpenRouter's provider routing, and this entry's dialect is 'openai-compatible'. "
         "Fix: give the entry dialect: openrouter"),
        ("    providers: [groq, 'a b']\n", "models.mine.providers[1]", "'a b' is not a provider's name. Fix: name"),
        ("    providers: [groq, groq]\n", "models.mine.providers[1]", "duplicate 'groq'"),
        ("    reasoning_efforts: [low, extreme]\n", "models.mine.reasoning_efforts[1]",
         "'extreme' is not one of the known values. Fix: use one of: xhigh, high, medium, low, minimal, none"),
        ("    reasoning_efforts: []\n", "models.mine.reasoning_efforts", "empty list"),
    ],
)  # fmt: skip
def test_the_entry_keys_name_the_file_the_key_and_the_fix(tmp_path: Path, entry: str, key: str, said: str) -> None:
    path, message = _refused(tmp_path, entry)
    assert message.startswith(f"{path}: {key}: "), message
    assert said in message


def test_the_entry_keys_are_read(tmp_path: Path) -> None:
    path = tmp_path / "config" / MODELS_FILE
    path.parent.mkdir(parents=True)
    path.write_text(
        "models:\n  mine:\n    id: vendor/mine\n    providers: [groq, DeepInfra]\n    reasoning_efforts: [low, high]\n",
        encoding="utf-8",
    )
    mine = load_models(ConfigFiles(path.parent)).models["mine"]
    assert (mine.providers, mine.reasoning_efforts) == (("groq", "DeepInfra"), ("low", "high"))
