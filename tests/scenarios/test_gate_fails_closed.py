"""The gate fails closed, tried as a new user would in a project of its own: a selection that measures nothing,
a figure that cannot be computed, a misspelt instrument file, a baseline the run covers only in part, a renamed
questionnaire, every --snap-gate value, pytest's own statuses and one run's outputs per folder. Each run is asked
from the FAKE loopback server (tests/fake_openai_server.py), then replayed offline."""

from __future__ import annotations

import json
import zlib
from typing import Any

import pytest

from snap_bench.judging.gate import Gate
from tests.conftest import WORKERS, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

FAKE_KEY = "sk-fake-" + "0123456789abcdefghijklmnopqrstuvwxyz"
# Small designs, so that a scenario records in a second: two constructs, two temperatures, two runs, one prompt.
TEAM = """\
questionnaire: {name}
scale: {{points: 5, labels: [Strongly disagree, Disagree, Neutral, Agree, Strongly agree]}}
system_prompts: {{NEU: null}}
temperatures: [0, 1]
runs: 2
items:
  - {{id: C1, construct: composure, text: "I stay calm when plans fall apart."}}
  - {{id: C2, construct: composure, text: "Small setbacks make me lose my temper.", reverse: true}}
  - {{id: C3, construct: composure, text: "I keep my head in a crisis."}}
  - {{id: T1, construct: tidiness, text: "I keep my desk in order."}}
  - {{id: T2, construct: tidiness, text: "My room is usually a mess.", reverse: true}}
  - {{id: T3, construct: tidiness, text: "I put things back where they belong."}}
"""
VIEWS = {
    "I stay calm when plans fall apart.": "4",
    "Small setbacks make me lose my temper.": "2",
    "I keep my head in a crisis.": "5",
    "I keep my desk in order.": "2",
    "My room is usually a mess.": "4",
    "I put things back where they belong.": "1",
}
CONDITIONS = 6 * 2 * 2  # items x temperatures x runs


def follows_the_items(request: dict[str, Any]) -> str:
    return VIEWS[str(request["messages"][-1]["content"].split("\n\n")[1])]


def team_project(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, *names: str
) -> BenchProject:
    """A project with the questionnaires ``names``, each recorded from the fake; the key is then taken away."""
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    bench = BenchProject(pytester, fake_server.base_url, instruments=())
    for name in names:
        (bench.root / "benchmarks" / f"{name}.yaml").write_text(TEAM.format(name=name), encoding="utf-8")
    fake_server.script.answer = follows_the_items
    recorded = bench.run("--model=fake-model")
    assert recorded.ret == pytest.ExitCode.OK, recorded.stdout.str()
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    return bench


def save_baseline(bench: BenchProject, *args: str) -> str:
    path = bench.root / "baselines" / "fake-model.json"
    saved = bench.run("--model=fake-model", f"--snap-save-baseline={path}", *args)
    assert saved.ret == pytest.ExitCode.OK, saved.stdout.str()
    return str(path)


def last_line(result: pytest.RunResult) -> str:
    return [line for line in result.stdout.lines if line.startswith("exit status")][-1]


