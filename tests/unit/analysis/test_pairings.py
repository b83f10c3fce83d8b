"""The pairings' metric functions (snap_bench.analysis.metric_functions): registered, typed, lazy references.
mypy checks each against the pairing field it is given to; what it cannot see (the import inside each loader, the
arity of what that import returns) is resolved here for every function every metric declares."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest

from snap_bench.analysis import metric_functions
from snap_bench.analysis.metric_functions import (
    MetricFunction,
    MetricFunctionError,
    metric_function,
    registered_metric_function,
    registered_metric_functions,
)
from snap_bench.analysis.metric_specs import SHARED_METRICS, MetricSpec, run_pairing
from snap_bench.analysis.metric_tables import AnalysisSettings, icc21_batch
from snap_bench.analysis.pairings import (
    BootstrapPairing,
    IndependentPairing,
    JackknifePairing,
    Pairing,
    ProportionPairing,
)
from snap_bench.instruments import registered
from snap_bench.judging.baseline import BaselineSpec
from snap_bench.judging.comparison import NOT_COMPARED, compare_with_baseline
from tests.conftest import shipped_instruments
from tests.unit.judging.test_comparison import renamed, shipped, thresholds

DECLARED = {
    f"{owner}.{name}": spec.pairing
    for owner, metrics in [
        ("shared", SHARED_METRICS),
        *((kind, cls.metrics) for kind, cls in registered().items()),
        *((name, instrument.metrics) for name, instrument in shipped_instruments().items()),
    ]
    for name, spec in metrics.items()
    if spec.pairing is not None
}


def functions_of(pairing: Pairing) -> dict[str, tuple[object, int]]:
    """Each function field of ``pairing`` -> (the function, how many arguments the gate calls it with)."""
    fields: dict[str, tuple[object, int]] = {"table": (pairing.table, 2)}
    if isinstance(pairing, BootstrapPairing):
        fields["statistic"] = (pairing.statistic, 2)
    elif isinstance(pairing, JackknifePairing):
        fields["refit"] = (pairing.refit, 3)
    elif isinstance(pairing, IndependentPairing):
        fields["estimate"] = (pairing.estimate, 2)
    return fields


def test_every_method_is_declared_by_some_metric() -> None:
    kinds = {type(pairing) for pairing in DECLARED.values()}
    assert kinds == {BootstrapPairing, ProportionPairing, JackknifePairing, IndependentPairing}


@pytest.mark.parametrize("metric", sorted(DECLARED))
def test_every_function_a_pairing_names_is_registered_and_takes_what_the_gate_passes(metric: str) -> None:
    for field, (function, arity) in functions_of(DECLARED[metric]).items():
        assert isinstance(function, MetricFunction), f"{metric}.{field} is {function!r}, not a registered function"
        assert registered_metric_function(function.name) is function
        # raises TypeError unless the implementation takes that many positional arguments
        inspect.signature(function.resolve()).bind(*range(arity))


@pytest.mark.parametrize("name", sorted(registered_metric_functions()))
def test_every_registered_function_loads(name: str) -> None:
    assert callable(registered_metric_functions()[name].resolve())


def test_an_unknown_name_is_an_error_naming_it_and_the_close_ones() -> None:
    with pytest.raises(
        MetricFunctionError,
        match=r"'snap_bench\.analysis\.metric_specs\.mean_pairwise': did you mean .*mean_pairwise_r",
    ):
        registered_metric_function("snap_bench.analysis.metric_specs.mean_pairwise")
    with pytest.raises(MetricFunctionError, match=r"no metric function is registered as 'nothing_like_it'"):
        registered_metric_function("nothing_like_it")


def test_a_loader_is_run_on_first_call_only_and_a_broken_one_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    # this test's functions stay out of the registry the other tests read
    monkeypatch.setattr(metric_functions, "_REGISTRY", dict(registered_metric_functions()))
    loads: list[str] = []

    @metric_function
    def doubled() -> Callable[[float], float]:
        loads.append("doubled")
        return lambda value: 2 * value

    @metric_function
    def missing() -> Callable[[float], float]:
        from snap_bench.stats import no_such_batch  # type: ignore[attr-defined]

        return no_such_batch  # type: ignore[no-any-return]

    assert loads == []  # declaring it imports nothing
    assert registered_metric_function(doubled.name) is doubled
    assert [doubled(1.0), doubled(2.5)] == [2.0, 5.0]
    assert loads == ["doubled"]
    with pytest.raises(MetricFunctionError, match=rf"{missing.name} cannot load its implementation .*no_such_batch"):
        missing(1.0)


# A team's own metric: a statistic registered in the team's code, named by the spec of the team's instrument.
TEAM_LOADS: list[str] = []


@metric_function
def icc_shortfall() -> Callable[[Any, Any], Any]:
    TEAM_LOADS.append("icc_shortfall")

    def shortfall(matrix: Any, counts: Any) -> Any:
        return 1.0 - icc21_batch(matrix, counts)

    return shortfall


class TeamProfile:
    """The shipped profile with one metric of a team's own: what comparing with a baseline reads of it."""

    def __init__(self, profile: Any) -> None:
        self._profile = profile
        spec = MetricSpec("ICC shortfall", better="lower", pairing=run_pairing(icc_shortfall))
        self.metrics: Mapping[str, MetricSpec] = {**profile.metrics, "icc_shortfall": spec}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._profile, name)


def test_a_teams_own_metric_function_is_registered_and_used_by_the_gate() -> None:
    new = renamed([o for o in shipped("qwen2.5-coder-1.5b") if o.instrument == "profile"], "new")
    old = renamed([o for o in shipped("smollm2-135m") if o.instrument == "profile"], "old")
    config = dataclasses.replace(
        thresholds("profile"), metrics={}, non_inferiority={"icc2_1": 1.0, "icc_shortfall": 1.0}, min_coverage=0.0
    )
    comparisons = compare_with_baseline(
        [*new, *old],
        BaselineSpec("old"),
        {"profile": TeamProfile(shipped_instruments()["profile"])},
        AnalysisSettings(n_resamples=50),
        lambda instrument: config,
    )
    by_metric = {c.metric: c for c in comparisons}
    team, shared = by_metric["icc_shortfall"], by_metric["icc2_1"]
    assert team.outcome != NOT_COMPARED
    assert shared.outcome != NOT_COMPARED
    assert team.new_value is not None
    assert shared.new_value is not None
    assert team.baseline_value is not None
    assert shared.baseline_value is not None
    # the team's statistic made the figure: the shared ICC's complement, on both sides
    assert team.new_value == pytest.approx(1.0 - shared.new_value)
    assert team.baseline_value == pytest.approx(1.0 - shared.baseline_value)
    assert not np.isclose(team.new_value, shared.new_value)
    # loaded when the gate first used it, once
    assert TEAM_LOADS == ["icc_shortfall"]
