"""The project root a session reads config/, cassettes/, reports/ and baselines from, for a command line as pytest
parses it (pytester.parseconfig: pytest's own rootdir choice, no subprocess and no session run): no option's
value moves it, and no start folder moves a relative baseline path. pytest's contract: which rootdir pytest
chooses, and what the plugin makes of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.design.project import PROJECT_FILE
from snap_bench.judging.baseline import parse_baseline
from snap_bench.plugin.session import SnapSession
from snap_bench.session.settings import SessionSettings, project_folder
from tests.unit.session.test_second_ctrl_c import observation


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


def test_baseline_paths_are_the_project_roots_wherever_pytest_starts(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / PROJECT_FILE).write_text("", encoding="utf-8")
    monkeypatch.chdir(project / "benchmarks")
    config = pytester.parseconfig(".", "--snap-save-baseline=baselines/{model}.json")
    session = SnapSession(config, SessionSettings.from_config(config))
    kept = observation("4")
    session.stage.artefacts.save_baselines(str(config.getoption("snap_save_baseline")), ["m"], [kept], {"profile": "1"})
    # written where the CI workflow gates the root's baselines, not below benchmarks/
    assert session.stage.artefacts.saved_baselines == [project / "baselines" / "m.json"]
    assert not (project / "benchmarks" / "baselines").exists()
    # and read back from there by --baseline, as config/ and cassettes/ are
    spec = parse_baseline("baselines/m.json", [], root=session.stage.options.rootdir)
    assert (spec.model, len(spec.observations)) == ("m@baseline", 1)
    with pytest.raises(ValueError, match=r"--baseline baselines/x\.json: no such file \(looked for .*project"):
        parse_baseline("baselines/x.json", [], root=session.stage.options.rootdir)
