"""Import the end of the session's heavy modules on the controller while the tests run.

The analysis and the report need numpy, scipy, pandas and matplotlib: seconds of imports (more on a
busy machine) that used to start only once the last test had reported. The controller mostly waits
while the workers run the tests (and, live, while the provider answers), so a background thread
imports them then. Nothing is lost if it has not finished: Python's import lock makes the end of the
session wait for the module being imported, or import what is left itself.
"""

from __future__ import annotations

import importlib
import threading

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
