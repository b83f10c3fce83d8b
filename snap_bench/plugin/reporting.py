"""How a benchmark session shows in pytest's outputs: the terminal, the JUnit XML and pytest-html.

- **Outcomes.** A refused, unparseable or failed answer is a finding about the model, recorded and judged
  through the unscored rate; it is not a failed test, so it neither paints the run red nor sets the exit
  status. The terminal counts it as ``unscored`` (``u`` in the progress line), the JUnit XML carries its code
  and reason as properties, and the HTML report labels its row.
- **pytest-html's results table** (the module-level hooks). A benchmark condition with an observation leaves
  pytest-html's table: the report's own conditions table (:mod:`snap_bench.report.conditions`) shows it,
  searchable and in a fraction of the time, because pytest-html draws every row into the page when it opens.
  Its outcome is still counted in pytest-html's filter line, an answer without a score as ``Unscored``, so the
  HTML's counts are the terminal's. What stays in the table is what a reader must see as a test: the threshold
  and baseline checks, failed or errored conditions (with the observation's text as their log) and other tests.
  The session registers this module on the controller, where pytest-html writes the report; a project that
  builds the same report from its own tests (the report bench, the browser test) loads it with
  ``pytest_plugins = ["snap_bench.plugin.reporting"]``. The hooks are optional: ``-p no:html`` disables them.
- **The slimmer.** pytest's terminal reporter and pytest-html keep every test report until the session ends; a
  benchmark call report carries its observation, which the ledger has copied by then. Once a report has been
  through every ``pytest_runtest_logreport`` implementation (pytest-html draws a row when its teardown report
  arrives), its observation is cut down to its answer code, all a report is still asked afterwards.
- **Retries**: the attempts an answer needed, kept on its report and summed up once at the end.
- **The session's reporter** (a plugin of its own beside the session object, as pytest-xdist keeps its reporter
  apart from ``DSession``): the terminal summary and pytest-html's summary and title, drawn from what the
  session holds (the text itself: :mod:`snap_bench.report.terminal`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
from collections.abc import Generator
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from snap_bench.asking.pacing import pace_summary
from snap_bench.asking.state_folder import state_folder
from snap_bench.judging.changes import changed_keys
from snap_bench.observations.observation import Observation
from snap_bench.report.ci_outputs import ci_annotations
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE, QUESTION_ATTRIBUTE, drop_links_column, label_unscored, row_log
from snap_bench.report.terminal import SessionView, ShownSettings, summary_lines, verdict_block
from snap_bench.session.outcome import NOT_COMPARED, NOT_GATED, NOT_JUDGED, UNDECIDED

if TYPE_CHECKING:
    from snap_bench.history.address import StoreAddress
    from snap_bench.instruments.base import Instrument
    from snap_bench.report.first_screen import ExitLine


# -- outcomes --------------------------------------------------------------------------------------------

UNSCORED = "unscored"
# The outcomes of a check of its own (snap_bench.session.outcome): a threshold check outside what the exit status
# follows (ungated), a comparison the gate could not make (not compared), a figure that could not be computed
# (not judged), an interval straddling its margin (undecided: exit status 7). None is ever a pass.
# The report attributes that say why a test produced no observation, and a check's category.
NOT_MEASURED_ATTRIBUTE = "snap_not_measured"
CHECK_CATEGORY_ATTRIBUTE = "snap_check_category"
OUTCOME_PROPERTY = "snap_outcome"


def mark_unscored(user_properties: list[tuple[str, object]], observation: Observation) -> None:
    """Record on the test's user properties that its answer has no score, with the code and reason."""
    user_properties.extend(
        [
            (OUTCOME_PROPERTY, UNSCORED),
            ("answer_code", observation.code),
            ("reason", observation.reason),
        ]
    )


def is_unscored(report: Any) -> bool:
    """A benchmark test's call report whose observation has an answer code (refusal, invalid, API error)."""
    if getattr(report, "when", None) != "call" or not getattr(report, "passed", False):
        return False
    values = getattr(report, OBSERVATION_ATTRIBUTE, None)
    return isinstance(values, dict) and values.get("code") is not None