def test_a_temperature_the_questionnaire_is_not_asked_at_is_a_usage_error_naming_its_own(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = team_project(pytester, fake_server, monkeypatch, "team")
    result = bench.run("--model=fake-model", "--snap-temperatures=0.5", gate=True)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--snap-temperatures selects no condition of team: it is asked at temperature 0, 1*"])


@pytest.mark.parametrize("workers", WORKERS)
def test_one_item_leaves_its_judged_figures_undefined_and_they_never_pass(
    pytester: pytest.Pytester,
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    workers: tuple[str, ...],
) -> None:
    bench = team_project(pytester, fake_server, monkeypatch, "team")
    result = bench.run("--model=fake-model", "--snap-items=C1", "-rA", *workers, gate=True)
    # Nothing failed, and the judged figures could not be computed: the gate is incomplete, never green.
    assert result.ret == 6, result.stdout.str()
    assert "PASSED snap-bench::thresholds[fake-model-team-dependability" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*not judged (never a pass): fake-model dependability[[]t0[]]: undefined*"])
    result.stdout.fnmatch_lines(["*5 passed, 4 not judged*"])
    assert "the gate is incomplete" in last_line(result)
    not_computed = bench.analysis()["not_computed"]
    assert {entry["name"] for entry in not_computed} == {
        f"fake-model-team-{metric}[{t}]" for metric in ("dependability", "contradiction_rate") for t in ("t0", "t1")
    }
    assert "Not computed" in (bench.out / "summary.md").read_text(encoding="utf-8")


def test_a_misspelt_instrument_key_is_named_not_dropped(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = team_project(pytester, fake_server, monkeypatch, "team")
    text = TEAM.format(name="other").replace("questionnaire:", "questionaire:")
    (bench.root / "benchmarks" / "other.yaml").write_text(text, encoding="utf-8")
    result = bench.run("--model=fake-model", gate=True)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*other.yaml: the top-level key 'questionaire' is no instrument key*questionnaire:*"])


@pytest.mark.parametrize("workers", WORKERS)
def test_gating_one_file_against_a_baseline_of_two_names_the_other_and_is_incomplete(
    pytester: pytest.Pytester,
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    workers: tuple[str, ...],
) -> None:
    bench = team_project(pytester, fake_server, monkeypatch, "team", "crew")
    baseline = save_baseline(bench)
    result = bench.pytester.runpytest_subprocess(
        "benchmarks/team.yaml", "-p", "no:cacheprovider", "--model=fake-model", f"--baseline={baseline}", *workers
    )
    assert result.ret == 6, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*not compared fake-model crew: the baseline holds crew, and fake-model answered none*"]
    )
    assert "not compared" in last_line(result)
    names = [entry["name"] for entry in bench.analysis()["not_computed"]]
    assert "fake-model-vs-fake-model@baseline-crew-measured" in names
    assert "crew" in (bench.out / "summary.md").read_text(encoding="utf-8")


def test_a_renamed_questionnaire_is_named_both_ways_never_an_internal_error(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = team_project(pytester, fake_server, monkeypatch, "teamwork")
    baseline = save_baseline(bench)
    # The pull request renames the questionnaire (and records it under its new name).
    (bench.root / "benchmarks" / "teamwork.yaml").unlink()
    (bench.root / "benchmarks" / "crew.yaml").write_text(TEAM.format(name="crew"), encoding="utf-8")
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    result = bench.run("--model=fake-model", f"--baseline={baseline}", "--snap-gate=baseline", gate=True)
    assert result.ret == 6, result.stdout.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*not compared fake-model crew: the baseline holds no answer of crew*"])
    result.stdout.fnmatch_lines(["*not compared fake-model teamwork: the baseline holds teamwork*renamed or removed*"])


def test_every_gate_value_runs_through_a_session_and_states_what_it_follows(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = team_project(pytester, fake_server, monkeypatch, "team")
    baseline = save_baseline(bench)
    # One recording and one baseline, every documented value gated against it.
    for gate in ("thresholds", "baseline", "both", "drift", "baseline,drift", "both,drift", "thresholds,drift"):
        result = bench.run("--model=fake-model", f"--baseline={baseline}", f"--snap-gate={gate}", gate=True)
        assert "Traceback" not in result.stdout.str() + result.stderr.str(), gate
        line = last_line(result)
        assert line.startswith(f"exit status {int(result.ret)}:"), (gate, line)
        assert "--snap-gate" in line, gate
        # the same answers as the baseline: a gate on the comparison alone passes
        if gate in ("baseline", "baseline,drift"):
            assert result.ret == pytest.ExitCode.OK, (gate, result.stdout.str())
        session = json.loads((bench.out / "analysis.json").read_text(encoding="utf-8"))["session"]
        assert Gate.parse(session["gate"]) == Gate.parse(gate), gate


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (("benchmarks/nowhere",), pytest.ExitCode.USAGE_ERROR),
        (("benchmarks", "-k", "no_such_condition"), pytest.ExitCode.NO_TESTS_COLLECTED),
    ],
)
def test_the_last_line_states_the_status_pytest_returns(
    pytester: pytest.Pytester,
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    status: int,
) -> None:
    bench = team_project(pytester, fake_server, monkeypatch, "team")
    result = bench.pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider", "--model=fake-model")
    assert result.ret == status
    if status == pytest.ExitCode.NO_TESTS_COLLECTED:
        assert last_line(result).startswith(f"exit status {status}:")
        # one run's outputs: the recording run's analysis and summary are gone, this run's summary says why
        assert not (bench.out / "analysis.json").exists()
        assert f"exit status {status}" in (bench.out / "summary.md").read_text(encoding="utf-8")
    else:
        assert "exit status 0" not in result.stdout.str()


def test_the_terminal_and_summary_name_the_changes_file_under_snap_out(
    pytester: pytest.Pytester, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = team_project(pytester, fake_server, monkeypatch, "team")
    baseline = save_baseline(bench)
    out = "reports/gate-fake-model"
    result = bench.run("--model=fake-model", f"--baseline={baseline}", f"--snap-out={out}", gate=True)
    result.stdout.fnmatch_lines([f"*conditions changed their answer ({out}/changes.csv)*"])
    assert "reports/changes.csv" not in result.stdout.str()
    assert f"{out}/changes.csv" in (bench.root / out / "summary.md").read_text(encoding="utf-8")


def by_model_and_statement(request: dict[str, Any]) -> str:
    """A fixed answer per model and statement: two models disagree, each agrees with itself."""
    text = f"{request['model']}|{request['messages'][-1]['content']}"
    return str(zlib.crc32(text.encode()) % 5 + 1)


@pytest.mark.parametrize("workers", WORKERS)
def test_a_subset_of_the_profile_gated_against_a_baseline_of_the_same_subset_is_judged_not_an_internal_error(
    pytester: pytest.Pytester,
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    workers: tuple[str, ...],
) -> None:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    bench = BenchProject(pytester, fake_server.base_url)
    fake_server.script.answer = by_model_and_statement
    subset = ("--snap-items=M01,M06", "--snap-prompts=NEU,DIR", "--snap-runs=2", "--snap-temperatures=0")
    baseline = bench.root / "baselines" / "fake-model.json"
    saved = bench.run("--model=fake-model", *subset, f"--snap-save-baseline={baseline}", gate=True)
    assert "baseline written" in saved.stdout.str(), saved.stdout.str()
    # Another model, other answers: every paired method runs on a design with one paraphrase per item.
    result = bench.run(
        "--model=other-model", *subset, f"--baseline={baseline}", "--snap-gate=baseline", *workers, gate=True
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, 6), result.stdout.str()
    assert last_line(result).startswith(f"exit status {int(result.ret)}:")
    comparisons = bench.analysis()["baseline"]
    assert comparisons
    assert all(c["instrument"] == "profile" for c in comparisons)
    # a figure the narrowed design cannot pair is not compared, saying why, never a pass
    assert all(c["reason"] for c in comparisons if c["outcome"] == "not compared")
