"""What the session tests of the instruments share: a project recorded once per module from the fake server and
copied into each test's folder, the gate of an unchanged model against its own baseline, the report's summary
section rendered from a session's result (what pytest-html embeds in report.html), and the dry run's plan."""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import snap_bench.instruments
from snap_bench.report.dry_run import dry_run_lines
from snap_bench.report.summary import summary_html
from snap_bench.report.trend_section import stored_trend
from snap_bench.session.command_line import CommandLine
from snap_bench.session.plan import SessionPlan
from snap_bench.session.run import SessionResult
from snap_bench.session.scope import RunPaths
from snap_bench.session.settings import SessionSettings
from tests.conftest import FAKE_KEY, BenchProject
from tests.fake_openai_server import FakeOpenAIServer

Answer = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class Recorded:
    """A project whose session recorded every answer: its folder, what the session decided, and what the fake
    server was asked."""

    root: Path
    result: SessionResult
    requests: tuple[dict[str, Any], ...]


def record(
    root: Path, prepare: Callable[[BenchProject], None], answer: Answer, *args: str, gate: bool = True
) -> Recorded:
    """A project in ``root`` (empty benchmarks/ that ``prepare`` fills) whose session records ``answer``'s
    answers from a fake server of its own (for a module-scoped fixture: the function-scoped one is not there)."""
    root.mkdir(parents=True)
    with FakeOpenAIServer() as server, pytest.MonkeyPatch.context() as environment:
        environment.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
        server.script.answer = answer
        project = BenchProject(root, server.base_url, instruments=())
        prepare(project)
        result = project.session(*args, gate=gate)
    assert not server.script.errors, f"the answer function raised: {server.script.errors[:3]}"
    return Recorded(root, result, tuple(server.script.requests))


def assert_asked_judged_and_passed(recorded: Recorded, instrument: str, conditions: int) -> dict[str, Any]:
    """A YAML instrument's whole recorded session: one condition per design cell asked once, answered, scored and
    recorded; every judged check passed; fake-model's PASS in the terminal; its entry in analysis.json returned."""
    result = recorded.result
    assert result.exit_status == pytest.ExitCode.OK, result.summary
    assert result.planned == conditions
    assert len(result.observations) == conditions
    assert all(observation.score is not None for observation in result.observations)
    assert result.checks
    assert all(check.passed and check.category is None for check in result.checks)
    summary = "\n".join(result.summary)
    assert f"verdicts for {instrument}" in summary
    assert "#1 fake-model: PASS" in summary
    assert len(recorded.requests) == conditions
    assert len(list((recorded.root / "cassettes" / "fake-model" / instrument).glob("*"))) == conditions
    assert result.judgement is not None
    model: dict[str, Any] = result.judgement.document["instruments"][instrument]["models"]["fake-model"]
    assert model["verdict"] == "PASS"
    return model


def copy_into(recorded: Recorded, project: BenchProject) -> BenchProject:
    """``project`` holding the recorded project's files (benchmarks, config, cassettes, outputs), its models.yaml
    too: a recording is matched on the request's URI, so the copy's models point at the recording's server (stopped
    now), and what the copy would ask instead of replaying fails rather than passes unnoticed."""
    shutil.copytree(recorded.root, project.root, dirs_exist_ok=True)
    return project


def empty_project(tmp_path: Path, base_url: str, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """A project with no benchmark module yet, the key of the fake server set."""
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    root = tmp_path / "project"
    root.mkdir()
    return BenchProject(root, base_url, instruments=())


def gates_against_itself(project: BenchProject, monkeypatch: pytest.MonkeyPatch, check: str, *args: str) -> None:
    """Replayed with no key, saved as fake-model's baseline and gated against it: an unchanged model passes
    the gate, ``check`` (INSTRUMENT-METRIC) among its compared figures and passed."""
    monkeypatch.delenv("FAKE_OPENAI_KEY", raising=False)
    saved = project.root / "baselines" / "fake-model.json"
    project.session("--model=fake-model", *args, f"--snap-save-baseline={saved}", gate=True)
    assert saved.is_file()
    gated = project.session("--model=fake-model", *args, f"--baseline={saved}", "--snap-gate=baseline", gate=True)
    assert gated.exit_status == pytest.ExitCode.OK, gated.summary
    compared = [c for c in gated.checks if c.name.startswith(f"fake-model-vs-fake-model@baseline-{check}")]
    assert any(c.passed and c.category is None for c in compared), [(c.name, c.category) for c in gated.checks]


def report_summary(root: Path, result: SessionResult, *args: str) -> str:
    """The report's summary section (what report.html holds above its table of tests) for the session that
    ``BenchProject.session(*args, gate=True)`` ran in the project at ``root`` and returned as ``result``: the
    instruments and thresholds planned as that session planned them."""
    assert result.judgement is not None, "a report section needs a judged session"
    assert result.judgement.document
    command_line = CommandLine(args, root=root)
    plan = SessionPlan(SessionSettings.from_config(command_line))
    paths = tuple(command_line.args) or (plan.options.benchmarks_dir,)
    plan.activate(RunPaths(paths, root, ("__pycache__", ".*")), runs_tests=False, read_catalogues=False)
    judged = result.judgement
    names = sorted({instrument for _, instrument in judged.analyses})
    thresholds = {
        name: {metric: dataclasses.asdict(limits) for metric, limits in plan.thresholds(name).metrics.items()}
        for name in names
    }
    models = sorted({model for model, _ in judged.analyses})
    trend = stored_trend(plan.options.history, models, names, problem=judged.store_problem)
    return summary_html(
        judged.document, result.observations, thresholds, plan.instruments, checks=judged.checks, trend=trend
    )


def import_conftest(path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """Import a project's conftest.py (which registers an instrument of its own, as pytest would import it for the
    project's run) against a copy of the registry that ``monkeypatch`` puts back: no other test of this process
    sees the project's instrument."""
    monkeypatch.setattr(snap_bench.instruments, "_REGISTRY", dict(snap_bench.instruments.registered()))
    spec = importlib.util.spec_from_file_location("project_conftest", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dry_run(root: Path, *args: str) -> list[str]:
    """The lines ``pytest <args> --snap-dry-run`` run at ``root`` prints for the whole of what its paths hold (the
    benchmarks folder when none is given): the plan as the plugin activates it for a run that only looks, every case.
    What a file path or ``-k`` leaves out is pytest's collection: tests/contract/test_unrecorded_and_dry_run.py."""
    command_line = CommandLine([*args, "--snap-dry-run"], root=root)
    plan = SessionPlan(SessionSettings.from_config(command_line))
    paths = tuple(command_line.args) or (plan.options.benchmarks_dir,)
    plan.activate(RunPaths(paths, root, ("__pycache__", ".*")), runs_tests=False)
    cases = [case for name in plan.in_run if name not in plan.not_asked for case in plan.cases(name)]
    return dry_run_lines(plan, cases)
