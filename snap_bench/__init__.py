"""snap-bench: measure how consistently a language model answers, as a pytest suite.

The names a benchmark test module needs: the ``case`` it is parametrised with and the ``ask`` fixture's
type. They are imported on first use, so that ``snap_bench.stats`` and the
other library modules can be imported without pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from snap_bench.observations.case import Case
    from snap_bench.observations.observation import Condition, Observation
    from snap_bench.plugin.hooks import Ask

__all__ = ["Ask", "Case", "Condition", "Observation"]

_LOCATIONS = {
    "Ask": "snap_bench.plugin.hooks",
    "Case": "snap_bench.observations.case",
    "Condition": "snap_bench.observations.observation",
    "Observation": "snap_bench.observations.observation",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        import importlib

        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'snap_bench' has no attribute {name!r}")
