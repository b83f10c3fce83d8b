"""The pytest plugin: options, the marker, the fixtures and the wiring of the session object.

The work is done by :class:`snap_bench.session.SnapSession`; this module only connects it to pytest.
"""

from __future__ import annotations

from collections.abc import Callable, Generator

import pytest

from snap_bench.asking import BudgetReached, RecordingUnavailable
from snap_bench.observation import Observation
from snap_bench.options import SessionOptions, add_options, check_out_dir
from snap_bench.report.rows import QUESTION_ATTRIBUTE
from snap_bench.session import Case, SnapSession, observation_to_report
from snap_bench.summary import dry_run_lines

SESSION_KEY = pytest.StashKey[SnapSession]()
OBSERVATION_KEY = pytest.StashKey[Observation]()

Ask = Callable[[Case], Observation]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """--snap-dry-run prints the plan from the config and ends the run, like --fixtures does."""
    if not config.getoption("snap_dry_run"):
        return None
    session = SnapSession(config, SessionOptions.from_config(config))
    session.activate()
    print("\n".join(dry_run_lines(session)))
    return 0


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "instrument(name): run this test once per model and condition of the named instrument "
        "(it receives the `case` fixture)",
    )
    session = SnapSession(config, SessionOptions.from_config(config))
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "snap-bench-session")
    if session.wanted():
        # Before pytest-html's configure creates the report's folder (an unusable one is an INTERNALERROR there).
        check_out_dir(session.options.out_dir)
    # The HTML report is the deliverable: a benchmark session writes one without being asked
    # (before pytest-html's own configure hook reads the option; --html still wins).
    if session.wanted() and hasattr(config.option, "htmlpath") and not config.option.htmlpath:
        config.option.htmlpath = str(session.options.out_dir / "report.html")
        config.option.self_contained_html = True


def snap_session(config: pytest.Config) -> SnapSession:
    return config.stash[SESSION_KEY]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("instrument")
    if marker is None or not marker.args:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid} uses the `case` fixture without an instrument marker; "
            "add pytestmark = pytest.mark.instrument('snap')"
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
        try:
            observation = session.asker().ask(case.model, session.instrument(case.instrument), case.condition)
        except RecordingUnavailable as error:
            pytest.fail(str(error), pytrace=False)
        except BudgetReached as error:
            pytest.skip(str(error))
        request.node.stash[OBSERVATION_KEY] = observation
        return observation

    return ask_case


def expect_valid(observation: Observation) -> None:
    """Fail the test when the answer has no score, showing the raw answer; it stays recorded."""
    if observation.is_valid:
        return
    kind = {-1: "refusal", -2: "invalid answer", -3: "API error"}.get(observation.code or 0, "no score")
    pytest.fail(
        f"{kind} ({observation.code}): {observation.reason}\nraw answer: {observation.raw_answer!r}", pytrace=False
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    observation_to_report(item, report, OBSERVATION_KEY)
    observation = item.stash.get(OBSERVATION_KEY, None)
    if observation is not None and report.when == "call" and item.config.getoption("htmlpath", None):
        # The row shows the item's text rather than the whole prompt where the answer was valid
        # (snap_bench.report.rows); the worker knows the instrument, so it sends the text along.
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get("case") if callspec is not None else None
        if isinstance(case, Case):
            question = snap_session(item.config).instrument(case.instrument).question(case.condition)
            setattr(report, QUESTION_ATTRIBUTE, question)
    return report
