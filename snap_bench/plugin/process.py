"""The benchmark session as a process: whether it is one, what it asks ahead of the test running, and how its
imports and its heap are handled around the tests.

- **Activation.** A pytest session is a benchmark session when a snap-bench option was given or its paths lie
  under the benchmarks folder (the plugin stays out of the way of any other test suite); whether it only looks
  (``--collect-only``, ``--snap-dry-run``); which models it asks.
- **What comes next.** The benchmark conditions this process is about to run, nearest first, for asking ahead.
  Under xdist a worker's own queue comes first (the test indices the controller has sent it and it has not run
  yet); then, in any process, the collection's order after the current test. The second part may hold another
  worker's conditions: asking one of those ahead is no waste (claims make each condition asked once, and the
  worker that runs it reads the answer), and it keeps the requests in flight when a worker's own queue runs
  short near the end of a session.
- **Preloading.** The analysis and the report need numpy, scipy, pandas and matplotlib: seconds of imports that
  used to start only once the last test had reported. The controller mostly waits while the workers run the
  tests (and, live, while the provider answers), so a background thread imports them then. Nothing is lost if
  it has not finished: Python's import lock makes the end of the session wait for the module being imported.
- **The batch step** (``--snap-batch``, and the collection of what earlier batches finished) runs on the
  controller in its session start, before any worker starts (xdist's own session start runs last); what it
  does is :mod:`snap_bench.asking.batch.session_step`.
- **The heap at exit.** When a session ends, pytest runs a full garbage collection and the interpreter walks
  every tracked object again while it shuts down; a benchmark session's heap is large (every test report, the
  observations, numpy, scipy, pandas and matplotlib), so those passes cost about 0.6 s of a 2,268-condition run
  against a 200 ms server, all after the last answer (measured by ``python -m bench.throughput``). Freezing the
  heap at unconfigure moves what the session built out of the collector's sight; the next session in the same
  process (pytester, an IDE calling ``pytest.main`` again) unfreezes it first. The cost: cyclic garbage made
  during the session is not collected at its end, so an exception in such an object's finalizer is not
  reported by pytest. Only benchmark sessions freeze.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from snap_bench.asking.batch.session_step import batch_step
from snap_bench.asking.batch.step import BatchOutcome
from snap_bench.design.config import ConfigError
from snap_bench.design.models import ModelRegistry, ModelSpec
from snap_bench.judging.gate import Gate
from snap_bench.plugin.session_options import SessionOptions
from snap_bench.recordings.state import Recordings

if TYPE_CHECKING:
    from snap_bench.asking.asker import Endpoint
    from snap_bench.instruments.base import Instrument, Selection
    from snap_bench.judging.baseline import BaselineSpec
    from snap_bench.judging.run_planner import GatePlan
    from snap_bench.judging.verdicts import ThresholdConfig
    from snap_bench.observations.case import Case
    from snap_bench.observations.export import ObservationWriter
    from snap_bench.observations.observation import Condition
    from snap_bench.plugin.outputs import Artefacts

# -- activation ------------------------------------------------------------------------------------------


def runs_benchmarks(config: pytest.Config, options: SessionOptions) -> bool:
    """A snap-bench option was given, or the run's paths lie under the benchmarks folder: the plugin
    stays out of the way of any other test suite."""
    if options.explicit:
        return True
    benchmarks = (options.rootdir / options.benchmarks_dir).resolve()
    for argument in config.args:
        path = Path(argument.split("::")[0])
        path = (path if path.is_absolute() else Path(config.invocation_params.dir) / path).resolve()
        if path == benchmarks or benchmarks in path.parents:
            return True
    return False


def only_looks(config: pytest.Config) -> bool:
    option = config.option
    looking = (
        getattr(option, "collectonly", False)
        or getattr(option, "help", False)
        or getattr(option, "version", False)
        or getattr(option, "snap_dry_run", False)
        or getattr(option, "showfixtures", False)
        or getattr(option, "show_fixtures_per_test", False)
        or getattr(option, "markers", False)
    )
    return bool(looking)


def choose_models(registry: ModelRegistry, options: SessionOptions, recordings: Recordings) -> list[ModelSpec]:
    """--model's models, the pilot's under --snap-mode=pilot, else every model with recordings."""
    if options.models:
        return registry.resolve(options.models)
    if options.mode == "pilot":
        if not registry.pilot:
            raise ConfigError(registry.source, "pilot", "no pilot models", "list model names under pilot:")
        return registry.resolve(list(registry.pilot))
    recorded = [name for name in recordings.models() if name in registry.models]
    if not recorded:
        raise pytest.UsageError(
            f"no --model given and no recordings under {options.cassette_dir}: "
            f"name a model with --model (known: {', '.join(sorted(registry.models))})"
        )
    return registry.resolve(recorded)


def baseline_of(
    value: str, registry: ModelRegistry, recordings: Recordings, models: list[ModelSpec], root: Path, gate: Gate
) -> tuple[BaselineSpec, list[ModelSpec]]:
    """--baseline parsed (a relative path below the project ``root``), and the run's models with a baseline
    model that is replayed from its recordings appended, like any other model; a ValueError where ``gate``
    follows checks the baseline cannot give."""
    from snap_bench.judging.baseline import parse_baseline

    baseline = parse_baseline(value, sorted(registry.models), recordings.models(), root)
    if baseline.saved is not None and (gate.drift or gate.items):
        # Drift and item changes pair each condition's answers; a saved analysis holds figures only, so the
        # gate would follow checks that are never made.
        raise ValueError(
            f"--snap-gate={gate.option_value()} with --baseline={value}: drift and items compare each condition's "
            "answers, which a saved analysis.json does not hold. Fix: gate against a baseline file "
            "(--snap-save-baseline) or a model with recordings, or leave drift and items out of --snap-gate"
        )
    replayed = baseline.saved is None and not baseline.observations
    if replayed and baseline.model not in [m.name for m in models]:
        return baseline, [*models, registry.models[baseline.model]]
    return baseline, models


def thresholds_of(instrument: Instrument, options: SessionOptions) -> ThresholdConfig:
    """The instrument's thresholds: thresholds.yaml's section, its own file's, the options' overrides; a
    problem is a usage error."""
    from snap_bench.analysis.metric_specs import SHARED_METRICS
    from snap_bench.judging.verdicts import load_thresholds

    try:
        specs = {**SHARED_METRICS, **instrument.metrics}
        overrides, own = options.threshold_overrides, instrument.thresholds_section()
        return load_thresholds(options.config, instrument.name, overrides, options.judge, specs, own)
    except ConfigError as error:
        raise pytest.UsageError(str(error)) from None


def start_outputs(options: SessionOptions, artefacts: Artefacts) -> ObservationWriter:
    """What writers killed mid-write left beside the recordings removed, the shared state anew, the previous
    run's outputs gone; the writer of this run's observations."""
    from snap_bench.asking.session_asker import start_session_state
    from snap_bench.observations.export import ObservationWriter
    from snap_bench.recordings.cassettes import remove_stale_temporaries

    remove_stale_temporaries(options.cassette_dir)
    start_session_state(options.out_dir)
    artefacts.clear_previous_run(options.json_path)
    return ObservationWriter(options.out_dir)


def check_save_baseline(save: str | None, models: list[ModelSpec]) -> None:
    """A baseline file holds one model: a path without {model} for several is a ValueError naming the fix."""
    if save and "{model}" not in save and len(models) > 1:
        raise ValueError(
            f"--snap-save-baseline={save}: a baseline file holds one model, and this session runs "
            f"{len(models)} ({', '.join(m.name for m in models)}). Fix: put {{model}} in the path "
            "(e.g. baselines/{model}.json) or choose one --model"
        )


def worker_count(config: pytest.Config) -> int:
    """The test processes of the session: xdist's workers, or this one."""
    return int(getattr(config, "workerinput", {}).get("workercount", 1) or 1)


