"""The psychometric profile's own metrics (the shared ones are in snap_bench.metric_specs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from snap_bench.metric_specs import ALPHA, MetricSpec, Pairing, run_pairing

if TYPE_CHECKING:
    from snap_bench.metric_specs import Batch

# The factors of the profile design, in the order its condition ids name them.
FACTORS = ("item", "paraphrase", "system_prompt", "temperature", "context")
# What the paraphrases of an item are compared within: the same item asked under the same condition.
PARAPHRASE_ROWS = ("item", "system_prompt", "temperature", "context", "run")


def _cv() -> Batch:
    from snap_bench.stats import coefficient_of_variation_batch

    return coefficient_of_variation_batch


def _mean_pairwise_r() -> Batch:
    from snap_bench.stats import mean_pairwise_r_batch

    return mean_pairwise_r_batch


METRICS: Mapping[str, MetricSpec] = {
    "inter_paraphrase_r": MetricSpec(
        "inter-paraphrase r (original design)",
        pairing=Pairing(
            ("item", "system_prompt", "temperature", "context", "run"), "paraphrase", "keyed", _mean_pairwise_r
        ),
        description="mean Pearson r between the paraphrases of each item, asked under the same condition",
    ),
    "cv_mean": MetricSpec(
        "CV mean (original design)",
        unit="percent",
        better="lower",
        composite_scale=100.0,
        pairing=run_pairing(_cv),
        description="mean coefficient of variation (SD / mean, in %) of each cell's runs",
    ),
    "cv_max": MetricSpec("CV max (original design)", unit="percent", better="lower", composite_scale=100.0),
    # one per construct, cronbach_alpha[care]: the construct's paraphrases as the items
    "cronbach_alpha": MetricSpec(f"Cronbach {ALPHA} {{level}} (paraphrases)", composite_scale=None),
    # The original design's alphas over a bank's five items: five different constructs, so not a scale;
    # reported for comparison with the design, never judged.
    "cronbach_alpha_moral": MetricSpec(
        f"Cronbach {ALPHA} moral (original design)",
        description="the original design's alpha across the five moral constructs; not a scale, not judged",
    ),
    "cronbach_alpha_personality": MetricSpec(
        f"Cronbach {ALPHA} personality (original design)",
        description="the original design's alpha across the five Big Five traits; not a scale, not judged",
    ),
}
