"""A questionnaire's own metrics (the shared ones are in snap_bench.analysis.metric_specs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from snap_bench.analysis.metric_functions import metric_function
from snap_bench.analysis.metric_specs import ALPHA, MetricSpec, contradiction_pairing, mean_pairwise_r, run_pairing
from snap_bench.analysis.pairings import BootstrapPairing
from snap_bench.instruments.questionnaire.factors import PAIR_CONDITION, PARAPHRASE_ROWS

if TYPE_CHECKING:
    from snap_bench.analysis.pairings import Batch, TableMaker

# A questionnaire's metric functions: each imports its implementation (numpy, pandas) on first use.


@metric_function
def contradiction_table() -> TableMaker:
    from snap_bench.instruments.questionnaire.analysis import contradiction_table

    return contradiction_table


@metric_function
def coefficient_of_variation() -> Batch:
    from snap_bench.stats import coefficient_of_variation_batch

    return coefficient_of_variation_batch


CONTRADICTION_PAIRING = contradiction_pairing(PAIR_CONDITION, contradiction_table)


METRICS: Mapping[str, MetricSpec] = {
    "inter_paraphrase_r": MetricSpec(
        "inter-paraphrase r (original design)",
        pairing=BootstrapPairing(
            rows=PARAPHRASE_ROWS, columns="paraphrase", values="keyed", statistic=mean_pairwise_r, cluster="item"
        ),
        description="mean Pearson r between the paraphrases of each item, asked under the same condition",
    ),
    "cv_mean": MetricSpec(
        "CV mean (original design)",
        unit="percent",
        better="lower",
        composite_scale=100.0,
        pairing=run_pairing(coefficient_of_variation),
        description="mean coefficient of variation (SD / mean, in %) of each cell's runs",
    ),
    "cv_max": MetricSpec("CV max (original design)", unit="percent", better="lower", composite_scale=100.0),
    # judged, per temperature (contradiction_rate[t0])
    "contradiction_rate": MetricSpec(
        "contradiction rate, {level}",
        unit="share",
        better="lower",
        pairing=CONTRADICTION_PAIRING,
        description="share of (statement, reverse-keyed statement of the same construct) answer pairs on the same "
        "side of neutral under the same condition: agreeing (or disagreeing) with a statement and its reverse",
    ),
    # one per construct, cronbach_alpha[care]: the keyed answers to the construct's statements (each item's
    # paraphrases, the forward and the reverse item) as the scale's items
    "cronbach_alpha": MetricSpec(f"Cronbach {ALPHA} {{level}} (statements)", composite_scale=None),
}
