"""One resolver of a session's models (snap_bench.session.plan.resolve_models): --model's, the pilot's or the
recorded ones, and the model --baseline replays, each entry built once, the baseline's like any other."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from snap_bench.design.models import load_models
from snap_bench.recordings.state import Recordings
from snap_bench.session.command_line import CommandLine
from snap_bench.session.plan import SessionPlan, resolve_models
from snap_bench.session.scope import RunPaths
from snap_bench.session.settings import SessionSettings, UsageProblem


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "models.yaml").write_text(
        textwrap.dedent("""\
        defaults:
          base_url: http://127.0.0.1:9/v1
          api_key_env: NO_SUCH_KEY_FOR_THIS_TEST
        models:
          new-model:
            id: vendor/new
          old-model:
            id: vendor/old
        """),
        encoding="utf-8",
    )
    for model in ("new-model", "old-model"):
        folder = tmp_path / "cassettes" / model / "profile"
        folder.mkdir(parents=True)
        (folder / "M01.json").write_text("{}", encoding="utf-8")
    return tmp_path


def _resolved(root: Path, *argv: str) -> list[tuple[str, int | None]]:
    settings = SessionSettings.from_config(CommandLine(argv, root=root))
    registry = load_models(settings.config)
    resolved = resolve_models(registry, settings, Recordings(settings.cassette_dir), read_catalogues=False)
    return [(model.name, model.top_logprobs) for model in resolved.models]


def test_the_replayed_baseline_model_is_resolved_like_the_models_it_is_compared_with(root: Path) -> None:
    # --snap-logprobs reaches every model asked in the session: the baseline model's answers are read the same way
    assert _resolved(root, "--model=new-model", "--baseline=old-model", "--snap-logprobs=3") == [
        ("new-model", 3),
        ("old-model", 3),
    ]


def test_without_model_the_recorded_models_are_resolved_once_each(root: Path) -> None:
    assert _resolved(root, "--baseline=old-model") == [("new-model", None), ("old-model", None)]


def test_an_unknown_model_is_a_usage_problem_naming_the_file_and_the_fix(root: Path) -> None:
    plan = SessionPlan(SessionSettings.from_config(CommandLine(["--model=nope"], root=root)))
    with pytest.raises(UsageProblem, match=r"models\.yaml.*unknown model 'nope'.*Fix: use one of: .*new-model"):
        plan.activate(RunPaths(("benchmarks",), root), read_catalogues=False)


def _served_root(tmp_path: Path, entry: str = "") -> Path:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "models.yaml").write_text(
        textwrap.dedent("""\
        defaults:
          base_url: http://127.0.0.1:9/api/v1
          api_key_env: NO_SUCH_KEY_FOR_THIS_TEST
        models:
          routed:
            id: vendor/routed
            dialect: openrouter
            reasoning: low
        """)
        + entry,
        encoding="utf-8",
    )
    return tmp_path


def _servings(root: Path, *argv: str) -> list[tuple[str, object, str | None]]:
    settings = SessionSettings.from_config(CommandLine(argv, root=root))
    resolved = resolve_models(load_models(settings.config), settings, Recordings(settings.cassette_dir), None, False)
    return [(model.name, (model.routing or {}).get("only"), model.reasoning) for model in resolved.models]


def test_the_options_expand_each_model_into_its_servings_and_the_model_itself_is_not_asked(tmp_path: Path) -> None:
    root = _served_root(tmp_path)
    assert _servings(root, "--model=routed", "--snap-providers=groq,DeepInfra", "--snap-efforts=high") == [
        ("routed@groq@effort-high", ["groq"], "high"),
        ("routed@DeepInfra@effort-high", ["DeepInfra"], "high"),
    ]


def test_an_option_wins_over_its_entry_key_and_the_other_key_still_applies(tmp_path: Path) -> None:
    entry = "    providers: [groq, together]\n    reasoning_efforts: [low, high]\n"
    root = _served_root(tmp_path, entry)
    assert [name for name, _, _ in _servings(root, "--model=routed", "--snap-providers=fireworks")] == [
        "routed@fireworks@effort-low",
        "routed@fireworks@effort-high",
    ]
    assert len(_servings(root, "--model=routed")) == 4  # the entry's own levels, crossed


def test_the_baseline_model_is_not_expanded_and_each_serving_is_compared_with_it(tmp_path: Path) -> None:
    root = _served_root(tmp_path)
    folder = root / "cassettes" / "routed" / "profile"
    folder.mkdir(parents=True)
    (folder / "M01.json").write_text("{}", encoding="utf-8")
    assert [name for name, _, _ in _servings(root, "--model=routed", "--baseline=routed", "--snap-efforts=high")] == [
        "routed@effort-high",
        "routed",
    ]


def test_offline_without_options_the_recorded_servings_are_the_models(tmp_path: Path) -> None:
    root = _served_root(tmp_path)
    for name in ("routed@groq", "routed@effort-high"):
        folder = root / "cassettes" / name / "profile"
        folder.mkdir(parents=True)
        (folder / "M01.json").write_text("{}", encoding="utf-8")
    assert _servings(root) == [("routed@effort-high", None, "high"), ("routed@groq", ["groq"], "low")]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--model=plain", "--snap-efforts=low,high"],
         r"plain does not take a reasoning effort, and --snap-efforts asks it at effort low: its models.yaml entry "
         r"sets no reasoning:, and no catalogue says it takes reasoning, reasoning_effort\. Fix: leave plain out"),
        (["--model=local", "--snap-providers=groq"],
         r"local: --snap-providers asks it through pinned providers, and pinning a provider is OpenRouter's provider "
         r"routing; local goes to 127\.0\.0\.1:8 in the 'openai-compatible' dialect.*Fix: compare providers on an "
         r"entry with dialect: openrouter"),
    ],
)  # fmt: skip
def test_a_level_the_model_cannot_be_asked_at_is_a_usage_problem_naming_it(
    tmp_path: Path, argv: list[str], said: str
) -> None:
    entries = "  plain:\n    id: vendor/plain\n    dialect: openrouter\n"
    entries += "  local:\n    id: vendor/local\n    base_url: http://127.0.0.1:8/v1\n    api_key_env: null\n"
    root = _served_root(tmp_path, entries)

    def activate() -> None:
        plan = SessionPlan(SessionSettings.from_config(CommandLine(argv, root=root)))
        plan.activate(RunPaths(("benchmarks",), root), read_catalogues=False)

    with pytest.raises(UsageProblem, match=said):
        activate()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--snap-providers=groq,a b"], r"--snap-providers: 'a b' is not a provider's name\. Fix: name providers"),
        (["--snap-efforts=low,extreme"], r"--snap-efforts: 'extreme' is not a reasoning effort\. Fix: use xhigh, "),
    ],
)
def test_a_level_no_provider_or_effort_has_is_refused_as_the_option_is_read(argv: list[str], said: str) -> None:
    # pytest shows an option value its type refuses as a usage error (exit 4); read in-process, a ValueError
    with pytest.raises(ValueError, match=said):
        CommandLine(argv, root=Path("."))
