"""The pytest plugin: options, the marker, the fixtures and the wiring of the session object.

The work is done by :class:`snap_bench.plugin.session.SnapSession`; this module only connects it to pytest.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from snap_bench.asking.asker import BatchPending, RecordingUnavailable
from snap_bench.asking.attempts import BudgetReached
from snap_bench.asking.batch.ledger import PENDING_IN_A_BATCH
from snap_bench.asking.interruption import Interrupted
from snap_bench.design.config import ConfigError
from snap_bench.instruments import instrument_file_key, registered
from snap_bench.observations.case import Case
from snap_bench.observations.observation import Observation
from snap_bench.plugin.process import (
    BrokenInstrumentFile,
    InstrumentFileModule,
    freeze_session_heap,
    thaw_previous_session_heap,
    upcoming_params,
)
from snap_bench.plugin.reporting import (
    NOT_MEASURED_ATTRIBUTE,
    RETRIES_KEY,
    SessionReporter,
    mark_unscored,
    retries_to_report,
    teststatus,
)
from snap_bench.plugin.session import SnapSession, usage_errors
from snap_bench.report.dry_run import dry_run_lines
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE, QUESTION_ATTRIBUTE
from snap_bench.session.options import GROUP, declare_options
from snap_bench.session.settings import SessionSettings, check_out_dir

if TYPE_CHECKING:
    from _pytest._code.code import TracebackEntry

SESSION_KEY = pytest.StashKey[SnapSession]()
OBSERVATION_KEY = pytest.StashKey[Observation]()
# Why a benchmark test produced no observation (no recording, budget spent): the condition was not measured.
NOT_MEASURED_KEY = pytest.StashKey[str]()
# The benchmarks folder, when the session is no benchmark session: not collected.
IGNORED_KEY = pytest.StashKey[Path]()

Ask = Callable[[Case], Observation]


def pytest_addoption(parser: pytest.Parser) -> None:
    declare_options(parser.getgroup(*GROUP), parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    thaw_previous_session_heap()
    config.addinivalue_line(
        "markers",
        "instrument(name): run this test once per model and condition of the named instrument "
        "(it receives the `case` fixture)",
    )
    with usage_errors():
        session = SnapSession(config, SessionSettings.from_config(config))
    config.stash[SESSION_KEY] = session
    if config.getoption("snap_dry_run") and hasattr(config.option, "dist"):
        # The dry run prices what this process collects: no workers (xdist's configure runs after this one).
        config.option.dist = "no"
    if not session.wanted():
        # The team's own `pytest` (no benchmark path, no snap-bench option) leaves the benchmarks folder alone.
        options = session.stage.options
        config.stash[IGNORED_KEY] = (options.rootdir / options.benchmarks_dir).resolve()
    config.pluginmanager.register(session, "snap-bench-session")
    config.pluginmanager.register(SessionReporter(session), "snap-bench-reporter")
    if session.wanted() and session.runs_tests():
        # Before pytest-html's configure creates the report's folder (an unusable one is an INTERNALERROR there).
        with usage_errors():
            check_out_dir(session.stage.options.out_dir)
    # The HTML report is the deliverable: a benchmark session writes one without being asked
    # (before pytest-html's own configure hook reads the option; --html still wins).
    if session.wanted() and session.runs_tests() and hasattr(config.option, "htmlpath") and not config.option.htmlpath:
        config.option.htmlpath = str(session.stage.options.out_dir / "report.html")
        config.option.self_contained_html = True


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None and session.active and session.runs_tests():
        freeze_session_heap()


@pytest.hookimpl(wrapper=True)
def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> Generator[None, None, None]:
    """Ctrl-C ends the session interrupted (exit status 2) even where it landed in a frame with no line number.

    CPython sometimes runs a signal's handler at an instruction it gives no line (3.11 shows it as "line -1"),
    and pytest's terminal reporter, rendering the interrupt's traceback, fails on that frame (TypeError on
    ``None - 1``) inside its interrupt handling: the session ended with an uncaught error (status 1; a worker's,
    xdist's internal error 3) instead of as interrupted, about one Ctrl-C in fifty on a busy machine. Such frames
    have no source line to show and are left out of the traceback pytest shows."""
    excinfo.traceback = excinfo.traceback.filter(_has_line_number)
    return (yield)


def _has_line_number(entry: TracebackEntry) -> bool:
    # pytest's entry has no public way to ask (its ``lineno`` is the ``None - 1`` that fails). Should a later
    # pytest rename the raw entry, every frame is kept, as pytest would, rather than Ctrl-C failing here.
    raw = getattr(entry, "_rawentry", None)
    return raw is None or raw.tb_lineno is not None


def snap_session(config: pytest.Config) -> SnapSession:
    return config.stash[SESSION_KEY]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return True if collection_path == config.stash.get(IGNORED_KEY, None) else None


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """--snap-dry-run: the plan of what was collected (a path or -k limits it), before nothing is run."""
    if session.config.getoption("snap_dry_run"):
        cases = [case for item in session.items if isinstance(case := _case(item), Case)]
        terminal = session.config.pluginmanager.get_plugin("terminalreporter")
        for line in dry_run_lines(snap_session(session.config).stage, cases):
            terminal.write_line(line) if terminal is not None else print(line)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> bool | None:
    """--snap-dry-run asks nothing: the collected tests are its plan, not run (as --collect-only)."""
    return True if session.config.getoption("snap_dry_run") else None


def _case(item: pytest.Item) -> object:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("case") if callspec is not None else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A YAML questionnaire or task (found by snap_bench.session.scope) is a test module of its own."""
    if not instrument_file_key(file_path):
        return None
    try:
        name = snap_session(parent.config).stage.instrument_files.add(file_path)
    except ConfigError as error:
        return BrokenInstrumentFile.from_parent(parent, path=file_path, problem=str(error))
    module: InstrumentFileModule = InstrumentFileModule.from_parent(parent, path=file_path)
    module.instrument_name = name
    return module


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("instrument")
    if marker is None or not marker.args:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid} uses the `case` fixture without an instrument marker; "
            f"add pytestmark = pytest.mark.instrument(NAME), NAME one of: {', '.join(registered())}"
        )
    session = snap_session(metafunc.config)
    session.activate()
    cases = session.cases(str(marker.args[0]))
    metafunc.parametrize("case", cases, ids=[case.id for case in cases])