def teststatus(report: Any) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
    """pytest_report_teststatus: (category, progress letter, verbose word) of our own outcomes."""
    if is_unscored(report):
        return UNSCORED, "u", ("UNSCORED", {"yellow": True})
    if getattr(report, CHECK_CATEGORY_ATTRIBUTE, None) == NOT_GATED and getattr(report, "when", None) == "call":
        return NOT_GATED, "n", ("UNGATED", {"yellow": True})
    if getattr(report, CHECK_CATEGORY_ATTRIBUTE, None) == NOT_COMPARED and getattr(report, "when", None) == "call":
        return NOT_COMPARED, "c", ("NOT COMPARED", {"yellow": True})
    if getattr(report, CHECK_CATEGORY_ATTRIBUTE, None) == NOT_JUDGED and getattr(report, "when", None) == "call":
        return NOT_JUDGED, "j", ("NOT JUDGED", {"yellow": True})
    if getattr(report, CHECK_CATEGORY_ATTRIBUTE, None) == UNDECIDED and getattr(report, "when", None) == "call":
        return UNDECIDED, "d", ("UNDECIDED", {"yellow": True})
    return None


# -- pytest-html's results table -------------------------------------------------------------------------

# pytest-html's report data of this process's session (handed to pytest_html_report_title), whose outcome
# counts the rows left out of its table still go into. A list, so the hooks below can replace it.
_REPORT_DATA: list[Any] = []


@pytest.hookimpl(optionalhook=True)
def pytest_html_report_title(report: Any) -> None:
    _REPORT_DATA[:] = [report]
    outcomes = report.outcomes
    if UNSCORED not in outcomes:
        # After "passed" and "failed", as the terminal lists them; pytest-html renders the dict in its order.
        ordered = list(outcomes.items())
        for after, key, label in (("passed", UNSCORED, "Unscored"), ("failed", NOT_GATED, "Failed ungated")):
            at = next((i + 1 for i, (name, _) in enumerate(ordered) if name == after), len(ordered))
            ordered.insert(at, (key, {"label": label, "value": 0}))
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
    elif _failed_ungated(report) and _REPORT_DATA:
        # A check that failed outside the gate passes as a test (it fails no run), and its row stays under
        # pytest-html's "Passed" filter; the counts say what it is. pytest-html counts the row as passed once
        # this hook returns: the count moves here.
        outcomes = _REPORT_DATA[0].outcomes
        outcomes["passed"]["value"] -= 1
        outcomes[NOT_GATED]["value"] += 1


def _failed_ungated(report: Any) -> bool:
    return getattr(report, "when", None) == "call" and getattr(report, CHECK_CATEGORY_ATTRIBUTE, None) == NOT_GATED


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


# -- retries ---------------------------------------------------------------------------------------------

RETRIES_ATTRIBUTE = "snap_retries"
RETRIES_KEY = pytest.StashKey[str]()


def retries_to_report(item: pytest.Item, report: pytest.TestReport) -> None:
    """Carry the item's retry note (if its ask was retried) on its call report."""
    note = item.stash.get(RETRIES_KEY, None)
    if note is not None and report.when == "call":
        setattr(report, RETRIES_ATTRIBUTE, note)


class RetryLog:
    """The retried conditions of the session, kept and shown by the controller."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, str]] = []  # (node id, note)

    def take(self, report: pytest.TestReport, terminal: Any | None) -> None:
        note = getattr(report, RETRIES_ATTRIBUTE, None)
        if not isinstance(note, str):
            return
        self.notes.append((report.nodeid, note))
        if terminal is not None:
            # Under xdist the progress dots leave the line open (write_line ends only a file name's line).
            if getattr(getattr(terminal, "_tw", None), "width_of_current_line", 0):
                terminal.write("\n")
            terminal.write_line(f"snap-bench: retried {_short_id(report.nodeid)}: {note}")

    def summary(self) -> str | None:
        """One line for the terminal summary, or None when nothing was retried."""
        if not self.notes:
            return None
        return f"retries: {len(self.notes)} condition(s) asked more than once (listed above as they reported)"


def _short_id(nodeid: str) -> str:
    """The condition's parameter id (``fake-model-M01-P1-NEU-t0-C0-r1``), or the node id without one."""
    start = nodeid.find("[")
    return nodeid[start + 1 : -1] if start >= 0 and nodeid.endswith("]") else nodeid


# -- the slimmer -----------------------------------------------------------------------------------------


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


# What a slimmed report's keywords become: one empty mapping for them all (an empty dict each, three reports a
# condition, held 2.0 MB at 10,408 conditions), read-only so that no plugin's write to one report's keywords
# reaches another's.
NO_KEYWORDS: MappingProxyType[str, Any] = MappingProxyType({})


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
            report.keywords = NO_KEYWORDS


def register_controller_plugins(plugins: pytest.PytestPluginManager) -> None:
    """The controller's own plugins: this module (the results table's hooks) and the slimmer, once each."""
    rows = sys.modules[__name__]  # this module's hooks shape pytest-html's results table
    if not plugins.is_registered(rows):
        # Under its module's name, so that a project's `pytest_plugins` naming it too is no clash.
        plugins.register(rows, __name__)
    if not plugins.has_plugin(ReportSlimmer.name):
        plugins.register(ReportSlimmer(), ReportSlimmer.name)


