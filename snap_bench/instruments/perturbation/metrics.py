"""The prompt-perturbation instrument's own metrics (the shared ones are in snap_bench.metric_specs)."""

from __future__ import annotations

from collections.abc import Mapping

from snap_bench.metric_specs import MetricSpec

METRICS: Mapping[str, MetricSpec] = {
    "custom_accuracy": MetricSpec(
        "custom accuracy", unit="share", description="1 - MSE / worst penalty on the polarity-weighted encoding"
    ),
    "polarity_accuracy": MetricSpec("polarity accuracy", unit="share"),
    "exact_accuracy": MetricSpec("exact accuracy", unit="share"),
    "consistency": MetricSpec(
        "consistency",
        unit="share",
        description="mean share of the 16 variants giving an input's modal label (1 = every rewording agrees)",
    ),
    "weighted_index": MetricSpec("weighted index", unit="share", description="0.7 x accuracy + 0.3 x consistency"),
    "fleiss_kappa": MetricSpec("Fleiss kappa", description="agreement of the variants, chance-corrected"),
    "variant_spread": MetricSpec(
        "variant spread",
        unit="share",
        better="lower",
        description="best minus worst variant's custom accuracy (0 = the wording does not matter)",
    ),
    "max_flip_rate": MetricSpec(
        "largest flip rate",
        unit="share",
        better="lower",
        description="the largest share of inputs whose label changes when one factor changes level",
    ),
}