# -- what comes next -------------------------------------------------------------------------------------

_POSITIONS = pytest.StashKey[dict[str, int]]()
# The plugin holding an xdist worker's queue (``torun``), found by the test thread: remember_worker_queue.
_QUEUE_HOLDER = pytest.StashKey[object]()


def upcoming_params(item: pytest.Item, name: str, *, including: bool = False) -> Iterator[Any]:
    """The ``name`` parameter (e.g. ``case``) of each test after ``item`` (``including`` it), nearest first."""
    session = item.session
    items = session.items
    positions = session.stash.get(_POSITIONS, None)
    if positions is None or len(positions) != len(items):
        positions = {each.nodeid: index for index, each in enumerate(items)}
        session.stash[_POSITIONS] = positions
    here = positions.get(item.nodeid, len(items))
    for index in [*_worker_queue(item.config), *range(here if including else here + 1, len(items))]:
        callspec = getattr(items[index], "callspec", None)
        if callspec is not None and name in callspec.params:
            yield callspec.params[name]


def remember_worker_queue(config: pytest.Config) -> None:
    """Find the xdist worker's queue of test indices once, in the thread that runs the tests.

    The asking-ahead thread reads the queue later; it must not look for it itself: pluggy's
    ``get_plugins()`` iterates the plugin registry in Python, and a plugin registered or unregistered by
    the test thread meanwhile made it raise "dictionary changed size during iteration".
    """
    holder = None
    if hasattr(config, "workerinput"):
        holder = next((plugin for plugin in config.pluginmanager.get_plugins() if _queue_lock(plugin)), None)
    config.stash[_QUEUE_HOLDER] = holder


