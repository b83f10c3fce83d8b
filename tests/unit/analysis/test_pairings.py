"""The pairings' "module:function" references (snap_bench.analysis.pairings): mypy cannot see through a
string, so every reference every metric declares is resolved here."""

from __future__ import annotations

import pytest

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.pairings import (
    BootstrapPairing,
    IndependentPairing,
    JackknifePairing,
    Pairing,
    ProportionPairing,
    load_function,
)
from snap_bench.instruments import registered

DECLARED = {
    f"{owner}.{name}": spec.pairing
    for owner, metrics in [("shared", SHARED_METRICS), *((kind, cls.metrics) for kind, cls in registered().items())]
    for name, spec in metrics.items()
    if spec.pairing is not None
}


def test_every_method_is_declared_by_some_metric() -> None:
    kinds = {type(pairing) for pairing in DECLARED.values()}
    assert kinds == {BootstrapPairing, ProportionPairing, JackknifePairing, IndependentPairing}


@pytest.mark.parametrize("metric", sorted(DECLARED))
def test_every_function_a_pairing_names_exists(metric: str) -> None:
    pairing: Pairing = DECLARED[metric]
    functions: list[object] = [pairing.load_table()]
    if isinstance(pairing, BootstrapPairing):
        functions.append(pairing.load_statistic())
    elif isinstance(pairing, JackknifePairing):
        functions.append(pairing.load_refit())
    elif isinstance(pairing, IndependentPairing):
        functions.append(pairing.load_estimate())
    assert all(callable(function) for function in functions)


@pytest.mark.parametrize("reference", ["snap_bench.stats", "snap_bench.stats:", ":mean_pairwise_r_batch"])
def test_a_malformed_reference_says_what_it_should_be(reference: str) -> None:
    with pytest.raises(ValueError, match=r"is not a 'package\.module:function' reference"):
        load_function(reference)


def test_a_reference_to_a_missing_function_fails_on_use() -> None:
    with pytest.raises(AttributeError):
        load_function("snap_bench.stats:no_such_batch")
