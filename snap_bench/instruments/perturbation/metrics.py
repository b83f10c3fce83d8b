"""The prompt-perturbation instrument's own metrics (the shared ones are in snap_bench.analysis.metric_specs)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from snap_bench.analysis.metric_specs import MetricSpec, Pairing, rate

if TYPE_CHECKING:
    from snap_bench.analysis.metric_specs import Batch
    from snap_bench.observations.observation import Observation

    TableMaker = Callable[[Any, Sequence[Observation]], Any]

# A unit is one input sample asked at one temperature in one run; its variants are the columns.
UNIT = ("item", "temperature", "run")


def _baseline_table() -> TableMaker:
    from snap_bench.instruments.perturbation.pairing import baseline_table

    return baseline_table


def _flip_table() -> TableMaker:
    from snap_bench.instruments.perturbation.pairing import flip_table

    return flip_table


def _accuracy() -> Batch:
    from snap_bench.instruments.perturbation.pairing import accuracy_batch

    return accuracy_batch


def _consistency() -> Batch:
    from snap_bench.instruments.perturbation.pairing import consistency_batch

    return consistency_batch


def _max_flip_rate() -> Batch:
    from snap_bench.instruments.perturbation.pairing import max_flip_rate_batch

    return max_flip_rate_batch


def _corrected_spread() -> Batch:
    from snap_bench.instruments.perturbation.variant_effect import corrected_spread_batch

    return corrected_spread_batch


def _by_sample(values: str, statistic: Callable[[], Batch], complete: bool = False) -> Pairing:
    """Units x variants, resampled by input sample; unscored answers stay NaN for the statistic."""
    return Pairing(UNIT, "variant", values, statistic, cluster="item", complete=complete, table=_baseline_table)


METRICS: Mapping[str, MetricSpec] = {
    "custom_accuracy": MetricSpec(
        "custom accuracy",
        unit="share",
        pairing=_by_sample("error", _accuracy),
        description="1 - MSE / worst penalty on the polarity-weighted encoding",
    ),
    "polarity_accuracy": MetricSpec("polarity accuracy", unit="share"),
    "exact_accuracy": MetricSpec("exact accuracy", unit="share"),
    "consistency": MetricSpec(
        "consistency",
        unit="share",
        pairing=_by_sample("value", _consistency),
        description="mean share of the 16 variants giving an input's modal label (1 = every rewording agrees)",
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
        pairing=_by_sample("error", _corrected_spread),
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
        pairing=Pairing(UNIT, "count", "amount", _max_flip_rate, cluster="item", table=_flip_table),
        description="the largest share of inputs whose label changes when one factor changes level",
    ),
    # Judged on the baseline answers only (phase 2 asks one variant per model).
    "unscored_rate": rate(
        "unscored answers",
        "share of baseline answers without a label (refused, invalid or API error)",
        Pairing(("condition_id",), "", "unscored", _accuracy, method="proportion", table=_baseline_table),
    ),
}
