"""The one registry of instruments: the name a test module's ``instrument`` marker uses -> its class.

The three shipped instruments register here; another one registers itself with :func:`register` (for
example from a conftest.py or a plugin module) and needs no change to any core module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from snap_bench.analysis.metric_specs import declare, metric_spec
from snap_bench.design.config import ConfigFiles
from snap_bench.instruments.base import Instrument, Scored, Selection
from snap_bench.instruments.compass import CompassInstrument
from snap_bench.instruments.perturbation import PerturbationInstrument
from snap_bench.instruments.profile import ProfileInstrument
from snap_bench.instruments.questionnaire import questionnaire_kind

__all__ = [
    "CompassInstrument",
    "Instrument",
    "PerturbationInstrument",
    "ProfileInstrument",
    "Scored",
    "Selection",
    "load_instrument",
    "load_instruments",
    "metric_spec",
    "register",
    "registered",
]

_REGISTRY: dict[str, type[Instrument]] = {}


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


def load_instrument(name: str, config: ConfigFiles) -> Instrument:
    """Build the instrument ``name`` from ``config`` (a project's files over the packaged ones); KeyError for
    an unknown name."""
    return _REGISTRY[name](config)


def load_instruments(config: ConfigFiles, questionnaires: Iterable[Path] = ()) -> dict[str, Instrument]:
    """Every registered instrument and the questionnaire written in each file of ``questionnaires``, built
    from ``config`` (what a session whose paths hold those files loads; for scripts and tests)."""
    built = {name: load_instrument(name, config) for name in registered()}
    for path in questionnaires:
        kind = questionnaire_kind(path, config)
        declare(kind.name, kind.metrics)
        built[kind.name] = kind(config)
    return built


for _kind in (ProfileInstrument, CompassInstrument, PerturbationInstrument):
    register(_kind)
