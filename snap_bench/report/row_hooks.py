"""The pytest plugin that shows each benchmark row as :mod:`snap_bench.report.rows` words it.

pytest-html's per-row markup is most of a large report, so a benchmark row's text goes into its log
area and the links column, always empty, is left out. The session registers this module when it runs
benchmarks (on the controller, where pytest-html writes the report); a project that builds the same
report from its own tests (the report bench, the browser test) loads it with
``pytest_plugins = ["snap_bench.report.row_hooks"]``. The hooks are optional: pytest-html may be
disabled with ``-p no:html``.
"""

from __future__ import annotations

import pytest

from snap_bench.outcomes import is_unscored
from snap_bench.report.rows import drop_links_column, label_unscored, row_log


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_header(cells: list[str]) -> None:
    drop_links_column(cells)


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_row(report: pytest.TestReport, cells: list[str]) -> None:
    drop_links_column(cells)
    if is_unscored(report):
        label_unscored(cells)


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_html(report: pytest.TestReport, data: list[str]) -> None:
    row_log(report, data)