# -- the session's reporter ------------------------------------------------------------------------------


class ReportedSettings(ShownSettings, Protocol):
    """What the reporter reads of the session's settings, beyond the terminal text's."""

    @property
    def history(self) -> StoreAddress: ...

    @property
    def baseline(self) -> str | None: ...


class ReportedStage(SessionView, Protocol):
    """What the reporter reads of the session stage (snap_bench.session.stage)."""

    @property
    def options(self) -> ReportedSettings: ...

    @property
    def instruments(self) -> dict[str, Instrument]: ...


class ReportedSession(Protocol):
    """What the reporter reads of the plugin's session: which process this is, and its stage."""

    is_worker: bool
    collect_only: bool
    retries: RetryLog

    @property
    def active(self) -> bool: ...

    @property
    def stage(self) -> ReportedStage: ...


class SessionReporter:
    def __init__(self, session: ReportedSession) -> None:
        self.session = session
        self.stage = session.stage

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        """pytest-html: the verdicts, metric tables and charts above the per-test table."""
        if self.session.is_worker or not self.session.active:
            return
        if self.stage.judgement is None or not self.stage.judgement.document:
            # Nothing judged (--snap-no-analysis): the conditions still have their table, having left pytest-html's.
            from snap_bench.report.conditions import conditions_only

            summary.append(conditions_only(self.stage.observations))
            return
        from snap_bench.report.summary import summary_html
        from snap_bench.report.trend_section import stored_trend

        thresholds = {
            instrument: {name: dataclasses.asdict(t) for name, t in self.stage.thresholds(instrument).metrics.items()}
            for instrument in {instrument for _, instrument in self.stage.judgement.analyses}
        }
        # The store already holds this session's figures (the gate wrote them): the trend ends with them.
        trend = stored_trend(
            self.stage.options.history,
            sorted({model for model, _ in self.stage.judgement.analyses}),
            sorted({instrument for _, instrument in self.stage.judgement.analyses}),
            problem=self.stage.judgement.store_problem,
        )
        # `summary`, not `prefix`: pytest-html puts the prefix in a narrow column.
        summary.append(
            summary_html(
                self.stage.judgement.document,
                self.stage.observations,
                thresholds,
                self.stage.instruments,
                checks=self.stage.judgement.checks,
                trend=trend,
                changed=changed_keys(self.stage.judgement.changes) if self.stage.judgement.changes else None,
                exit_line=self.exit_line(),
            )
        )

    def exit_line(self) -> ExitLine | None:
        """The exit status the session decided (pytest-html writes the report after the session's
        pytest_sessionfinish, where it is decided), and what it follows."""
        decision = self.stage.exit_decision
        if decision is None:
            return None
        from snap_bench.report.first_screen import ExitLine

        options = self.stage.options
        follows = options.gate.describe() if options.analyse else ""
        if follows and options.baseline and options.gate.needs_baseline:
            # Which baseline the gate's outcome is against: the first thing a reviewer of an upgrade asks.
            follows = f"{follows}, against {options.baseline}"
        return ExitLine(decision.code, decision.reason, follows)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_report_title(self, report: Any) -> None:
        """pytest-html: the page's title names the product, the models and the date (not the file name)."""
        if not self.session.is_worker and self.session.active:
            from snap_bench.report.first_screen import report_title

            report.title = report_title([model.name for model in self.stage.models], dt.datetime.now(dt.UTC).date())

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, object, object]:
        """The answer statistics first; the verdicts and the exit reason last, after pytest's own summary,
        so that the last screen of a run is its result."""
        shown = not self.session.is_worker and self.session.active and not self.session.collect_only
        if shown:
            for line, markup in summary_lines(self.stage):
                terminalreporter.write_line(line, **markup)
            retried = self.session.retries.summary()
            if retried is not None:
                terminalreporter.write_line(retried)
            # The pace each model was asked at, as the provider's headers and refusals set it (one line each).
            models = [model.name for model in self.stage.models]
            for line in pace_summary(state_folder(self.stage.options.out_dir), models):
                terminalreporter.write_line(f"pace: {line}")
        try:
            return (yield)
        finally:
            if shown:
                for line, markup in verdict_block(self.stage):
                    terminalreporter.write_line(line, **markup)
                # GitHub Actions reads a workflow command from the start of a log line, wherever it stands.
                for command in ci_annotations(self.stage.judgement):
                    terminalreporter.write_line(command)
