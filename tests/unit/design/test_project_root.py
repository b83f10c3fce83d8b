"""The project root: the nearest folder holding snap-bench.toml above the run's paths or the start folder."""

from __future__ import annotations

from pathlib import Path

from snap_bench.asking.replay import recorded_output_tokens
from snap_bench.design.project import PROJECT_FILE, project_root, root_of_run_paths
from tests.conftest import REPO


def test_the_nearest_marked_folder_above_a_path_is_the_root(tmp_path: Path) -> None:
    (tmp_path / "benchmarks" / "deep").mkdir(parents=True)
    (tmp_path / "benchmarks" / "team.yaml").write_text("questionnaire: team\n", encoding="utf-8")
    assert project_root([tmp_path / "benchmarks" / "team.yaml", tmp_path]) is None
    (tmp_path / PROJECT_FILE).write_text("", encoding="utf-8")
    assert project_root([tmp_path / "benchmarks" / "team.yaml"]) == tmp_path
    assert project_root([tmp_path / "benchmarks" / "deep"]) == tmp_path
    (tmp_path / "benchmarks" / PROJECT_FILE).mkdir()  # a folder of that name marks nothing
    assert project_root([tmp_path / "benchmarks" / "deep"]) == tmp_path


def test_without_an_ini_file_the_root_is_pytests_rule_applied_to_the_run_paths(tmp_path: Path) -> None:
    (tmp_path / "repo" / "benchmarks" / "deep").mkdir(parents=True)
    repo, benchmarks = tmp_path / "repo", tmp_path / "repo" / "benchmarks"
    # started at the root: the root; started in benchmarks/ with a file there: benchmarks/ (as pytest's rootdir)
    assert root_of_run_paths(repo, [benchmarks / "deep"]) == repo
    assert root_of_run_paths(benchmarks, [benchmarks / "team.yaml", benchmarks / "deep"]) == benchmarks
    assert root_of_run_paths(repo, []) == repo
    (repo / "setup.py").write_text("", encoding="utf-8")
    assert root_of_run_paths(benchmarks, [benchmarks / "deep"]) == repo


def test_tokens_per_answer_are_read_from_the_recordings(tmp_path: Path) -> None:
    assert recorded_output_tokens(tmp_path / "none") is None
    mean, read = recorded_output_tokens(REPO / "cassettes" / "qwen2.5-coder-1.5b" / "profile", limit=20) or (0, 0)
    assert read == 20
    assert 1 <= mean <= 24  # the profile's answer budget
