"""The controller lets go of each benchmark report's observation once every plugin has read it.

pytest's terminal reporter keeps every test report until the session ends (``terminalreporter.stats``),
and pytest-html keeps them too; a benchmark test's call report carries its observation as a dict (with
the messages) and the row's question, which the ledger has copied by then. Kept on every report, that
was a second copy of every observation on the controller. Once the report has been through every
``pytest_runtest_logreport`` implementation (pytest-html draws a test's row when its teardown report
arrives: until then its call report is left whole), the observation is cut down to what a report is
still asked afterwards: its answer code, which says whether the test was ``unscored``
(:func:`snap_bench.plugin.outcomes.is_unscored`) and whether it sits in the conditions table
(:func:`snap_bench.plugin.row_hooks.in_conditions_table`).

Registered by the session on the controller only (workers send each report on at once).
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

from snap_bench.plugin import row_hooks
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE, QUESTION_ATTRIBUTE


class ReportSlimmer:
    name = "snap-bench-report-slimmer"  # as the plugin manager knows it

    def __init__(self) -> None:
        # nodeid -> its setup report, until its call report says whether it is a benchmark condition
        self._setups: dict[str, pytest.TestReport] = {}
        # nodeid -> its setup and call reports, whose row pytest-html draws when the teardown report arrives
        self._waiting: dict[str, list[pytest.TestReport]] = {}

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, None, None]:
        try:
            return (yield)
        finally:
            if report.when == "setup":
                self._setups[report.nodeid] = report
            elif report.when == "call":
                setup = self._setups.pop(report.nodeid, None)
                if isinstance(getattr(report, OBSERVATION_ATTRIBUTE, None), dict):
                    self._waiting[report.nodeid] = [*([setup] if setup is not None else []), report]
            elif report.when == "teardown":
                self._setups.pop(report.nodeid, None)
                waiting = self._waiting.pop(report.nodeid, None)
                if waiting is not None:
                    slim([*waiting, report])


def slim(reports: list[pytest.TestReport]) -> None:
    """A benchmark condition's reports once every plugin has read them: of the call report's observation only
    its answer code is kept and the row's question dropped; a passed report's keywords (the item's marker and
    node names, a dict of strings per report as xdist sends it) are read only when a test was skipped, and go."""
    for report in reports:
        values = getattr(report, OBSERVATION_ATTRIBUTE, None)
        if isinstance(values, dict):
            setattr(report, OBSERVATION_ATTRIBUTE, {"code": values.get("code")})
        if hasattr(report, QUESTION_ATTRIBUTE):
            delattr(report, QUESTION_ATTRIBUTE)
        if report.passed:
            report.keywords = {}


def register_controller_plugins(plugins: pytest.PytestPluginManager) -> None:
    """The controller's own plugins: the report rows (snap_bench.plugin.row_hooks) and the slimmer, once each."""
    if not plugins.is_registered(row_hooks):
        # Under its module's name, so that a project's `pytest_plugins` naming it too is no clash.
        plugins.register(row_hooks, row_hooks.__name__)
    if not plugins.has_plugin(ReportSlimmer.name):
        plugins.register(ReportSlimmer(), ReportSlimmer.name)
