"""Adding an instrument touches no core module: a yes/no questionnaire defined only in a project's conftest.py
runs through planning, asking the fake server, analysis, thresholds, the gate, the report and a saved baseline
(docs/instruments.md: "Adding an instrument"). pytest importing that conftest.py and collecting the instrument's
test module: tests/contract/test_fourth_instrument.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.instrument_projects import YES_NO_CONDITIONS, truthful, write_yes_no
from tests.session.recorded import empty_project, import_conftest, report_summary


@pytest.fixture
def yes_no(tmp_path: Path, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """The project, its conftest.py imported as pytest would import it (the instrument registered for this test)."""
    project = empty_project(tmp_path, fake_server.base_url, monkeypatch)
    write_yes_no(project)
    import_conftest(project.root / "conftest.py", monkeypatch)
    return project


def test_a_fourth_instrument_runs_end_to_end(
    yes_no: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_server.script.answer = truthful
    result = yes_no.session("--model=fake-model", gate=True)
    assert result.exit_status == pytest.ExitCode.OK, result.summary
    # 3 questions x 2 runs, and the instrument's 2 checks
    assert result.planned == YES_NO_CONDITIONS
    assert [check.name for check in result.checks] == [
        "fake-model-yesno-tara_all_runs",
        "fake-model-yesno-unscored_rate",
    ]
    assert all(check.passed and check.category is None for check in result.checks)
    summary = "\n".join(result.summary)
    assert "verdicts for yesno" in summary
    assert "#1 fake-model: PASS (composite 1.000)" in summary
    assert sorted(p.name for p in (yes_no.cassettes / "fake-model" / "yesno").glob("*.json")) == [
        f"{item}-r{run}.json" for item in ("Q1", "Q2", "Q3") for run in (1, 2)
    ]
    assert result.judgement is not None
    entry = result.judgement.document["instruments"]["yesno"]
    model = entry["models"]["fake-model"]
    assert entry["title"] == "yes/no questionnaire"
    assert model["verdict"] == "PASS"
    assert model["metrics"]["yes_share"]["value"] == pytest.approx(4 / 6)
    assert model["metrics"]["tara_all_runs"]["status"] in ("target", "excellent")
    report = report_summary(yes_no.root, result, "--model=fake-model")
    assert 'id="snap-instrument-yesno"' in report
    assert "6 yes/no answers" in report

    # Replayed with no key, saved as a baseline, and gated against it: an unchanged model passes.
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    saved = yes_no.root / "baselines" / "fake-model.json"
    baseline = yes_no.session("--model=fake-model", f"--snap-save-baseline={saved}", gate=True)
    assert len(baseline.observations) == YES_NO_CONDITIONS
    assert all(observation.replayed for observation in baseline.observations)
    assert len(baseline.checks) == 2
    assert all(check.passed for check in baseline.checks)
    gated = yes_no.session("--model=fake-model", f"--baseline={saved}", "--snap-gate=baseline", gate=True)
    assert gated.exit_status == pytest.ExitCode.OK, gated.summary
    # every judged metric is compared: the shared tara_all_runs pairs by item like the profile's
    for metric in ("unscored_rate", "tara_all_runs"):
        comparison = gated.check(f"fake-model-vs-fake-model@baseline-yesno-{metric}")
        assert comparison.passed, comparison
        assert comparison.category is None, comparison


def test_an_instrument_that_answers_wrong_fails_its_own_checks(
    yes_no: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    """The same project with a model whose answers cannot be read: the instrument's checks fail the run."""
    fake_server.script.answer = lambda request: "maybe"
    result = yes_no.session("--model=fake-model", gate=True)
    assert result.exit_status == pytest.ExitCode.TESTS_FAILED
    assert result.check("fake-model-yesno-unscored_rate").fails_run
