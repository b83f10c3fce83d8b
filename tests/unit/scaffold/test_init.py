"""`snap-bench init`: the files a repository needs, written all or none."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from snap_bench.cli import main
from snap_bench.design.config import MODELS_FILE, PACKAGED, ConfigFiles
from snap_bench.design.models import load_models
from snap_bench.instruments import Selection, instrument_file_kind, registered
from snap_bench.scaffold import project_files
from tests.conftest import REPO, SHIPPED

WRITTEN = [
    *(f"benchmarks/test_{name}.py" for name in registered()),
    "benchmarks/bfi25.yaml",
    "benchmarks/perturbation.yaml",
    "snap-bench.toml",
    "config/models.yaml",
    ".env.example",
    ".gitignore",
    ".github/workflows/snap-bench.yml",
]


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["--help"])
    assert raised.value.code == 0
    assert "{history,glossary,init}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as raised:
        main(["--version"])
    assert raised.value.code == 0
    assert capsys.readouterr().out.startswith("snap-bench ")
    with pytest.raises(SystemExit):
        main(["init", "--help"])
    assert str(PACKAGED) in capsys.readouterr().out  # where the defaults a project may override are


def test_init_writes_every_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path / "project")]) == 0
    written = sorted(str(path.relative_to(tmp_path / "project")) for path in tmp_path.rglob("*") if path.is_file())
    assert written == sorted(WRITTEN)
    out = capsys.readouterr().out
    assert all(f"  {relative}\n" in out for relative in WRITTEN)
    assert "--snap-dry-run" in out


def test_init_keeps_the_teams_files_and_merges_its_gitignore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".gitignore").write_text("build/\n.env", encoding="utf-8")  # no newline at its end
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "test_compass.py").write_text("# mine\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "kept as they are" in out
    assert "  benchmarks/test_compass.py\n" in out
    assert (tmp_path / "benchmarks" / "test_compass.py").read_text(encoding="utf-8") == "# mine\n"
    lines = (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["build/", ".env"]
    assert lines.count(".env") == 1
    assert "reports/" in lines
    assert "added to .gitignore" in out
    assert (tmp_path / "config" / "models.yaml").is_file()
    assert main(["init", str(tmp_path)]) == 0  # again: nothing left to add
    assert "wrote" not in capsys.readouterr().out
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines() == lines


@pytest.mark.parametrize(
    ("choice", "taken"),
    [
        ("none", []),
        ("compass,bfi25", ["benchmarks/test_compass.py", "benchmarks/bfi25.yaml"]),
        ("all", [path for path in WRITTEN if path.startswith("benchmarks/")]),
    ],
)
def test_init_takes_the_shipped_instruments_chosen(tmp_path: Path, choice: str, taken: list[str]) -> None:
    assert main(["init", str(tmp_path), f"--instruments={choice}"]) == 0
    benchmarks = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "benchmarks").glob("*")) if taken else []
    assert benchmarks == sorted(taken)


def test_init_writes_a_questionnaire_of_the_teams_own(tmp_path: Path) -> None:
    assert main(["init", str(tmp_path), "--instruments=none", "--questionnaire", "team"]) == 0
    written = tmp_path / "benchmarks" / "team.yaml"
    instrument = instrument_file_kind(written, ConfigFiles(tmp_path / "config"))(ConfigFiles(tmp_path / "config"))
    assert instrument.name == "team"
    assert len(instrument.conditions(Selection())) == 48


@pytest.mark.parametrize(
    ("arguments", "named"),
    [(["--instruments=profile,mine"], "'mine'"), (["--questionnaire", "bfi25"], "not a name of its own")],
)
def test_a_bad_choice_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], arguments: list[str], named: str
) -> None:
    assert main(["init", str(tmp_path), *arguments]) == 2
    assert named in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_the_test_modules_are_this_repositorys() -> None:
    """One source: the modules and YAML files in benchmarks/ here are the ones init writes."""
    files = project_files()
    for name in registered():
        relative = f"benchmarks/test_{name}.py"
        assert files[relative] == (REPO / relative).read_text(encoding="utf-8"), relative
    for relative in ("benchmarks/bfi25.yaml", "benchmarks/perturbation.yaml"):
        assert files[relative] == (REPO / relative).read_text(encoding="utf-8"), relative


def test_the_models_template_extends_the_packaged_list(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / MODELS_FILE).write_text(project_files()["config/models.yaml"], encoding="utf-8")
    registry = load_models(ConfigFiles(config))
    shipped = load_models(SHIPPED)
    kinds = ("openrouter", "openai", "anthropic", "gemini", "local")
    assert set(registry.models) == set(shipped.models) | {f"my-{kind}-model" for kind in kinds}
    assert registry.pilot == shipped.pilot
    openrouter, openai, local = (registry.models[f"my-{kind}-model"] for kind in ("openrouter", "openai", "local"))
    assert (openrouter.base_url, openrouter.api_key_env) == ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY")
    assert (openai.base_url, openai.api_key_env, openai.dialect) == (
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        "openai",
    )
    assert (local.base_url, local.api_key_env) == ("http://127.0.0.1:11434/v1", None)
    # the providers' own APIs by `dialect:` alone: their base URL and documented key variable
    anthropic, gemini = registry.models["my-anthropic-model"], registry.models["my-gemini-model"]
    assert (anthropic.base_url, anthropic.api_key_env) == ("https://api.anthropic.com", "ANTHROPIC_API_KEY")
    assert (gemini.base_url, gemini.api_key_env) == ("https://generativelanguage.googleapis.com", "GEMINI_API_KEY")


def test_the_workflow_mirrors_this_repositorys_gate_and_recording() -> None:
    files = project_files()
    workflow = yaml.safe_load(files[".github/workflows/snap-bench.yml"])
    ours = yaml.safe_load((REPO / ".github" / "workflows" / "snap-bench.yml").read_text(encoding="utf-8"))
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == set(ours[True]) == {"pull_request", "schedule", "workflow_dispatch"}
    assert workflow["env"]["SNAP_BENCH"].startswith("snap-bench")
    gate = "\n".join(step.get("run", "") for step in workflow["jobs"]["gate"]["steps"])
    assert "--snap-gate=baseline" in gate
    assert "--baseline=" in gate
    record = workflow["jobs"]["record"]
    assert record["env"]["OPENROUTER_API_KEY"] == "${{ secrets.OPENROUTER_API_KEY }}"
    assert "--snap-max-cost" in "\n".join(step.get("run", "") for step in record["steps"])
    ignored = files[".gitignore"].splitlines()
    assert "reports/" in ignored
    assert ".env" in ignored
    assert "OPENROUTER_API_KEY=" in files[".env.example"].splitlines()
