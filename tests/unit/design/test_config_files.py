"""A project's config/ over the packaged defaults: file by file, and models.yaml extending the packaged list."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.design.config import MODELS_FILE, PACKAGED, ConfigError, ConfigFiles
from snap_bench.design.models import OPENROUTER_URL, load_models
from snap_bench.instruments import ProfileInstrument, load_instrument
from snap_bench.judging.verdicts import load_thresholds
from tests.conftest import SHIPPED, own_copy, perturbation_task

PROFILE_SPECS = {**SHARED_METRICS, **ProfileInstrument.metrics}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_a_project_without_a_config_folder_reads_the_packaged_files(tmp_path: Path) -> None:
    config = ConfigFiles(tmp_path / "config")
    assert config.path("thresholds.yaml") == PACKAGED / "thresholds.yaml"
    assert config.path("profile.yaml") == PACKAGED / "profile.yaml"
    assert config.own(MODELS_FILE) is None
    assert load_instrument("profile", config).version == load_instrument("profile", SHIPPED).version
    # a file that exists nowhere is the project's to create, and an error says so
    assert config.path("items/mine.yaml") == tmp_path / "config" / "items" / "mine.yaml"


def test_the_projects_file_wins_and_the_rest_stay_packaged(tmp_path: Path) -> None:
    folder = tmp_path / "config"
    prompt = own_copy(folder, "prompts/system/NEU.txt")
    prompt.write_text("You are a careful assistant.\n", encoding="utf-8")
    config = ConfigFiles(folder)
    profile = load_instrument("profile", config)
    assert profile.system_prompts["NEU"] == "You are a careful assistant."
    assert prompt in profile.source_files
    assert PACKAGED / "prompts" / "system" / "DIR.txt" in profile.source_files
    assert PACKAGED / "profile.yaml" in profile.source_files


def test_a_projects_profile_names_files_of_its_own_and_packaged_ones(tmp_path: Path) -> None:
    """The project's profile.yaml names prompts: its own where it has them, else the packaged ones; and the
    packaged profile.yaml reads the project's prompt too (a prompt overridden alone is not lost)."""
    folder = tmp_path / "config"
    profile_file = own_copy(folder, "profile.yaml")
    text = profile_file.read_text(encoding="utf-8").replace("id: M01", "id: X01")
    profile_file.write_text(text.replace("{file: prompts/system/ABS.txt}", "{file: prompts/mine.txt}"), "utf-8")
    write(folder / "prompts" / "mine.txt", "Answer tersely.\n")
    profile = load_instrument("profile", ConfigFiles(folder))
    assert "X01" in profile.selectable_items
    assert profile.system_prompts["ABS"] == "Answer tersely."
    assert PACKAGED / "prompts" / "system" / "DIR.txt" in profile.source_files


@pytest.mark.parametrize(
    ("relative", "text", "key", "fix"),
    [
        (
            "experiment.yaml",
            "profile:\n  likert_points: 7\n  item_banks: [items/moral.yaml]\n",
            "profile",
            "likert_points -> scale: {points, labels}; item_banks -> items (each item with its `bank`)",
        ),
        ("experiment.yaml", "compass:\n  runs: 3\n", "compass", "runs -> runs"),
        (
            "items/moral.yaml",
            "bank: moral\nitems:\n  - id: M01\n    reverse_scored: true\n",
            "items[].reverse_scored",
            "renaming reverse_scored -> reverse",
        ),
        (
            "items/compass.yaml",
            "items:\n  - id: E01\n    axis: economic\n",
            "items[].axis",
            "renaming axis -> construct",
        ),
    ],
)
def test_a_projects_file_in_the_retired_spellings_is_refused_naming_file_key_and_new_spelling(
    tmp_path: Path, relative: str, text: str, key: str, fix: str
) -> None:
    """experiment.yaml and the item banks are no longer read: a project's copy of one would lose its changes
    without a word, so the instrument it was for refuses to start, saying where each key goes now."""
    folder = tmp_path / "config"
    old = write(folder / relative, text)
    name = "compass" if "compass" in text or "compass" in relative else "profile"
    with pytest.raises(ConfigError) as raised:
        load_instrument(name, ConfigFiles(folder))
    assert str(raised.value).startswith(f"{old}: {key}: ")
    assert f"{name}.yaml" in str(raised.value)
    assert fix in str(raised.value)
    other = "profile" if name == "compass" else "compass"
    assert load_instrument(other, ConfigFiles(folder)).name == other  # the other instrument is not concerned


