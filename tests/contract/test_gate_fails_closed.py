"""The gate fails closed, as pytest shows it (the session's own behaviour is tests/session/test_gate_fails_closed.py):
the status pytest ends with and the exit line that states it, and the outcome a check that could not be computed
has in pytest's count line, under xdist. Recordings are made in-process; each test runs pytest once."""

from __future__ import annotations

import pytest

# Imported before any test: pytester takes out of sys.modules what a test imported, and numpy (which the
# in-process judgement imports) cannot be loaded twice in one process.
import snap_bench.analysis.metric_tables  # noqa: F401
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.session.gate_projects import follows_the_team_items, record, write_team

NOT_MEASURED = 6


def team_project(bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """The team questionnaire alone, recorded from the fake in-process; the key is then taken away."""
    for module in (bench.root / "benchmarks").iterdir():
        module.unlink()
    write_team(bench, "team")
    fake_server.script.answer = follows_the_team_items
    record(bench, "--model=fake-model")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    return bench


def last_line(result: pytest.RunResult) -> str:
    return [line for line in result.stdout.lines if line.startswith("exit status")][-1]


def test_a_figure_that_cannot_be_computed_is_not_judged_in_pytests_count_under_xdist(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = team_project(bench, fake_server, monkeypatch)
    result = project.run("--model=fake-model", "--snap-items=C1", "-rA", "-n", "2", gate=True)
    assert result.ret == NOT_MEASURED, result.stdout.str()
    assert "PASSED snap-bench::thresholds[fake-model-team-dependability" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*not judged (never a pass): fake-model dependability[[]t0[]]: undefined*"])
    result.stdout.fnmatch_lines(["*5 passed, 4 not judged*"])
    assert "the gate is incomplete" in last_line(result)


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (("benchmarks/nowhere",), pytest.ExitCode.USAGE_ERROR),
        (("benchmarks", "-k", "no_such_condition"), pytest.ExitCode.NO_TESTS_COLLECTED),
    ],
)
def test_the_last_line_states_the_status_pytest_returns(
    bench: BenchProject,
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    status: int,
) -> None:
    project = team_project(bench, fake_server, monkeypatch)
    assert project.pytester is not None
    project.session("--model=fake-model", gate=True)  # a judged run before: its outputs are this folder's
    assert (project.out / "analysis.json").exists()
    result = project.pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider", "--model=fake-model")
    assert result.ret == status
    if status == pytest.ExitCode.NO_TESTS_COLLECTED:
        assert last_line(result).startswith(f"exit status {status}:")
        # one run's outputs: the recording run's analysis and summary are gone, this run's summary says why
        assert not (project.out / "analysis.json").exists()
        assert f"exit status {status}" in (project.out / "summary.md").read_text(encoding="utf-8")
    else:
        assert "exit status 0" not in result.stdout.str()
