"""The session's reporter: the terminal summary and pytest-html's summary and title, drawn from the session.

A plugin of its own beside the session object (as pytest-xdist keeps its reporter apart from ``DSession``):
the session gathers and judges, the reporter only shows what it holds.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from snap_bench.asking.pacing import pace_summary
from snap_bench.asking.state_folder import state_folder
from snap_bench.judging.changes import changed_keys
from snap_bench.plugin.ci_outputs import ci_annotations
from snap_bench.plugin.terminal import summary_lines, verdict_block

if TYPE_CHECKING:
    from snap_bench.plugin.session import SnapSession


class SessionReporter:
    def __init__(self, session: SnapSession) -> None:
        self.session = session

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        """pytest-html: the verdicts, metric tables and charts above the per-test table."""
        if self.session.is_worker or not self.session.active:
            return
        if self.session.judgement is None or not self.session.judgement.document:
            # Nothing judged (--snap-no-analysis): the conditions still have their table, having left pytest-html's.
            from snap_bench.report.conditions import conditions_only

            summary.append(conditions_only(self.session.observations))
            return
        from snap_bench.report.summary import summary_html
        from snap_bench.report.trend_section import stored_trend

        thresholds = {
            instrument: {name: dataclasses.asdict(t) for name, t in self.session.thresholds(instrument).metrics.items()}
            for instrument in {instrument for _, instrument in self.session.judgement.analyses}
        }
        # The store already holds this session's figures (the gate wrote them): the trend ends with them.
        trend = stored_trend(
            self.session.options.history,
            sorted({model for model, _ in self.session.judgement.analyses}),
            sorted({instrument for _, instrument in self.session.judgement.analyses}),
            problem=self.session.judgement.store_problem,
        )
        # `summary`, not `prefix`: pytest-html puts the prefix in a narrow column.
        summary.append(
            summary_html(
                self.session.judgement.document,
                self.session.observations,
                thresholds,
                self.session.instruments,
                checks=self.session.judgement.checks,
                trend=trend,
                changed=changed_keys(self.session.judgement.changes) if self.session.judgement.changes else None,
            )
        )

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_report_title(self, report: Any) -> None:
        """pytest-html: the page's title names the product, the models and the date (not the file name)."""
        if not self.session.is_worker and self.session.active:
            from snap_bench.report.first_screen import report_title

            report.title = report_title([model.name for model in self.session.models], dt.datetime.now(dt.UTC).date())

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, object, object]:
        """The answer statistics first; the verdicts and the exit reason last, after pytest's own summary,
        so that the last screen of a run is its result."""
        shown = not self.session.is_worker and self.session.active and not self.session.collect_only
        if shown:
            for line, markup in summary_lines(self.session):
                terminalreporter.write_line(line, **markup)
            retried = self.session.retries.summary()
            if retried is not None:
                terminalreporter.write_line(retried)
            # The pace each model was asked at, as the provider's headers and refusals set it (one line each).
            models = [model.name for model in self.session.models]
            for line in pace_summary(state_folder(self.session.options.out_dir), models):
                terminalreporter.write_line(f"pace: {line}")
        try:
            return (yield)
        finally:
            if shown:
                for line, markup in verdict_block(self.session):
                    terminalreporter.write_line(line, **markup)
                # GitHub Actions reads a workflow command from the start of a log line, wherever it stands.
                for command in ci_annotations(self.session.judgement):
                    terminalreporter.write_line(command)