def test_a_projects_thresholds_replace_the_packaged_ones_and_errors_name_that_file(tmp_path: Path) -> None:
    folder = tmp_path / "config"
    thresholds = own_copy(folder, "thresholds.yaml")
    thresholds.write_text(thresholds.read_text(encoding="utf-8").replace("judge: point", "judge: ci", 1), "utf-8")
    assert load_thresholds(ConfigFiles(folder), "profile", {}, None, PROFILE_SPECS).judge == "ci"
    assert load_thresholds(SHIPPED, "profile", {}, None, PROFILE_SPECS).judge == "point"
    thresholds.write_text("profile:\n  judge: maybe\n  metrics: {}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_thresholds(ConfigFiles(folder), "profile", {}, None, PROFILE_SPECS)
    assert str(raised.value).startswith(f"{thresholds}: profile.judge: 'maybe' is not one of the known values")


def test_the_projects_models_extend_the_packaged_list(tmp_path: Path) -> None:
    folder = tmp_path / "config"
    write(
        folder / MODELS_FILE,
        """\
        defaults:
          rate_limit_per_minute: 30
        pilot: [mine]
        models:
          mine:
            id: vendor/mine
            base_url: http://127.0.0.1:11434/v1
            api_key_env: null
          gpt-5.2:
            id: openai/gpt-5.2-chat
        """,
    )
    shipped = load_models(SHIPPED)
    registry = load_models(ConfigFiles(folder))
    assert set(registry.models) == set(shipped.models) | {"mine"}
    mine = registry.models["mine"]
    assert (mine.base_url, mine.api_key_env, mine.dialect) == ("http://127.0.0.1:11434/v1", None, "openai-compatible")
    # an entry of the project replaces the packaged one whole
    assert registry.models["gpt-5.2"].provider_id == "openai/gpt-5.2-chat"
    assert registry.models["gpt-5.2"].reasoning is None
    # defaults merged key by key over the packaged ones, for every entry
    assert registry.default_base_url == OPENROUTER_URL
    assert registry.models["claude-haiku-4.5"].rate_limit_per_minute == 30
    assert registry.models["claude-haiku-4.5"].base_url == OPENROUTER_URL
    assert registry.pilot == ("mine",)
    assert "mine" not in shipped.pilot
    assert registry.sources["mine"] == folder / MODELS_FILE
    assert registry.sources["claude-haiku-4.5"] == PACKAGED / MODELS_FILE


def test_a_models_file_of_comments_only_changes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "config"
    write(folder / MODELS_FILE, "# my models\ndefaults:\n  # base_url: https://example.invalid/v1\nmodels:\n")
    registry = load_models(ConfigFiles(folder))
    shipped = load_models(SHIPPED)
    assert registry.models == shipped.models
    assert registry.pilot == shipped.pilot


def test_a_bad_entry_of_the_project_names_its_file_key_and_fix(tmp_path: Path) -> None:
    models = write(tmp_path / "config" / MODELS_FILE, "models:\n  mine:\n    id: vendor/mine\n    reasoning: loud\n")
    with pytest.raises(ConfigError) as raised:
        load_models(ConfigFiles(tmp_path / "config"))
    assert str(raised.value).startswith(f"{models}: models.mine.reasoning: 'loud' is not one of the known values")
    assert "Fix: use one of: xhigh" in str(raised.value)
    write(models, "pilot: [nobody]\n")
    with pytest.raises(ConfigError, match=r"models.yaml: pilot\[0\]: pilot model 'nobody' is not under models"):
        load_models(ConfigFiles(tmp_path / "config"))


def test_an_unknown_or_retired_model_names_where_to_look(tmp_path: Path) -> None:
    registry = load_models(ConfigFiles(tmp_path / "config"))
    with pytest.raises(ConfigError) as unknown:
        registry.resolve(["mine"])
    assert str(unknown.value).startswith(f"{tmp_path / 'config' / MODELS_FILE}: models: unknown model 'mine'")
    with pytest.raises(ConfigError) as retired:
        registry.resolve(["claude-3-opus"])
    assert str(retired.value).startswith(f"{PACKAGED / MODELS_FILE}: models.claude-3-opus.retired")


def test_a_projects_unchanged_copies_leave_every_version_alone(tmp_path: Path) -> None:
    """The version digests the design's content, not which folder holds each file."""
    folder = tmp_path / "config"
    for relative in ("profile.yaml", "compass.yaml", "prompts/system/NEU.txt", "data/rotten_tomatoes_test.csv"):
        own_copy(folder, relative)
    for name in ("profile", "compass"):
        assert load_instrument(name, ConfigFiles(folder)).version == load_instrument(name, SHIPPED).version, name
    # the study's data file is found in the project's config/ now, with the same content
    assert perturbation_task(ConfigFiles(folder)).version == perturbation_task().version