def _queue_lock(plugin: object) -> Callable[[], Any] | None:
    lock = getattr(getattr(plugin, "torun", None), "lock", None)
    return lock if callable(lock) else None


def _worker_queue(config: pytest.Config) -> list[int]:
    """The indices queued on this xdist worker (empty outside a worker, or if xdist changes its queue)."""
    lock = _queue_lock(config.stash.get(_QUEUE_HOLDER, None))
    if lock is None:
        return []
    with lock() as pending:
        return [index for index in pending if isinstance(index, int)]


# -- preloading ------------------------------------------------------------------------------------------

# The shared end of the session (instrument modules follow from them and are cheap after these).
HEAVY_MODULES = (
    "numpy",
    "scipy.stats",
    "pandas",
    "snap_bench.analysis.metric_tables",
    "snap_bench.judging.verdicts",
    "snap_bench.judging.baseline",
    "matplotlib.figure",
    "matplotlib.backends.backend_svg",
    "snap_bench.report.summary",
)


def preload(modules: tuple[str, ...] = HEAVY_MODULES) -> threading.Thread:
    """Start importing ``modules`` in a daemon thread; return it (tests join it)."""

    def run() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # the end of the session imports it again and reports the error there
                return

    thread = threading.Thread(target=run, name="snap-bench-preload", daemon=True)
    thread.start()
    return thread


# -- the heap at exit ------------------------------------------------------------------------------------

_frozen_by_us = False


def freeze_session_heap() -> None:
    """At the end of a benchmark session: no collector pass walks its objects any more."""
    global _frozen_by_us
    gc.freeze()
    _frozen_by_us = True


def thaw_previous_session_heap() -> None:
    """At the start of a session in a process that ran one before: its objects are collectable again."""
    global _frozen_by_us
    if _frozen_by_us:
        gc.unfreeze()
        _frozen_by_us = False


# -- the batch step --------------------------------------------------------------------------------------


