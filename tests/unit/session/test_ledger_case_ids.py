"""The ledger's expected tests as Case ids: what the session set out to ask (snap_bench.analysis.design_subset)."""

from __future__ import annotations

from snap_bench.session.ledger import ConditionLedger


def test_the_ledger_knows_the_case_ids_of_the_tests_it_expects_after_a_deselection() -> None:
    ledger = ConditionLedger()
    ledger.expect(["benchmarks/test_profile.py::test_likert[m-A1-NEU-t0-r1]", "b.py::test[m-A1-NEU-t0-r2]"])
    ledger.deselect(["b.py::test[m-A1-NEU-t0-r2]"])  # -k
    assert ledger.expected_case_ids() == {"m-A1-NEU-t0-r1"}
