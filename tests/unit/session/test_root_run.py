"""A run that collected no benchmark condition (pytest at a repository's root, whose testpaths are the team's
own tests) says how to run the benchmarks, not only that nothing was judged (BenchmarkSession.exit_findings)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from snap_bench.judging.exit_status import BenchExit, decide
from snap_bench.judging.gate import Gate
from snap_bench.session.ledger import ConditionLedger
from snap_bench.session.stage import BenchmarkSession


def _session(tmp_path: Path, ledger: ConditionLedger) -> SimpleNamespace:
    options = SimpleNamespace(out_dir=tmp_path, gate=Gate.parse("thresholds"), analyse=True)
    return SimpleNamespace(options=options, models=[], ledger=ledger, judgement=None)


def test_a_run_of_other_tests_only_says_to_name_the_benchmarks_folder(tmp_path: Path) -> None:
    decision = decide(BenchmarkSession.exit_findings(_session(tmp_path, ConditionLedger())))  # type: ignore[arg-type]
    assert decision.code == BenchExit.NOT_MEASURED
    assert "no benchmark test was collected" in decision.reason
    assert "pytest benchmarks" in decision.reason


def test_a_run_whose_conditions_all_went_unanswered_is_not_told_to_name_the_folder(tmp_path: Path) -> None:
    ledger = ConditionLedger()
    ledger.expect(["benchmarks/test_profile.py::test_likert[m-M01-P1-NEU-t0-C0-r1]"])
    decision = decide(BenchmarkSession.exit_findings(_session(tmp_path, ledger)))  # type: ignore[arg-type]
    assert decision.code == BenchExit.NOT_MEASURED
    assert "pytest benchmarks" not in decision.reason