@pytest.fixture
def ask(request: pytest.FixtureRequest) -> Ask:
    """Ask the model one condition; the observation is recorded on the test's report and returned."""
    session = snap_session(request.config)

    def ask_case(case: Case) -> Observation:
        asker = session.asker()
        # --snap-concurrency: the conditions this process runs next are asked while this one waits.
        asker.look_ahead(lambda: session.upcoming(upcoming_params(request.node, "case")))
        try:
            observation = asker.ask(
                case.model,
                session.instrument(case.instrument),
                case.condition,
                on_retried=lambda note: request.node.stash.__setitem__(RETRIES_KEY, note),
            )
        except RecordingUnavailable as error:
            request.node.stash[NOT_MEASURED_KEY] = "no recording"
            pytest.fail(str(error), pytrace=False)
        except BudgetReached as error:
            request.node.stash[NOT_MEASURED_KEY] = "budget spent"
            pytest.skip(str(error))
        except BatchPending as error:
            request.node.stash[NOT_MEASURED_KEY] = PENDING_IN_A_BATCH
            pytest.skip(str(error))
        except Interrupted as error:
            # Another process of the session saw Ctrl-C: this one ends its session as interrupted too.
            pytest.exit(str(error), returncode=pytest.ExitCode.INTERRUPTED)
        request.node.stash[OBSERVATION_KEY] = observation
        if not observation.is_scored:
            # Visible in the JUnit XML too: pytest writes an item's user properties as <properties>.
            mark_unscored(request.node.user_properties, observation)
        return observation

    return ask_case


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, Any] | None:
    """A benchmark test whose answer has no score is ``unscored`` (u), not passed and not failed."""
    return teststatus(report)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    observation_to_report(item, report, OBSERVATION_KEY)
    retries_to_report(item, report)
    not_measured = item.stash.get(NOT_MEASURED_KEY, None)
    if not_measured is not None and report.when == "call":
        setattr(report, NOT_MEASURED_ATTRIBUTE, not_measured)
    observation = item.stash.get(OBSERVATION_KEY, None)
    if observation is not None and report.when == "call" and item.config.getoption("htmlpath", None):
        # The row shows the item's text rather than the whole prompt where the answer was valid
        # (snap_bench.report.rows); the worker knows the instrument, so it sends the text along.
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get("case") if callspec is not None else None
        if isinstance(case, Case):
            question = snap_session(item.config).instrument(case.instrument).question(case.condition)
            setattr(report, QUESTION_ATTRIBUTE, question)
    if report.when == "call" and OBSERVATION_KEY in item.stash:
        # The report carries the observation from here on: the item (which pytest keeps, every one of a
        # worker's tens of thousands, until the session ends) lets go of it.
        del item.stash[OBSERVATION_KEY]
    return report


def observation_to_report(item: pytest.Item, report: pytest.TestReport, key: Any) -> None:
    """Attach the item's observation (if any) to its call report, so xdist carries it across."""
    observation = item.stash.get(key, None)
    if observation is not None and report.when == "call":
        setattr(report, OBSERVATION_ATTRIBUTE, observation.to_dict())
