"""The project root a session reads config/, cassettes/ and reports/ from, for a command line parsed in-process
(pytester.parseconfig: pytest's own rootdir choice, no subprocess): no option's value moves it."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.plugin.session_options import project_folder


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project without snap-bench.toml or an ini file, pytest started in it; a folder beside it."""
    root = pytester.path / "project"
    (root / "benchmarks").mkdir(parents=True)
    (pytester.path / "elsewhere" / "out").mkdir(parents=True)
    monkeypatch.chdir(root)
    return root


def test_an_existing_folder_after_snap_out_does_not_move_the_project(pytester: pytest.Pytester, project: Path) -> None:
    out = pytester.path / "elsewhere" / "out"
    spaced = pytester.parseconfig("benchmarks", "--snap-out", str(out))
    # pytest chose its rootdir before it knew --snap-out, so the value counted as a run path ...
    assert spaced.rootpath == pytester.path
    assert spaced.getoption("snap_out") == str(out)
    # ... but the project is where the run's paths are, as with the = form or without the option
    assert project_folder(spaced) == project
    assert project_folder(pytester.parseconfig("benchmarks", f"--snap-out={out}")) == project
    # an ini file at or above the run's paths, or --rootdir, still fixes it
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    assert project_folder(pytester.parseconfig("benchmarks", "--snap-out", str(out))) == project
    assert project_folder(pytester.parseconfig("benchmarks", f"--rootdir={out}")) == out
