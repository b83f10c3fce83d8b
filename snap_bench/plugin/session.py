"""The one object holding a snap-bench session's state, registered with pytest's plugin manager.

Everything that happens once per session lives here: reading the config, choosing the models,
checking that they can be answered, parametrising the benchmark tests, gathering the observations
on the controller and writing them out. It is *active* only when the session runs benchmarks
(the run's paths lie under the benchmarks folder, or a snap-bench option was given), so that the
plugin stays out of the way of any other test suite.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from snap_bench.analysis.coverage import Coverage
from snap_bench.asking import model_facts
from snap_bench.asking.asker import Asker, Endpoint
from snap_bench.asking.batch.step import BatchOutcome
from snap_bench.asking.endpoints import EndpointProblem, Endpoints, NotRecorded, not_recorded
from snap_bench.asking.interruption import InterruptFlag
from snap_bench.asking.session_asker import build_asker, process_shares
from snap_bench.asking.stops import StopBoard
from snap_bench.design.config import ConfigError
from snap_bench.design.models import ModelRegistry, ModelSpec, load_models
from snap_bench.design.shards import in_shard
from snap_bench.design.temperatures import DEFAULT
from snap_bench.instruments import Instrument, Selection, registered
from snap_bench.judging.baseline import BaselineSpec
from snap_bench.judging.exit_status import ExitDecision, ExitFindings, decide, findings
from snap_bench.judging.judgement import Judgement
from snap_bench.judging.verdicts import ThresholdConfig
from snap_bench.observations.case import Case
from snap_bench.observations.export import ObservationWriter
from snap_bench.observations.observation import Condition, Observation, at_provider_default
from snap_bench.plugin import outputs, process
from snap_bench.plugin.instrument_files import (
    InstrumentFiles,
    checked_other_yaml_files,
    instrument_file_paths,
    marked_instruments,
    not_asked_instruments,
    wholly_unrecorded,
)
from snap_bench.plugin.ledger import ConditionLedger
from snap_bench.plugin.outputs import (
    Artefacts,
    instruments_run,
    left_out_notices,
    session_meta,
    session_notices,
)
from snap_bench.plugin.reporting import RetryLog, register_controller_plugins
from snap_bench.plugin.session_end import judge_at_end
from snap_bench.plugin.session_options import SessionOptions
from snap_bench.recordings.state import Recordings
from snap_bench.wire.end_files import EndFiles, LaterCtrlC

if TYPE_CHECKING:
    from snap_bench.judging.run_planner import GatePlan

LOCAL_URLS_KEY = "snap_local_urls"
PLANNED_RUNS_KEY = "snap_planned_runs"  # --snap-runs=auto: the controller's plan, handed to each worker


class SnapSession:
    def __init__(self, config: pytest.Config, options: SessionOptions) -> None:
        self.config = config
        self.options = options
        self.is_worker = hasattr(config, "workerinput")
        self.active = False
        # --snap-dry-run collects like --collect-only and runs nothing (snap_bench.plugin.hooks)
        self.collect_only = bool(config.option.collectonly) or bool(config.getoption("snap_dry_run"))
        self.registry: ModelRegistry | None = None
        self.models: list[ModelSpec] = []
        self.endpoints: dict[str, Endpoint] = {}
        self.ledger = ConditionLedger()
        self.retries = RetryLog()
        self.facts: dict[str, model_facts.ModelFacts] = {}
        self.exit_decision: ExitDecision | None = None
        self.recordings = Recordings(options.cassette_dir)
        self._endpoints: Endpoints | None = None
        self.artefacts = Artefacts(options.out_dir, options.rootdir)
        self._instruments: dict[str, Instrument] = {}
        self.instrument_files = InstrumentFiles(options.config)  # written in YAML under the run's paths
        self._asker: Asker | None = None
        self._interrupted = False  # Ctrl-C was seen (pytest_keyboard_interrupt)
        self.later_ctrl_c = LaterCtrlC()  # the Ctrl-C after it
        self._writer: ObservationWriter | None = None
        self.baseline: BaselineSpec | None = None
        self.judgement: Judgement | None = None
        self._thresholds: dict[str, ThresholdConfig] = {}
        self._preload_pending = False
        # Instruments of the run that the selection options leave no condition (by choice) -> why.
        self.not_asked: dict[str, str] = {}
        # YAML files under the run's paths that are no instrument file, named once in the summary.
        self.not_instrument_files: list[Path] = []
        self.in_run: dict[str, Path | None] = {}  # the run's instruments -> the file that runs each
        self.unrecorded: list[NotRecorded] = []  # offline, what a model has no recording of (not run)
        self.batch = BatchOutcome()  # the batch step's outcome: its batches' spend, what is pending
        self._gate_plan: GatePlan | None = None  # the runs that decide the gate (snap_bench.judging.run_planner)

    # -- activation --------------------------------------------------------------------------

    def wanted(self) -> bool:
        return process.runs_benchmarks(self.config, self.options)

    def runs_tests(self) -> bool:
        """False for the commands that only look (--collect-only, --help, --version, --snap-dry-run):
        they write nothing under the output folder."""
        return not process.only_looks(self.config)

    def activate(self) -> None:
        """Read the config and choose the models; a problem becomes a usage error, not a traceback."""
        if self.active:
            return
        try:
            self.registry = load_models(self.options.config)
            self.models = process.choose_models(self.registry, self.options, self.recordings)
            if self.options.top_logprobs:  # --snap-logprobs wins over each entry's `logprobs`
                self.models = [dataclasses.replace(m, top_logprobs=self.options.top_logprobs) for m in self.models]
            for path in instrument_file_paths(self.config, self.options.cassette_dir):
                self.instrument_files.add(path)
            follow_up = self.options.follow_up | self.instrument_files.follow_up(self.config)
            self.options = dataclasses.replace(self.options, follow_up=follow_up)
            self.facts = model_facts.session_facts(
                self.config, self.models, self.options.rootdir, self.options.cassette_dir
            )
            self.models = [model_facts.with_catalogue_price(model, self.facts.get(model.name)) for model in self.models]
            if self.options.baseline:
                known = (self.registry, self.recordings, self.models, self.options.rootdir, self.options.gate)
                self.baseline, self.models = process.baseline_of(self.options.baseline, *known)
            for name in self.active_instruments():
                self.instrument(name)
            process.check_save_baseline(self.options.save_baseline, self.models)
        except (ConfigError, ValueError) as error:
            raise pytest.UsageError(str(error)) from None
        for name in self.active_instruments():
            self.selection(self.instrument(name))  # a typo in --snap-items is a usage error now
        self.not_asked = self._check_selection()
        if self.options.plan_runs:  # --snap-runs=auto; a worker takes the controller's plan
            runs = getattr(self.config, "workerinput", {}).get(PLANNED_RUNS_KEY) or process.auto_runs(self)
            self.options = dataclasses.replace(self.options, runs=int(runs))
        if self.runs_tests():
            asked = {name: source for name, source in self.in_run.items() if name not in self.not_asked}
            plans = Endpoints(self.models, self.recordings, self.options).plans()
            try:
                self.unrecorded = not_recorded(self.models, plans, self.recordings, asked)
            except EndpointProblem as error:
                raise pytest.UsageError(str(error)) from None
        if self.options.follow_up:
            # A follow-up stage reads the recordings now, so a missing baseline is a usage error
            # before anything runs, not a collection error in every worker.
            for name in self.active_instruments():
                self.cases(name)
        self.active = True
        if not self.is_worker:
            register_controller_plugins(self.config.pluginmanager)

    def gate_plan(self) -> GatePlan | None:
        """The runs that decide the gate against the baseline (None without one); planned once."""
        if self._gate_plan is None and self.baseline is not None:
            self._gate_plan = process.plan_gate(self, self.baseline)
        return self._gate_plan

    def _check_selection(self) -> dict[str, str]:
        """What the run would silently not measure is a usage error; instruments left out by choice, named."""
        skip = self.options.cassette_dir
        self.not_instrument_files = checked_other_yaml_files(self.config, skip)
        self.in_run = {**marked_instruments(self.config, registered(), skip), **self.instrument_files.sources()}
        return not_asked_instruments(self.in_run, self.instrument, self.selection)

    def at_provider_default(self, model: str) -> bool:
        """Whether ``model`` is asked without a temperature: its endpoint would drop one, or
        --snap-temperatures=default asks every model so."""
        facts = self.facts.get(model)
        return self.options.temperatures == [DEFAULT] or (facts is not None and facts.temperature_ignored is not None)

    def price_source(self, model: str) -> str:
        """Where ``model``'s price comes from, for the dry run's estimate."""
        configured = self.registry.models.get(model) if self.registry is not None else None
        return model_facts.price_source(self.facts.get(model), configured)

    def active_instruments(self) -> list[str]:
        """The instruments this session may run: every registered one (a test module picks its own) and every
        instrument file (questionnaire or task) under the run's paths."""
        return [*registered(), *self.instrument_files.kinds]

    def instrument(self, name: str) -> Instrument:
        if name not in self._instruments:
            known = {**registered(), **self.instrument_files.kinds}
            if name not in known:
                raise pytest.UsageError(
                    f"unknown instrument {name!r} in an `instrument` marker; known: {', '.join(known)}"
                )
            try:
                instrument = known[name](self.options.config)
            except ConfigError as error:
                raise pytest.UsageError(str(error)) from None
            instrument.read_options(self.config)
            self._instruments[name] = instrument
        return self._instruments[name]

    def selection(self, instrument: Instrument) -> Selection:
        others = [self.instrument(name) for name in self.active_instruments() if name != instrument.name]
        return self.options.selection(instrument, others)

    def cases(self, instrument_name: str) -> list[Case]:
        instrument = self.instrument(instrument_name)
        selection = self.selection(instrument)
        unrecorded = {left.model for left in self.unrecorded if left.instrument == instrument_name}
        try:
            cases = [
                Case(model.name, instrument_name, condition)
                for model in self.models
                if model.name not in unrecorded
                for condition in self.model_conditions(instrument, model.name, selection)
            ]
            return [case for case in cases if in_shard(case.id, self.options.shard)]  # --snap-shard
        except ConfigError as error:
            raise pytest.UsageError(str(error)) from None

    def model_conditions(self, instrument: Instrument, model: str, selection: Selection) -> list[Condition]:
        conditions = instrument.conditions_for(model, selection, self.recordings)
        return at_provider_default(conditions) if self.at_provider_default(model) else conditions

    def conditions_of(self, model: str) -> Iterator[tuple[Instrument, Condition]]:
        """Every condition the session asks ``model``, with its instrument."""
        for name in self.active_instruments():
            instrument = self.instrument(name)
            yield from ((instrument, case.condition) for case in self.cases(name) if case.model == model)

    # -- session start ------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if not self.wanted():
            return
        self.activate()
        local_urls: dict[str, str] = {}
        if self.is_worker:
            local_urls = dict(self.config.workerinput.get(LOCAL_URLS_KEY, {}))  # type: ignore[attr-defined]
        elif self.collect_only:
            return  # listing the conditions needs neither a key nor recordings, and writes nothing
        self._endpoints = Endpoints(self.models, self.recordings, self.options)
        if not self.is_worker:
            try:
                self._endpoints.check_answerable()
                self._endpoints.start_servers(self.conditions_of)
            except EndpointProblem as error:
                raise pytest.UsageError(str(error)) from None
        else:
            self._endpoints.local_urls = local_urls
        self.endpoints = {
            name: dataclasses.replace(endpoint, closest_ids=self.facts[name].closest_ids if name in self.facts else ())
            for name, endpoint in self._endpoints.resolved().items()
        }
        if not self.is_worker:
            if self.options.analyse:
                # The analysis' and report's imports, while the tests run. Under xdist, once the workers
                # have collected: started now, they would compete with the workers' own start-up.
                self._preload_pending = True
                if not self.config.pluginmanager.has_plugin("dsession"):
                    self._start_preload()
            # What writers killed mid-write left beside the recordings; the shared state anew (the workers start
            # after this: xdist's sessionstart); the previous run's outputs gone.
            self._writer = process.start_outputs(self.options, self.artefacts)
            model_facts.stop_unserved_models(self.models, self.facts, self.endpoints, self.stop_board())
            problem = model_facts.cost_limit_problem(self.options.max_cost_usd, self.models, self.endpoints)
            if problem is not None:
                raise pytest.UsageError(problem)
            self.batch = process.run_batch_step(self)

    def stop_board(self) -> StopBoard:
        return StopBoard(self.options.out_dir, {model.name: model.api_key_env for model in self.models})

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: hand the local servers' URLs (started once, on the controller) to every worker."""
        node.workerinput[LOCAL_URLS_KEY] = dict(self._endpoints.local_urls if self._endpoints is not None else {})
        node.workerinput[model_facts.WORKER_INPUT_KEY] = {name: facts.to_json() for name, facts in self.facts.items()}
        if self.options.plan_runs:
            node.workerinput[PLANNED_RUNS_KEY] = self.options.runs

    # -- the tests ----------------------------------------------------------------------------

    def asker(self) -> Asker:
        if self._asker is None:
            self._asker = build_asker(
                self.options, process.worker_count(self.config), self.models, self.endpoints, self.stop_board()
            )
        return self._asker

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
        if runs_tests_here and process_shares(self.options, process.worker_count(self.config), self.models):
            process.remember_worker_queue(self.config)
            first = session.items[0]
            self.asker().look_ahead(lambda: self.upcoming(process.upcoming_params(first, "case", including=True)))

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        gone = wholly_unrecorded(items, self.unrecorded, len(self.models)) if self.unrecorded else []
        if gone:
            items[:] = [item for item in items if item not in gone]
            self.config.hook.pytest_deselected(items=gone)
        for item in items:
            callspec = getattr(item, "callspec", None)
            if callspec is not None and isinstance(callspec.params.get("case"), Case):
                self.ledger.expect([item.nodeid])

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.ledger.deselect(item.nodeid for item in items)

    def _start_preload(self) -> None:
        if self._preload_pending:
            self._preload_pending = False
            process.preload()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.active:
            return
        self._start_preload()
        prefixes = tuple(f"[{model.name}-" for model in self.models)
        self.ledger.expect(nodeid for nodeid in ids if any(prefix in nodeid for prefix in prefixes))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker or not self.active:
            return
        observation = self.ledger.record(report)
        if observation is not None and self._writer is not None:
            self._writer.append(observation)
        self.retries.take(report, self.config.pluginmanager.get_plugin("terminalreporter"))

    # -- session end --------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        self.ledger.sort()
        if not self.is_worker and self.active and not self.collect_only and self.observations and self.options.analyse:
            self.judgement = judge_at_end(self, session)
        return result

    def thresholds(self, instrument: str) -> ThresholdConfig:
        if instrument not in self._thresholds:
            self._thresholds[instrument] = process.thresholds_of(self.instrument(instrument), self.options)
        return self._thresholds[instrument]

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # Ctrl-C, wherever it landed: the session finish must not wait for the requests in flight. First of
        # the hook's implementations: the terminal's renders the traceback (with its arguments) meanwhile.
        self._interrupted = True
        if not self.active:
            return
        # A second Ctrl-C must not land inside pytest's handling of this one or inside a file of the session end:
        # recorded from here on (the terminal's rendering of this one comes after this hook).
        self.later_ctrl_c.take_over()
        if not self.collect_only and self.runs_tests():
            # Every process of the session stops asking, those the signal did not reach too (the workers,
            # when only the controller was interrupted): they look at the flag before each request.
            InterruptFlag(self.options.out_dir).raise_flag()

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self._asker is not None:
            interrupted = exitstatus == pytest.ExitCode.INTERRUPTED or self._interrupted
            self._asker.close(interrupted=interrupted)
            self._asker = None
        if self.is_worker or not self.active or self.collect_only:
            return
        decision = self.exit_decision = decide(self.exit_findings(int(exitstatus)))
        if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            # pytest's own codes (interrupted, internal or usage error) keep their meaning; otherwise
            # the status follows the judgement, read by pytest from here (as pytest-cov does).
            session.exitstatus = decision.code
        if self._writer is not None:
            self._writer.close()
        if self._endpoints is not None:
            self._endpoints.stop_servers()
        # Each file whole, and none once a second Ctrl-C came (snap_bench.wire.end_files).
        files = EndFiles(self.later_ctrl_c)
        self.artefacts.write_session_end(self, files, decision, with_observations=self._writer is not None)
        if files.not_written:
            # The last line says why the status is what it is, and what the session did not leave behind.
            self.exit_decision = dataclasses.replace(decision, reason=decision.reason + files.reason())

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        # Python's own Ctrl-C again, once everything of the session has ended (pytest run in-process goes on).
        self.later_ctrl_c.give_back()

    def session_meta(self) -> dict[str, Any]:
        built = {name: instrument.version for name, instrument in self._instruments.items()}
        versions = instruments_run(built, self.observations)
        narrowed = outputs.subsets(self)  # what of each design the session left out
        meta = session_meta(
            self.options, self.models, versions, self.ledger, self.coverage(), self.facts, self.batch, narrowed
        )
        unrecorded = [left.to_json() for left in self.unrecorded]
        gate = self.options.gate.option_value()
        return {**meta, "gate": gate, "not_asked": dict(self.not_asked), "not_recorded": unrecorded}

    def verbosity(self) -> int:
        return int(self.config.getoption("verbose") or 0)

    def notices(self) -> list[str]:
        """What the session says once about how it asked (a temperature left to the provider, ...)."""
        left_out = left_out_notices(self.not_asked, self.not_instrument_files)
        left_out += [left.line(Path(self.config.invocation_params.dir)) for left in self.unrecorded]
        return [*left_out, *self.batch.notices, *session_notices(self.options, self.facts, self.observations)]

    @property
    def instruments(self) -> dict[str, Instrument]:
        """The instruments built so far (each on first use), by name."""
        return dict(self._instruments)

    @property
    def observations(self) -> list[Observation]:
        return self.ledger.observations

    def missing_reports(self) -> set[str]:
        return self.ledger.missing_reports()

    def coverage(self) -> dict[str, Coverage]:
        return self.ledger.coverage([model.name for model in self.models])

    def exit_findings(self, pytest_status: int = 0) -> ExitFindings:
        keys = {model.name: model.api_key_env for model in self.models}
        not_measured = self.ledger.not_measured_counts(self.options.out_dir, keys)
        gate, analysed = self.options.gate, self.options.analyse
        found = findings(self.judgement, gate, not_measured, self.ledger.other_failures, analysed, pytest_status)
        return dataclasses.replace(found, benchmarks_collected=bool(self.ledger.expected))
