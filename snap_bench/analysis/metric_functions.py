"""The functions a metric's pairing computes with (its table maker, vectorised statistic, refit or estimate),
registered as typed, lazy references.

A metric function is declared by a *loader*: a function of no argument that imports the implementation inside
its body and returns it. ``@metric_function`` registers the loader and returns a :class:`MetricFunction`, a
callable typed as the implementation is (mypy checks it against the pairing field it is given to), that imports
the implementation on its first call only. So a metric spec names its functions as Python objects, never as
``"module:function"`` text, and declaring one still loads no numpy, pandas or statistics: those are imported on
the controller when the gate runs, never in a pytest-xdist worker at collection.

A team's instrument declares its own the same way, next to its specs::

    @metric_function
    def share_agreeing() -> Batch:
        from team_bench.stats import share_agreeing_batch

        return share_agreeing_batch

and names it in a pairing: ``BootstrapPairing(..., statistic=share_agreeing)``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any, Generic, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class MetricFunctionError(LookupError):
    """A metric function that is not registered, or whose implementation cannot be imported: the message names
    it and what to do."""


class MetricFunction(Generic[P, R]):
    """A registered metric function: called like its implementation, which its loader imports on the first call
    (then kept). Compared and hashed by identity, so it can key a cache of what it made."""

    __slots__ = ("_function", "_loader", "name")

    def __init__(self, loader: Callable[[], Callable[P, R]]) -> None:
        self._loader = loader
        self._function: Callable[P, R] | None = None
        # What messages and the registry call it: where it is declared.
        self.name = f"{loader.__module__}.{loader.__qualname__}"

    def resolve(self) -> Callable[P, R]:
        """The implementation, imported once."""
        if self._function is None:
            try:
                function = self._loader()
            except (ImportError, AttributeError) as error:
                raise MetricFunctionError(
                    f"the metric function {self.name} cannot load its implementation ({error}): install the "
                    "package it imports, or correct the import in its loader"
                ) from error
            if not callable(function):
                raise MetricFunctionError(f"the metric function {self.name} loaded {function!r}, not a function")
            self._function = function
        return self._function

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<metric function {self.name}>"


_REGISTRY: dict[str, MetricFunction[..., Any]] = {}


def metric_function(loader: Callable[[], Callable[P, R]]) -> MetricFunction[P, R]:
    """Register ``loader`` (a decorator): the metric function it returns, imported on first use. Registering a
    loader of the same module and name again replaces the earlier one (a reloaded module, a test's own)."""
    function = MetricFunction(loader)
    _REGISTRY[function.name] = function
    return function


def registered_metric_functions() -> Mapping[str, MetricFunction[..., Any]]:
    """Every registered metric function by name (``package.module.loader``), for checks that each resolves."""
    return dict(_REGISTRY)


def registered_metric_function(name: str) -> MetricFunction[..., Any]:
    """The metric function registered as ``name``; a :class:`MetricFunctionError` naming it (and the close
    registered names) when there is none."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    close = difflib.get_close_matches(name, list(_REGISTRY), n=3)
    hint = f"did you mean {' or '.join(close)}?" if close else "declare it with @metric_function beside its metric"
    raise MetricFunctionError(f"no metric function is registered as {name!r}: {hint}")
