"""The one registry of instruments: the name a test module's ``instrument`` marker uses -> its class.

The three shipped instruments register here; another one registers itself with :func:`register` (for
example from a conftest.py or a plugin module) and needs no change to any core module.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path

from snap_bench.instruments.base import Instrument, ReportContext, Scored, Selection
from snap_bench.instruments.compass import CompassInstrument
from snap_bench.instruments.perturbation import PerturbationInstrument
from snap_bench.instruments.profile import ProfileInstrument
from snap_bench.metric_specs import declare, metric_spec

__all__ = [
    "CompassInstrument",
    "Instrument",
    "PerturbationInstrument",
    "ProfileInstrument",
    "ReportContext",
    "Scored",
    "Selection",
    "load_instrument",
    "metric_spec",
    "register",
    "registered",
    "resolve_name",
]

_REGISTRY: dict[str, type[Instrument]] = {}
# Names an instrument was known by, kept working for one release with a deprecation warning.
RENAMED = {"snap": "profile"}
# The instrument whose models an analysis.json written before every instrument sat under "instruments"
# held at its top level.
FORMER_TOP_LEVEL = "profile"


def register(kind: type[Instrument]) -> type[Instrument]:
    """Add an instrument class to the registry (usable as a class decorator); re-registering a name
    replaces the earlier class, so a test can register its own."""
    name = getattr(kind, "name", None)
    if not isinstance(name, str) or not name.isidentifier():
        raise TypeError(f"{kind.__name__}.name must be an identifier-like string, got {name!r}")
    if not getattr(kind, "title", None):
        raise TypeError(f"{kind.__name__} has no title (how the report and the terminal name it)")
    _REGISTRY[name] = kind
    declare(name, kind.metrics)
    return kind


def registered() -> Mapping[str, type[Instrument]]:
    return dict(_REGISTRY)


def resolve_name(name: str) -> str:
    """The current name of an instrument; an old name warns once per use and maps to the new one."""
    if name in RENAMED and name not in _REGISTRY:
        new = RENAMED[name]
        warnings.warn(
            f"the instrument {name!r} is now called {new!r}: use pytest.mark.instrument({new!r}); "
            f"the old name stops working in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return new
    return name


def load_instrument(name: str, config_dir: Path) -> Instrument:
    """Build the instrument ``name`` from the files in ``config_dir``; KeyError for an unknown name."""
    return _REGISTRY[name](config_dir)


for _kind in (ProfileInstrument, CompassInstrument, PerturbationInstrument):
    register(_kind)
