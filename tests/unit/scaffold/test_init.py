"""`snap-bench init`: the files a repository needs, written all or none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from snap_bench.cli import main
from snap_bench.design.config import MODELS_FILE, PACKAGED, ConfigFiles
from snap_bench.design.models import load_models
from snap_bench.instruments import Selection, instrument_file_kind, registered
from snap_bench.scaffold import Workflow, project_files, write_project
from snap_bench.scaffold.install import Install, install_from
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


def test_the_workflow_mirrors_this_repositorys_gate_and_recording(tmp_path: Path) -> None:
    files = project_files(workflow=Workflow.of(tmp_path))
    workflow = yaml.safe_load(files[".github/workflows/snap-bench.yml"])
    ours = yaml.safe_load((REPO / ".github" / "workflows" / "snap-bench.yml").read_text(encoding="utf-8"))
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == set(ours[True]) == {"pull_request", "schedule", "workflow_dispatch"}
    assert workflow["env"]["SNAP_BENCH"]
    gate = "\n".join(step.get("run", "") for step in workflow["jobs"]["gate"]["steps"])
    # what a team upgrading a model gates on: consistency not worse, no construct and no item moved
    assert "--snap-gate=baseline,drift,items" in gate
    assert "--baseline=" in gate
    record = workflow["jobs"]["record"]
    assert record["env"]["OPENROUTER_API_KEY"] == "${{ secrets.OPENROUTER_API_KEY }}"
    assert "--snap-max-cost" in "\n".join(step.get("run", "") for step in record["steps"])
    ignored = files[".gitignore"].splitlines()
    assert "reports/" in ignored
    assert ".env" in ignored
    assert "OPENROUTER_API_KEY=" in files[".env.example"].splitlines()


WHEEL = "snap_bench-1.2.3-py3-none-any.whl"


def _workflow_of(install: Install, keys: tuple[str, ...] = ("OPENROUTER_API_KEY",)) -> dict[str, Any]:
    workflow = yaml.safe_load(project_files(workflow=Workflow(install, keys))[".github/workflows/snap-bench.yml"])
    assert isinstance(workflow, dict)
    return workflow


def test_the_workflow_installs_what_was_installed_from_where_it_was_installed(tmp_path: Path) -> None:
    """pip's record of the install (direct_url.json) decides: no record is a package index, which has the version;
    a git URL is its commit; a remote archive itself; a wheel of this machine is committed with the project."""
    project, elsewhere = tmp_path / "project", tmp_path / "downloads"
    (project / "dist").mkdir(parents=True)
    elsewhere.mkdir()
    (project / "dist" / WHEEL).write_bytes(b"inside")
    (elsewhere / WHEEL).write_bytes(b"outside")
    git = {"url": "https://example.org/team/snap-bench.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}
    archive = {"url": f"https://example.org/{WHEEL}", "archive_info": {}}
    inside = {"url": (project / "dist" / WHEEL).as_uri(), "archive_info": {}}
    outside = {"url": (elsewhere / WHEEL).as_uri(), "archive_info": {}}
    checkout = {"url": (tmp_path / "snap-bench").as_uri(), "dir_info": {"editable": True}}
    expected = [
        (None, "snap-bench==1.2.3"),
        (git, "snap-bench @ git+https://example.org/team/snap-bench.git@abc123"),
        (archive, f"snap-bench @ https://example.org/{WHEEL}"),
        (inside, f"./dist/{WHEEL}"),
        (outside, f"./wheels/{WHEEL}"),
        (checkout, f"./wheels/{WHEEL}"),
    ]
    for direct_url, requirement in expected:
        install = install_from("1.2.3", direct_url, project)
        assert install.requirement == requirement, direct_url
        assert _workflow_of(install)["env"]["SNAP_BENCH"] == requirement
    assert "pip wheel --no-deps -w wheels" in install_from("1.2.3", checkout, project).how  # how to make it so

    copied = install_from("1.2.3", outside, project)
    done = write_project(project, {}, copied)
    assert done.written == [f"wheels/{WHEEL}"]
    assert (project / "wheels" / WHEEL).read_bytes() == b"outside"


def test_the_recording_job_takes_the_key_of_every_provider_the_models_file_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(tmp_path / "fresh")]) == 0
    assert "CI (.github/workflows/snap-bench.yml) installs " in capsys.readouterr().out
    fresh = yaml.safe_load((tmp_path / "fresh" / ".github/workflows/snap-bench.yml").read_text(encoding="utf-8"))
    keys = {"OPENROUTER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"}  # the template's entries
    assert {name: value for name, value in fresh["jobs"]["record"]["env"].items() if name != "MODEL"} == {
        key: f"${{{{ secrets.{key} }}}}" for key in keys
    }

    team = tmp_path / "team"
    (team / "config").mkdir(parents=True)
    (team / "config" / "models.yaml").write_text(
        "models:\n  ours:\n    id: ours/model\n    base_url: https://llm.example.org/v1\n    api_key_env: TEAM_KEY\n",
        encoding="utf-8",
    )
    assert main(["init", str(team)]) == 0
    workflow = yaml.safe_load((team / ".github/workflows/snap-bench.yml").read_text(encoding="utf-8"))
    assert set(workflow["jobs"]["record"]["env"]) == {"TEAM_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "MODEL"}


def test_a_models_file_init_cannot_read_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "models.yaml").write_text("models:\n  ours: [not, a, mapping]\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 2
    assert "models.yaml" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["config"]
