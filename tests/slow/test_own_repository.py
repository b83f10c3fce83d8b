"""snap-bench in a team's own repository, as the team installs it: built as a wheel, installed (not editable) into a
fresh virtualenv with constraints.txt, and used in an empty folder outside this checkout. `snap-bench init` and its
console command, a dry run under pytest that lists the three instruments and the BFI-25 questionnaire (the plugin's
entry point and the packaged files, from the wheel), a team's own questionnaire recorded under pytest from the
wheel, and the team's own tests run by its plain `pytest` beside the benchmarks. What the session does in such a
repository (records, replays, gates, names what was never recorded): tests/session/test_own_repository.py.

The virtualenv is a plain ``python -m venv`` and pip installs every dependency into it from the package
index, with pip's cache: nothing is shared with the interpreter running this test, so a file missing from
the wheel or an import of this checkout fails here. Measured on 2 cores with pip's cache filled: 37 s to
build and install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from tests.conftest import FAKE_KEY, REPO
from tests.fake_openai_server import FakeOpenAIServer

INSTALL_TIMEOUT_S = 600


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without what would let the checkout in (PYTHONPATH) or make a child
    pytest take itself for part of this session (PYTEST_*, xdist's worker variables)."""
    kept = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith(("PYTEST_", "FAKE_"))}
    return {**kept, **extra}


def run(command: list[str | Path], cwd: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=clean_environment(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The bin/ folder of a fresh virtualenv holding snap-bench installed from its wheel: built once per test run,
    also when xdist gives this module's tests to both workers (the one that comes second waits for it)."""
    if worker_id == "master":
        return installed_wheel(tmp_path_factory.mktemp("wheel"))
    # the workers' temporary folders share a parent of this run's own
    shared = tmp_path_factory.getbasetemp().parent / "wheel"
    with FileLock(str(shared) + ".lock"):
        bin_dir = shared / "venv" / "bin"
        return bin_dir if (bin_dir / "snap-bench").is_file() else installed_wheel(shared)


def installed_wheel(root: Path) -> Path:
    """snap-bench built as a wheel under ``root`` and installed into a fresh virtualenv there; its bin/ folder."""
    root.mkdir(exist_ok=True)
    # The build reads only these: a copy keeps the checkout free of build/ and of stale files in the wheel.
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "snap_bench", source / "snap_bench", ignore=shutil.ignore_patterns("__pycache__"))
    wheels = root / "wheels"
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", wheels, source], root)
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("snap_bench-*.whl")
    environment = root / "venv"
    created = run([sys.executable, "-m", "venv", environment], root)
    assert created.returncode == 0, created.stderr
    bin_dir = environment / "bin"
    installed = run(
        [bin_dir / "python", "-m", "pip", "install", "-q", "-c", REPO / "constraints.txt", wheel],
        root,
        timeout=INSTALL_TIMEOUT_S,
    )
    assert installed.returncode == 0, installed.stderr
    return bin_dir


@pytest.mark.slow  # a wheel built and installed into a fresh virtualenv: minutes, so make test runs it, not test-lowest
def test_the_wheel_sets_a_repository_up_and_its_dry_run_lists_every_instrument(venv: Path, tmp_path: Path) -> None:
    where = run([venv / "python", "-c", "import snap_bench; print(snap_bench.__file__)"], tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(venv.parent / "lib"), where  # the wheel, not this checkout

    project = tmp_path / "project"
    project.mkdir()
    init = run([venv / "snap-bench", "init"], project)
    assert init.returncode == 0, init.stderr
    assert (project / "benchmarks" / "test_profile.py").is_file()
    assert sorted(path.name for path in (project / "config").iterdir()) == ["models.yaml"]
    again = run([venv / "snap-bench", "init"], project)  # nothing is overwritten: every file is kept
    assert again.returncode == 0, again.stderr
    assert "kept as they are" in again.stdout
    assert "  config/models.yaml\n" in again.stdout

    dry = run([venv / "pytest", "--snap-dry-run", "--model=gpt-5.2", "-p", "no:cacheprovider"], project)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    for name in ("profile", "compass", "perturbation", "bfi25"):
        assert f"instrument {name} (version " in dry.stdout
    # gpt-5.2 takes no temperature (the packaged entry says so without a key): each condition once, at the
    # provider's default
    assert "total: 2624 conditions for 1 model(s)" in dry.stdout
    assert not (project / "reports").exists()


def observations(project: Path) -> list[dict[str, Any]]:
    """The last session's observations.jsonl."""
    lines = (project / "reports" / "observations.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


TEAM_IGNORES = "build/\n*.log\n"
TEAM_PYPROJECT = """\
[project]
name = "team"
version = "1.0"

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra"
"""
TEAM_CONDITIONS = 48  # the skeleton questionnaire: 2 items x 4 system prompts x 2 temperatures x 3 runs


@pytest.mark.slow  # a wheel built and installed into a fresh virtualenv: minutes, so make test runs it, not test-lowest
def test_a_teams_repository_adopts_it_records_its_own_questionnaire_and_keeps_its_tests(
    venv: Path, tmp_path: Path
) -> None:
    """A repository with files of its own: init merges its .gitignore and keeps its pytest settings; the team
    records only its own questionnaire; its own `pytest` runs its own tests, not the benchmarks."""
    project = tmp_path / "team"
    (project / "tests").mkdir(parents=True)
    (project / ".gitignore").write_text(TEAM_IGNORES, encoding="utf-8")
    (project / "pyproject.toml").write_text(TEAM_PYPROJECT, encoding="utf-8")
    (project / "tests" / "test_team.py").write_text("def test_team():\n    assert 1 + 1 == 2\n", encoding="utf-8")

    init = run([venv / "snap-bench", "init", "--questionnaire", "team"], project)
    assert init.returncode == 0, init.stderr
    assert "added to .gitignore" in init.stdout
    ignores = (project / ".gitignore").read_text(encoding="utf-8")
    assert ignores.startswith(TEAM_IGNORES)
    assert "reports/" in ignores.splitlines()
    assert (project / "pyproject.toml").read_text(encoding="utf-8") == TEAM_PYPROJECT
    assert (project / "benchmarks" / "team.yaml").is_file()
    assert (project / "snap-bench.toml").is_file()
    version = run([venv / "snap-bench", "--version"], project)
    assert version.returncode == 0
    assert version.stdout.startswith("snap-bench ")

    with FakeOpenAIServer() as server:
        server.script.answer = lambda request: "4"
        with (project / "config" / "models.yaml").open("a", encoding="utf-8") as models:
            models.write(f"  team-model:\n    id: team/model\n    base_url: {server.base_url}\n")
            models.write("    api_key_env: TEAM_MODEL_KEY\n")
        live = run([venv / "pytest", "benchmarks/team.yaml", "--model=team-model"], project, TEAM_MODEL_KEY=FAKE_KEY)
        assert live.returncode in (0, 1), live.stdout[-3000:]
        assert len(server.script.requests) == TEAM_CONDITIONS

    own = run([venv / "pytest", "-q"], project)  # the team's own run: its tests only
    assert own.returncode == 0, own.stdout[-3000:]
    assert "1 passed" in own.stdout
    assert [record["instrument"] for record in observations(project)] == ["team"] * TEAM_CONDITIONS
