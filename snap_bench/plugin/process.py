"""The benchmark session as a pytest process: whether it is one, what it collects, what it asks ahead of the test
running, and how its imports and its heap are handled around the tests.

- **Activation.** A pytest session is a benchmark session when a snap-bench option was given or its paths lie
  under the benchmarks folder (the plugin stays out of the way of any other test suite); whether it only looks
  (``--collect-only``, ``--snap-dry-run``).
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
- **Instrument files** (snap_bench.session.scope finds them) are collected as test modules of their own.
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

import gc
import importlib
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from snap_bench.asking.endpoints import NotRecorded
from snap_bench.observations.case import Case
from snap_bench.session.scope import RunPaths
from snap_bench.session.settings import SessionSettings

# -- activation ------------------------------------------------------------------------------------------


def runs_benchmarks(config: pytest.Config, options: SessionSettings) -> bool:
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


def run_paths(config: pytest.Config) -> RunPaths:
    """The run's paths as the session stage reads them."""
    ignored = tuple(str(pattern) for pattern in config.getini("norecursedirs"))
    return RunPaths(tuple(config.args), Path(config.invocation_params.dir), ignored)


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


# -- instrument files ------------------------------------------------------------------------------------

_TEST_MODULE = '''
def test_{name}(case, ask):
    """Ask the model one condition of {name}."""
    ask(case)
'''


class InstrumentFileModule(pytest.Module):
    """An instrument file as pytest sees it: a module marked with its instrument, holding one test function
    that takes the ``case`` and ``ask`` fixtures (what benchmarks/test_profile.py holds for the profile): the same
    parametrisation, node ids, JUnit and report rows."""

    instrument_name: str = ""

    def _getobj(self) -> Any:
        module = types.ModuleType(f"snap_bench_instrument_{self.instrument_name}")
        module.__file__ = str(self.path)
        exec(compile(_TEST_MODULE.format(name=self.instrument_name), str(self.path), "exec"), module.__dict__)
        module.__dict__["pytestmark"] = [pytest.mark.instrument(self.instrument_name)]
        return module


class BrokenInstrumentFile(pytest.File):
    """An instrument file with a mistake: its collection fails with the message naming file, key and fix."""

    def __init__(self, *, problem: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problem = problem

    def collect(self) -> Iterator[pytest.Item]:
        raise self.CollectError(self.problem)


def wholly_unrecorded(items: Sequence[pytest.Item], left: Sequence[NotRecorded], models: int) -> list[pytest.Item]:
    """The test functions of instruments no model of the run has recorded: with no condition to parametrise them
    they would each be a "got empty parameter set" skip; they are deselected instead (named once already)."""
    counts: dict[str, int] = {}
    for entry in left:
        counts[entry.instrument] = counts.get(entry.instrument, 0) + 1
    gone = {name for name, count in counts.items() if count == models}
    found = []
    for item in items:
        marker = item.get_closest_marker("instrument")
        callspec = getattr(item, "callspec", None)
        # (pytest gives an empty parametrisation one item whose `case` is a placeholder, not a Case)
        unparametrised = callspec is None or not isinstance(callspec.params.get("case"), Case)
        if marker is not None and marker.args and str(marker.args[0]) in gone and unparametrised:
            found.append(item)
    return found
