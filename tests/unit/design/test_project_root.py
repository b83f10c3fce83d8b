"""The project root: the nearest folder holding snap-bench.toml above the run's paths or the start folder."""

from __future__ import annotations

from pathlib import Path

from snap_bench.asking.replay import recorded_output_tokens
from snap_bench.design.project import PROJECT_FILE, project_root
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


def test_tokens_per_answer_are_read_from_the_recordings(tmp_path: Path) -> None:
    assert recorded_output_tokens(tmp_path / "none") is None
    mean, read = recorded_output_tokens(REPO / "cassettes" / "qwen2.5-coder-1.5b" / "profile", limit=20) or (0, 0)
    assert read == 20
    assert 1 <= mean <= 24  # the profile's answer budget
