"""The pytest plugin that shapes pytest-html's results table for a benchmark session.

A benchmark condition with an observation leaves pytest-html's table: the report's own conditions table
(:mod:`snap_bench.report.conditions`) shows it, searchable and in a fraction of the time, because
pytest-html draws every row into the page when it opens. Its outcome is still counted in pytest-html's
filter line, and an answer without a score is counted as ``Unscored`` (an outcome pytest-html does not
know; its count is added to the line, as the terminal counts it), so the HTML's counts are the
terminal's. What stays in the table is what a reader must see as a test: the threshold and baseline
checks, failed or errored conditions (with the observation's text as their log) and other tests.

The session registers this module when it runs benchmarks (on the controller, where pytest-html writes
the report); a project that builds the same report from its own tests (the report bench, the browser
test) loads it with ``pytest_plugins = ["snap_bench.plugin.row_hooks"]``. The hooks are optional:
pytest-html may be disabled with ``-p no:html``.
"""

from __future__ import annotations

from typing import Any

import pytest

from snap_bench.plugin.outcomes import UNSCORED, is_unscored
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE, drop_links_column, label_unscored, row_log

# pytest-html's report data of this process's session (handed to pytest_html_report_title), whose outcome
# counts the rows left out of its table still go into. A list, so the hooks below can replace it.
_REPORT_DATA: list[Any] = []


@pytest.hookimpl(optionalhook=True)
def pytest_html_report_title(report: Any) -> None:
    _REPORT_DATA[:] = [report]
    outcomes = report.outcomes
    if UNSCORED not in outcomes:
        # After "passed", as the terminal lists it; pytest-html renders the dict in its order.
        ordered = list(outcomes.items())
        at = next((i + 1 for i, (key, _) in enumerate(ordered) if key == "passed"), len(ordered))
        ordered.insert(at, (UNSCORED, {"label": "Unscored", "value": 0}))
        outcomes.clear()
        outcomes.update(ordered)


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_header(cells: list[str]) -> None:
    drop_links_column(cells)


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_row(report: pytest.TestReport, cells: list[str]) -> None:
    drop_links_column(cells)
    if in_conditions_table(report) and _REPORT_DATA:
        # pytest-html skips a row left without cells, count included: count it here (its public setter).
        _REPORT_DATA[0].outcomes = UNSCORED if is_unscored(report) else "passed"
        cells.clear()
    elif is_unscored(report):
        label_unscored(cells)


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_summary(prefix: list[str], summary: list[str], postfix: list[str]) -> None:
    """Drop the empty entries pytest-html's teardown bookkeeping leaves for the rows taken out of its table
    (one key per condition in its embedded data: 0.6 MB for the shipped 7,912)."""
    if _REPORT_DATA:
        tests = _REPORT_DATA[0].data["tests"]
        for nodeid in [nodeid for nodeid, entries in tests.items() if not entries]:
            del tests[nodeid]


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_html(report: pytest.TestReport, data: list[str]) -> None:
    row_log(report, data)


def in_conditions_table(report: Any) -> bool:
    """A condition's passed call with an observation: the report's conditions table shows it."""
    return (
        getattr(report, "when", None) == "call"
        and bool(getattr(report, "passed", False))
        and isinstance(getattr(report, OBSERVATION_ATTRIBUTE, None), dict)
    )
