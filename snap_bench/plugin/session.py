"""The session stage (snap_bench.session.stage) driven by pytest's hooks, registered with pytest's plugin manager.

It is *active* only when the session runs benchmarks (the run's paths lie under the benchmarks folder, or a
snap-bench option was given), so that the plugin stays out of the way of any other test suite. What it adds to
the stage is pytest's: the xdist wiring (what the controller hands each worker), the tests' reports into the
stage's ledger, each check out of the stage as a test report, Ctrl-C, and the exit status pytest reads.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from snap_bench.asking import model_facts
from snap_bench.asking.asker import Asker
from snap_bench.asking.session_asker import process_shares
from snap_bench.instruments import Instrument
from snap_bench.observations.case import Case
from snap_bench.observations.observation import Condition
from snap_bench.plugin import process
from snap_bench.plugin.reporting import (
    CHECK_CATEGORY_ATTRIBUTE,
    NOT_MEASURED_ATTRIBUTE,
    RetryLog,
    register_controller_plugins,
)
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE
from snap_bench.session.ledger import CHECKS_LOCATION
from snap_bench.session.outcome import NOT_GATED, CheckOutcome, check_outcomes
from snap_bench.session.plan import HandedOver
from snap_bench.session.settings import SessionSettings, UsageProblem
from snap_bench.session.stage import BenchmarkSession

LOCAL_URLS_KEY = "snap_local_urls"
PLANNED_RUNS_KEY = "snap_planned_runs"  # --snap-runs=auto: the controller's plan, handed to each worker


@contextmanager
def usage_errors() -> Iterator[None]:
    """The stage's usage problems as pytest's usage error (exit status 4, the message and no traceback)."""
    try:
        yield
    except UsageProblem as problem:
        raise pytest.UsageError(str(problem)) from None


class SnapSession:
    def __init__(self, config: pytest.Config, options: SessionSettings) -> None:
        self.config = config
        self.stage = BenchmarkSession(options)
        self.stage.invocation_dir = Path(config.invocation_params.dir)
        self.stage.verbose = int(config.getoption("verbose") or 0)
        self.is_worker = hasattr(config, "workerinput")
        # --snap-dry-run collects like --collect-only and runs nothing (snap_bench.plugin.hooks)
        self.collect_only = bool(config.option.collectonly) or bool(config.getoption("snap_dry_run"))
        self.retries = RetryLog()
        self._interrupted = False  # Ctrl-C was seen (pytest_keyboard_interrupt)
        self._preload_pending = False

    @property
    def active(self) -> bool:
        return self.stage.active

    def wanted(self) -> bool:
        return process.runs_benchmarks(self.config, self.stage.options)

    def runs_tests(self) -> bool:
        """False for the commands that only look (--collect-only, --help, --version, --snap-dry-run):
        they write nothing under the output folder."""
        return not process.only_looks(self.config)

    def activate(self) -> None:
        """Plan the session once (a problem is a usage error, not a traceback)."""
        if self.stage.active:
            return
        workerinput = getattr(self.config, "workerinput", {})
        facts = workerinput.get(model_facts.WORKER_INPUT_KEY)
        handed = HandedOver(
            facts={name: model_facts.ModelFacts.from_json(values) for name, values in facts.items()}
            if isinstance(facts, dict)
            else None,
            planned_runs=workerinput.get(PLANNED_RUNS_KEY),
        )
        with usage_errors():
            self.stage.activate(
                process.run_paths(self.config),
                handed=handed,
                runs_tests=self.runs_tests(),
                read_catalogues=not self.config.option.collectonly,
            )
        if not self.is_worker:
            register_controller_plugins(self.config.pluginmanager)

    def cases(self, instrument_name: str) -> list[Case]:
        with usage_errors():
            return self.stage.cases(self.instrument(instrument_name).name)

    def instrument(self, name: str) -> Instrument:
        with usage_errors():
            return self.stage.instrument(name)

    # -- session start ------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not self.wanted():
            return
        self.activate()
        if not self.is_worker and self.collect_only:
            return  # listing the conditions needs neither a key nor recordings, and writes nothing
        local_urls = getattr(self.config, "workerinput", {}).get(LOCAL_URLS_KEY, {})
        with usage_errors():
            self.stage.start_asking(controller=not self.is_worker, local_urls=local_urls)
            if not self.is_worker:
                if self.stage.options.analyse:
                    # The analysis' and report's imports, while the tests run. Under xdist, once the workers
                    # have collected: started now, they would compete with the workers' own start-up.
                    self._preload_pending = True
                    if not self.config.pluginmanager.has_plugin("dsession"):
                        self._start_preload()
                # (the workers start after this: xdist's sessionstart)
                self.stage.prepare_outputs(self._say_batch)

    def _say_batch(self, line: str) -> None:
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        terminal.write_line(f"snap-bench batch: {line}") if terminal is not None else print(line)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: hand the local servers' URLs (started once, on the controller), the catalogue facts and the
        planned runs to every worker."""
        node.workerinput[LOCAL_URLS_KEY] = self.stage.local_urls
        facts = {name: facts.to_json() for name, facts in self.stage.facts.items()}
        node.workerinput[model_facts.WORKER_INPUT_KEY] = facts
        if self.stage.options.plan_runs:
            node.workerinput[PLANNED_RUNS_KEY] = self.stage.options.runs

    # -- the tests ----------------------------------------------------------------------------

    def asker(self) -> Asker:
        return self.stage.asker(process.worker_count(self.config))

    def upcoming(self, params: Iterable[Any]) -> Iterator[tuple[str, Instrument, Condition]]:
        """The benchmark conditions among the ``case`` parameters of upcoming tests (for asking ahead)."""
        return ((c.model, self.instrument(c.instrument), c.condition) for c in params if isinstance(c, Case))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """--snap-concurrency: start asking the first conditions as soon as they are known, while the
        session gets ready to run them (under xdist, while the controller hands out the first tests)."""
        if not self.active or self.collect_only or not self.runs_tests() or not session.items:
            return
        runs_tests_here = self.is_worker or not self.config.pluginmanager.has_plugin("dsession")
        models = self.stage.models
        if runs_tests_here and process_shares(self.stage.options, process.worker_count(self.config), models):
            process.remember_worker_queue(self.config)
            first = session.items[0]
            self.asker().look_ahead(lambda: self.upcoming(process.upcoming_params(first, "case", including=True)))

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        unrecorded = self.stage.unrecorded
        gone = process.wholly_unrecorded(items, unrecorded, len(self.stage.models)) if unrecorded else []
        if gone:
            items[:] = [item for item in items if item not in gone]
            self.config.hook.pytest_deselected(items=gone)
        for item in items:
            callspec = getattr(item, "callspec", None)
            if callspec is not None and isinstance(callspec.params.get("case"), Case):
                self.stage.ledger.expect([item.nodeid])

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.stage.ledger.deselect(item.nodeid for item in items)

    def _start_preload(self) -> None:
        if self._preload_pending:
            self._preload_pending = False
            process.preload()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.active:
            return
        self._start_preload()
        prefixes = tuple(f"[{model.name}-" for model in self.stage.models)
        self.stage.ledger.expect(nodeid for nodeid in ids if any(prefix in nodeid for prefix in prefixes))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker or not self.active:
            return
        values = getattr(report, OBSERVATION_ATTRIBUTE, None)
        reason = getattr(report, NOT_MEASURED_ATTRIBUTE, None)
        self.stage.record(
            report.nodeid,
            failed=report.failed,
            values=values if report.when == "call" and isinstance(values, dict) else None,
            not_measured=reason if isinstance(reason, str) else None,
        )
        self.retries.take(report, self.config.pluginmanager.get_plugin("terminalreporter"))

    # -- session end --------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if not self.is_worker and self.active and not self.collect_only:
            with usage_errors():
                judged = self.stage.judge()
            if judged is not None:
                outcomes = list(check_outcomes(judged, self.stage.options.gate))
                # The checks are outcomes the progress counter did not know of at collection: count them in,
                # so that it ends at 100 %.
                session.testscollected += len(outcomes)
                for outcome in outcomes:
                    self._emit(outcome)
        return result

    def _emit(self, outcome: CheckOutcome) -> None:
        """One check as a test's reports; a check with a category (not judged, not compared, undecided) gets an
        outcome of its own for its call, which is never a pass."""
        nodeid = f"{CHECKS_LOCATION}::thresholds[{outcome.name}]"
        location = (CHECKS_LOCATION, None, f"thresholds[{outcome.name}]")
        hook = self.config.hook
        hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        properties: list[tuple[str, object]] = [("threshold", outcome.message), *outcome.record.properties()]
        category = outcome.category
        # A check that was not computed is skipped (JUnit's <skipped>, pytest-html's Skipped): never a pass.
        call = "skipped" if category is not None else "failed" if outcome.fails_run else "passed"
        # Setup and teardown as well as the call, as a test's are: pytest-html writes a row on the teardown.
        for when, result in {"setup": "passed", "call": call, "teardown": "passed"}.items():
            longrepr: Any = None
            if when == "call" and category is not None:
                longrepr = (CHECKS_LOCATION, 0, outcome.message)
            elif when == "call" and outcome.fails_run:
                longrepr = outcome.message
            report = pytest.TestReport(
                nodeid=nodeid,
                location=location,
                keywords={"thresholds": 1},
                outcome=result,  # type: ignore[arg-type]
                longrepr=longrepr,
                when=when,  # type: ignore[arg-type]
                sections=[("snap-bench threshold", outcome.message)] if when == "call" and call == "passed" else [],
                duration=0.0,
                user_properties=properties,  # JUnit XML writes them from the teardown report
            )
            if when == "call" and category is not None:
                setattr(report, CHECK_CATEGORY_ATTRIBUTE, category)
            elif when == "call" and not outcome.passed and not outcome.gated:
                setattr(report, CHECK_CATEGORY_ATTRIBUTE, NOT_GATED)
            hook.pytest_runtest_logreport(report=report)
        hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # Ctrl-C, wherever it landed: the session finish must not wait for the requests in flight. First of
        # the hook's implementations: the terminal's renders the traceback (with its arguments) meanwhile.
        self._interrupted = True
        if not self.active:
            return
        # A second Ctrl-C must not land inside pytest's handling of this one or inside a file of the session end:
        # recorded from here on (the terminal's rendering of this one comes after this hook).
        self.stage.later_ctrl_c.take_over()
        if not self.collect_only and self.runs_tests():
            self.stage.interrupt()

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.stage.close_asking(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED or self._interrupted)
        if self.is_worker or not self.active or self.collect_only:
            return
        decision = self.stage.finish(int(exitstatus))
        if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            # pytest's own codes (interrupted, internal or usage error) keep their meaning; otherwise
            # the status follows the judgement, read by pytest from here (as pytest-cov does).
            session.exitstatus = decision.code

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        # Python's own Ctrl-C again, once everything of the session has ended (pytest run in-process goes on).
        self.stage.later_ctrl_c.give_back()
