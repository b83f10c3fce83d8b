"""The benchmark session as a stage of its own: its plan (snap_bench.session.plan), the asking of its conditions
(one owner of the endpoints, the asker with its pace, budget and stops, and the batch step), and its outcome
(the judgement, the exit decision, the output files and the history).

It never imports pytest. The plugin drives it from pytest's hooks (one test per planned condition, a report per
check); :func:`snap_bench.session.run.run_session` drives it in-process with no test runner at all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from snap_bench.analysis.coverage import Coverage
from snap_bench.asking import model_facts
from snap_bench.asking.asker import Asker, Endpoint
from snap_bench.asking.batch.session_step import batch_step
from snap_bench.asking.batch.step import BatchOutcome
from snap_bench.asking.endpoints import EndpointProblem, Endpoints
from snap_bench.asking.interruption import InterruptFlag
from snap_bench.asking.session_asker import build_asker, start_session_state
from snap_bench.asking.stops import StopBoard
from snap_bench.instruments import Instrument
from snap_bench.judging.exit_status import ExitDecision, ExitFindings, decide, findings
from snap_bench.judging.judgement import Judgement
from snap_bench.observations.export import ObservationWriter
from snap_bench.observations.observation import Condition, Observation
from snap_bench.recordings.cassettes import remove_stale_temporaries
from snap_bench.session import outputs
from snap_bench.session.ledger import ConditionLedger
from snap_bench.session.outcome import SessionOutputs, end_session
from snap_bench.session.outputs import Artefacts, instruments_run, left_out_notices, session_meta, session_notices
from snap_bench.session.plan import SessionPlan
from snap_bench.session.settings import SessionSettings, UsageProblem
from snap_bench.wire.end_files import EndFiles, LaterCtrlC


class BenchmarkSession(SessionPlan):
    """One benchmark session's state, from its plan to its exit decision (see the module's docstring)."""

    def __init__(self, options: SessionSettings) -> None:
        super().__init__(options)
        self.ledger = ConditionLedger()
        self.endpoints: dict[str, Endpoint] = {}
        self.exit_decision: ExitDecision | None = None
        self.judgement: Judgement | None = None
        self.artefacts = Artefacts(options.out_dir, options.rootdir)
        self.batch = BatchOutcome()  # the batch step's outcome: its batches' spend, what is pending
        self.later_ctrl_c = LaterCtrlC()  # a Ctrl-C after the first, recorded while the session ends
        self.invocation_dir = options.rootdir  # relative paths in what the session says are read from here
        self.verbose = 0  # -v: the terminal's summary shows more
        self._endpoints: Endpoints | None = None
        self._asker: Asker | None = None
        self._writer: ObservationWriter | None = None

    # -- asking ------------------------------------------------------------------------------------

    def start_asking(self, *, controller: bool, local_urls: Mapping[str, str] | None = None) -> None:
        """Resolve the endpoints. The process that plans (``controller``) checks that each model can be answered,
        starts the local servers, clears the previous run's outputs and state and opens the observations' file;
        another (an xdist worker) takes the servers' URLs the controller started."""
        self._endpoints = Endpoints(self.models, self.recordings, self.options)
        if controller:
            try:
                self._endpoints.check_answerable()
                self._endpoints.start_servers(self.conditions_of)
            except EndpointProblem as error:
                raise UsageProblem(str(error)) from None
        else:
            self._endpoints.local_urls = dict(local_urls or {})
        self.endpoints = {
            name: dataclasses.replace(endpoint, closest_ids=self.facts[name].closest_ids if name in self.facts else ())
            for name, endpoint in self._endpoints.resolved().items()
        }

    def prepare_outputs(self, say: Callable[[str], None]) -> None:
        """On the controller, before anything is asked: what writers killed mid-write left beside the recordings
        removed, the shared state anew, the previous run's outputs gone, the observations' writer open; models
        no endpoint serves stopped; the cost limit checked; the batch step run (``say`` prints its lines)."""
        remove_stale_temporaries(self.options.cassette_dir)
        start_session_state(self.options.out_dir)
        self.artefacts.clear_previous_run(self.options.json_path)
        self._writer = ObservationWriter(self.options.out_dir)
        model_facts.stop_unserved_models(self.models, self.facts, self.endpoints, self.stop_board())
        problem = model_facts.cost_limit_problem(self.options.max_cost_usd, self.models, self.endpoints)
        if problem is not None:
            raise UsageProblem(problem)
        self.batch = self._batch_step(say)

    def _batch_step(self, say: Callable[[str], None]) -> BatchOutcome:
        """--snap-batch, and the collection of earlier batches: before any condition is asked."""

        def conditions_of(model: str) -> Iterator[tuple[Instrument, Condition]]:
            """Every condition of the run's instruments (its paths, less what the selection leaves out)."""
            for name in self.in_run:
                if name not in self.not_asked:
                    instrument = self.instrument(name)
                    yield from ((instrument, case.condition) for case in self.cases(name) if case.model == model)

        try:
            report, synchronous = batch_step(self.options, self.models, self.endpoints, conditions_of, say)
        except ValueError as error:  # a ledger that cannot be read (snap_bench.asking.batch.ledger)
            raise UsageProblem(str(error)) from None
        return BatchOutcome(report, [*synchronous, *report.problems, *report.pending_lines()])

    def stop_board(self) -> StopBoard:
        return StopBoard(self.options.out_dir, {model.name: model.api_key_env for model in self.models})

    def asker(self, workers: int = 1) -> Asker:
        """The one asker of this process (``workers``: the processes sharing the session's limits)."""
        if self._asker is None:
            self._asker = build_asker(self.options, workers, self.models, self.endpoints, self.stop_board())
        return self._asker

    @property
    def local_urls(self) -> dict[str, str]:
        return dict(self._endpoints.local_urls if self._endpoints is not None else {})

    def record(
        self, nodeid: str, *, failed: bool, values: dict[str, Any] | None = None, not_measured: str | None = None
    ) -> None:
        """What one phase of a condition's test reported (snap_bench.session.ledger), kept and written."""
        observation = self.ledger.record(nodeid, failed=failed, values=values, not_measured=not_measured)
        if observation is not None and self._writer is not None:
            self._writer.append(observation)

    def interrupt(self) -> None:
        """Ctrl-C: every process of the session stops asking, those the signal did not reach too (they look at
        the flag before each request)."""
        InterruptFlag(self.options.out_dir).raise_flag()

    # -- the outcome -------------------------------------------------------------------------------

    def judge(self) -> Judgement | None:
        """The session's observations (the baseline's beside them) judged, its history kept, analysis.json
        written; None where nothing is judged (no observation, or --snap-no-analysis)."""
        self.ledger.sort()
        if not self.ledger.observations or not self.options.analyse:
            return None
        from snap_bench.analysis.metric_tables import AnalysisSettings  # numpy, scipy, pandas: the controller only

        options = self.options
        settings = AnalysisSettings(n_resamples=options.resamples, seed=options.seed)
        baseline_rows = list(self.baseline.observations) if self.baseline is not None else []
        ends = SessionOutputs(options.json_path, options.out_dir, self.session_meta(), options.history)
        models = [model.name for model in self.models]
        rows = [*self.observations, *baseline_rows]
        self.judgement = end_session(
            rows, self.instruments, settings, self.thresholds, self.baseline, ends,
            gate=options.gate, models=models, coverage=self.coverage(),
        )  # fmt: skip
        return self.judgement

    def close_asking(self, *, interrupted: bool) -> None:
        if self._asker is not None:
            self._asker.close(interrupted=interrupted)
            self._asker = None

    def finish(self, pytest_status: int = 0) -> ExitDecision:
        """The exit decision (``pytest_status``: the test runner's own, 0 without one), the writer closed, the
        servers stopped, and the session's end files written, each whole (none once a second Ctrl-C came)."""
        decision = self.exit_decision = decide(self.exit_findings(pytest_status))
        if self._writer is not None:
            self._writer.close()
        if self._endpoints is not None:
            self._endpoints.stop_servers()
        files = EndFiles(self.later_ctrl_c)
        self.artefacts.write_session_end(self, files, decision, with_observations=self._writer is not None)
        if files.not_written:
            # The last line says why the status is what it is, and what the session did not leave behind.
            self.exit_decision = dataclasses.replace(decision, reason=decision.reason + files.reason())
        return self.exit_decision

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

    def notices(self) -> list[str]:
        """What the session says once about how it asked (a temperature left to the provider, ...)."""
        left_out = left_out_notices(self.not_asked, self.not_instrument_files)
        left_out += [left.line(Path(self.invocation_dir)) for left in self.unrecorded]
        return [*left_out, *self.batch.notices, *session_notices(self.options, self.facts, self.observations)]

    def verbosity(self) -> int:
        return self.verbose

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
