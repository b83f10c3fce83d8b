"""The prompt-perturbation instrument's own metrics (the shared ones are in snap_bench.analysis.metric_specs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from snap_bench.analysis.metric_functions import metric_function
from snap_bench.analysis.metric_specs import MetricSpec, rate
from snap_bench.analysis.pairings import BootstrapPairing, ProportionPairing

if TYPE_CHECKING:
    from snap_bench.analysis.pairings import Batch, TableMaker

# A unit is one input sample asked at one temperature in one run; its variants are the columns.
UNIT = ("item", "temperature", "run")

# The task's metric functions: each imports its implementation (numpy, pandas) on first use.


@metric_function
def baseline_table() -> TableMaker:
    """One row per baseline answer: its unit, variant, label value, error against the gold and unscored flag."""
    from snap_bench.instruments.task.pairing import baseline_table

    return baseline_table


@metric_function
def flip_table() -> TableMaker:
    from snap_bench.instruments.task.pairing import flip_table

    return flip_table


@metric_function
def accuracy() -> Batch:
    from snap_bench.instruments.task.pairing import accuracy_batch

    return accuracy_batch


@metric_function
def consistency() -> Batch:
    from snap_bench.instruments.task.pairing import consistency_batch

    return consistency_batch


@metric_function
def corrected_spread() -> Batch:
    from snap_bench.stats.variant_effect import corrected_spread_batch

    return corrected_spread_batch


@metric_function
def max_flip_rate() -> Batch:
    from snap_bench.instruments.task.pairing import max_flip_rate_batch

    return max_flip_rate_batch


def _by_sample(values: str, statistic: Batch, complete: bool = False) -> BootstrapPairing:
    """Units x variants, resampled by input sample; unscored answers stay NaN for the statistic."""
    return BootstrapPairing(
        rows=UNIT,
        columns="variant",
        values=values,
        statistic=statistic,
        cluster="item",
        complete=complete,
        table=baseline_table,
    )


METRICS: Mapping[str, MetricSpec] = {
    "custom_accuracy": MetricSpec(
        "custom accuracy",
        unit="share",
        pairing=_by_sample("error", accuracy),
        description="1 - mean penalty / worst penalty on the labels' weights (a nominal label set: the share right)",
    ),
    "polarity_accuracy": MetricSpec("polarity accuracy", unit="share"),
    "exact_accuracy": MetricSpec("exact accuracy", unit="share"),
    "consistency": MetricSpec(
        "consistency",
        unit="share",
        pairing=_by_sample("value", consistency),
        description="mean share of the variants giving an input's modal label (1 = every rewording agrees)",
    ),
    "weighted_index": MetricSpec("weighted index", unit="share", description="0.7 x accuracy + 0.3 x consistency"),
    "fleiss_kappa": MetricSpec("Fleiss kappa", description="agreement of the variants, chance-corrected"),
    "variant_effect_sd": MetricSpec(
        "variant effect SD",
        unit="share",
        better="lower",
        composite_scale=None,
        description="SD of the variants' true accuracies, net of input noise (inputs a random effect)",
    ),
    "variant_spread": MetricSpec(
        "variant spread (noise-corrected)",
        unit="share",
        better="lower",
        pairing=_by_sample("error", corrected_spread),
        description="best minus worst of the variants' accuracy effects shrunk by the share of their variance "
        "that is the variant's, not the inputs' (0 = the wording does not matter; input noise removed)",
    ),
    "variant_spread_observed": MetricSpec(
        "variant spread (observed)",
        unit="share",
        better="lower",
        composite_scale=None,
        description="best minus worst variant's custom accuracy as measured, input noise included (not judged)",
    ),
    "max_flip_rate": MetricSpec(
        "largest flip rate",
        unit="share",
        better="lower",
        pairing=BootstrapPairing(
            rows=UNIT,
            columns="count",
            values="amount",
            statistic=max_flip_rate,
            cluster="item",
            table=flip_table,
        ),
        description="the largest share of inputs whose label changes when one rewording dimension changes level",
    ),
    # Judged on the baseline answers only (phase 2 asks one variant per model).
    "unscored_rate": rate(
        "unscored answers",
        "share of baseline answers without a label (refused, invalid or API error)",
        ProportionPairing(rows=("condition_id",), values="unscored", table=baseline_table),
    ),
}