class BatchingSession(Protocol):
    """What the batch step reads of a session (the SnapSession provides it)."""

    config: pytest.Config
    options: SessionOptions
    models: list[ModelSpec]

    @property
    def endpoints(self) -> Mapping[str, Endpoint]: ...

    @property
    def in_run(self) -> Mapping[str, Path | None]: ...

    @property
    def not_asked(self) -> Mapping[str, str]: ...

    def instrument(self, name: str) -> Instrument: ...

    def cases(self, instrument_name: str) -> Iterable[Case]: ...


def run_batch_step(session: BatchingSession) -> BatchOutcome:
    """--snap-batch, and the collection of earlier batches: before any test asks (the workers start after)."""
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(line: str) -> None:
        terminal.write_line(f"snap-bench batch: {line}") if terminal is not None else print(line)

    def conditions_of(model: str) -> Iterator[tuple[Instrument, Condition]]:
        """Every condition of the run's instruments (its paths, less what the selection leaves out) for ``model``."""
        for name in session.in_run:
            if name in session.not_asked:
                continue
            instrument = session.instrument(name)
            yield from ((instrument, case.condition) for case in session.cases(name) if case.model == model)

    try:
        report, synchronous = batch_step(session.options, session.models, session.endpoints, conditions_of, say)
    except ValueError as error:  # a ledger that cannot be read (snap_bench.asking.batch.ledger)
        raise pytest.UsageError(str(error)) from None
    return BatchOutcome(report, [*synchronous, *report.problems, *report.pending_lines()])


class PlanningSession(Protocol):
    """What planning the gate reads of a session (the SnapSession provides it)."""

    options: SessionOptions
    models: list[ModelSpec]
    not_asked: dict[str, str]

    @property
    def in_run(self) -> Mapping[str, Path | None]: ...

    def instrument(self, name: str) -> Instrument: ...

    def selection(self, instrument: Instrument) -> Selection: ...

    def model_conditions(self, instrument: Instrument, model: str, selection: Selection) -> list[Condition]: ...

    def thresholds(self, instrument: str) -> ThresholdConfig: ...

    def gate_plan(self) -> GatePlan | None: ...


def plan_gate(session: PlanningSession, baseline: BaselineSpec) -> GatePlan:
    """The runs that decide the gate against ``baseline`` for an unchanged model (snap_bench.judging.run_planner),
    from its answers to the cells the run asks: a baseline file's rows, or every recorded run of a replayed model."""
    from snap_bench.analysis.planner import recorded_runs_of
    from snap_bench.judging.run_planner import gate_plan, planned_runs

    new = [model.name for model in session.models if model.name != baseline.model]
    asked: dict[str, list[Condition]] = {}
    for name in session.in_run:
        if new and name not in session.not_asked:
            instrument = session.instrument(name)
            asked[name] = session.model_conditions(instrument, new[0], session.selection(instrument))
    if baseline.observations:
        cells = {(name, condition.cell) for name, conditions in asked.items() for condition in conditions}
        answers = [row for row in baseline.observations if (row.instrument, row.cell) in cells]
    else:

        def at_runs(name: str, runs: int) -> list[Condition]:
            instrument = session.instrument(name)
            selection = dataclasses.replace(session.selection(instrument), runs=runs)
            return session.model_conditions(instrument, baseline.model, selection)

        instruments = {name: session.instrument(name) for name in asked}
        answers = recorded_runs_of(baseline.model, asked, instruments, at_runs, session.options.cassette_dir)
    options = session.options
    planned = planned_runs([condition for conditions in asked.values() for condition in conditions])
    judged = {name: session.instrument(name) for name in asked}
    return gate_plan(baseline, answers, judged, session.thresholds, options.gate, planned, options.seed)


def auto_runs(session: PlanningSession) -> int:
    """--snap-runs=auto: the runs the plan names, or a usage error naming why no number decides the gate."""
    from snap_bench.judging.run_planner import auto_runs as planned

    found = session.gate_plan()
    if found is None:
        raise pytest.UsageError("--snap-runs=auto needs --baseline: nothing to plan from")
    runs, problem = planned(found)
    if runs is None:
        raise pytest.UsageError(problem)
    return runs
