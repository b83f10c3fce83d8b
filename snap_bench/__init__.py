"""snap-bench: measure how consistently a language model answers, as a pytest suite.

The names a benchmark test module needs: the ``case`` it is parametrised with, the ``ask`` fixture's
type, and :func:`expect_valid`. They are imported on first use, so that ``snap_bench.stats`` and the
other library modules can be imported without pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from snap_bench.observation import Condition, Observation
    from snap_bench.plugin import Ask, expect_valid
    from snap_bench.session import Case

__all__ = ["Ask", "Case", "Condition", "Observation", "expect_valid"]

_LOCATIONS = {
    "Ask": "snap_bench.plugin",
    "expect_valid": "snap_bench.plugin",
    "Case": "snap_bench.session",
    "Condition": "snap_bench.observation",
    "Observation": "snap_bench.observation",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        import importlib

        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'snap_bench' has no attribute {name!r}")
