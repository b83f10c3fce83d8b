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
