"""The report's first screen says what the exit status said and why, counts the checks that failed outside the
gate as such, and pytest-html's counts bar files them apart from the passed tests (snap_bench.report.first_screen,
snap_bench.plugin.reporting)."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest
from pytest_html.report_data import ReportData

from snap_bench.instruments import metric_catalogue
from snap_bench.judging.checks import threshold_record
from snap_bench.judging.exit_status import BenchExit, ExitDecision
from snap_bench.plugin import reporting
from snap_bench.plugin.reporting import CHECK_CATEGORY_ATTRIBUTE, NOT_GATED
from snap_bench.report.first_screen import ExitLine, first_screen
from tests.unit.report.test_first_screen import HIGHER, check, matrix_document


def _checks() -> list[Any]:
    """Two thresholds that passed and one that failed, the exit status following the baseline only."""
    passed = threshold_record("m-a", "snap", check("dependability", 0.9, HIGHER), gated=False)
    failed = threshold_record("m-b", "snap", check("dependability", 0.2, HIGHER), gated=False)
    return [passed, dataclasses.replace(passed, name="m-c"), failed]


def test_the_first_screen_opens_with_the_exit_status_and_its_reason() -> None:
    decision = ExitDecision(BenchExit.PASSED, "every gated check was computed and passed")
    line = ExitLine(decision.code, decision.reason, "the baseline comparison")
    html = first_screen(matrix_document(), [], _checks(), metric_catalogue(), line)
    first = html[html.index('<p class="snap-exit"') : html.index('<div class="snap-first">')]
    assert 'snap-badge-pass">exit status 0</span>' in first
    assert "every gated check was computed and passed" in first
    assert "the exit status follows the baseline comparison" in first
    assert "3 checks: 0 failed, 1 failed outside the gate (ungated)" in html
    failed = first_screen(matrix_document(), [], _checks(), metric_catalogue(), ExitLine(1, "1 check(s) failed"))
    assert 'snap-badge-fail">exit status 1</span>' in failed


def _html_report() -> ReportData:
    config = SimpleNamespace(getini=lambda name: {"render_collapsed": "passed", "initial_sort": "result"}[name])
    return ReportData(config)


def _check_report(outcome: str, category: str | None) -> pytest.TestReport:
    location = ("snap-bench", None, "thresholds[m-b]")
    report = pytest.TestReport("snap-bench::thresholds[m-b]", location, {}, outcome, None, "call")  # type: ignore[arg-type]
    if category is not None:
        setattr(report, CHECK_CATEGORY_ATTRIBUTE, category)
    return report


def test_the_counts_bar_files_a_check_failed_outside_the_gate_apart_from_the_passed() -> None:
    html_report = _html_report()
    reporting.pytest_html_report_title(html_report)
    try:
        for report in (_check_report("passed", NOT_GATED), _check_report("passed", None)):
            cells = ['<td class="col-result">Passed</td>', f'<td class="col-testId">{report.nodeid}</td>', "", ""]
            reporting.pytest_html_results_table_row(report, cells)
            html_report.add_test({}, report, "Passed", [])  # what pytest-html does with the row next
    finally:
        reporting._REPORT_DATA.clear()
    outcomes = html_report.outcomes
    assert (outcomes["passed"]["value"], outcomes[NOT_GATED]["value"], outcomes["failed"]["value"]) == (1, 1, 0)
    assert list(outcomes).index(NOT_GATED) == list(outcomes).index("failed") + 1
