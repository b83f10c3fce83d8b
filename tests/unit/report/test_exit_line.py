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


def test_an_undecided_gate_is_neither_a_pass_nor_a_failure_on_the_first_screen() -> None:
    undecided = dataclasses.replace(_checks()[0], name="m-vs-b-snap-cv_mean", kind="baseline", decision="undecided")
    line = ExitLine(
        BenchExit.UNDECIDED, "undecided: 1 gated check(s) could not tell", "the baseline comparison, against b"
    )
    html = first_screen(matrix_document(), [], [*_checks(), undecided], metric_catalogue(), line)
    first = html[html.index('<p class="snap-exit"') : html.index('<div class="snap-first">')]
    assert 'snap-badge-incomplete">exit status 7</span>' in first
    assert "against b" in first
    assert "4 checks: 0 failed, 1 failed outside the gate (ungated), 1 undecided (never a pass)" in html


def test_the_items_changed_beyond_the_run_noise_have_a_section_of_their_own() -> None:
    from snap_bench.report.summary import changed_items_table

    item = {"model": "new", "baseline": "old", "instrument": "quiz", "conditions": 24, "changed_conditions": 20}
    document = {
        "changes": {
            "items": [
                {**item, "item": "Q07", "shift": 1.5, "q": 0.0002, "reliable": True},
                {**item, "item": "Q02", "shift": 0.1, "q": 0.8, "reliable": False},
                {**item, "item": "<b>Q09</b>", "shift": -1.25, "q": 0.01, "reliable": True},
            ]
        }
    }
    table = changed_items_table(document)
    rows = table.split("<tbody>", 1)[1]
    # only the reliable ones, smallest q first, every text escaped
    assert rows.index("Q07") < rows.index("&lt;b&gt;Q09&lt;/b&gt;")
    assert "Q02" not in rows
    assert "+1.50" in rows
    assert "-1.25" in rows
    assert "0.0002" in rows
    assert changed_items_table({"changes": {"items": [{**item, "item": "Q02", "reliable": False}]}}) == ""
