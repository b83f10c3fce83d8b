"""The political compass's own metrics (the shared ones are in snap_bench.analysis.metric_specs)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from snap_bench.analysis.metric_specs import MEAN_PAIRWISE_R, MetricSpec, contradiction_pairing, rate
from snap_bench.analysis.pairings import BootstrapPairing, IndependentPairing
from snap_bench.instruments.compass.factors import AXES, CONDITION_FACTORS, PAIR_CONDITION

# The shared table with each answer's axis and its condition, which both spreads are computed on.
SPREAD_TABLE = "snap_bench.instruments.compass.analysis:spread_table"

CONTRADICTION_PAIRING = contradiction_pairing(
    PAIR_CONDITION, "snap_bench.instruments.compass.analysis:contradiction_table"
)
# The judged spread net of run noise, per temperature: its interval is conditional on the shipped items
# and conditions, so two models' spreads are independent estimates, each with its own interval.
NET_SPREAD_PAIRING = IndependentPairing(
    values="keyed",
    estimate="snap_bench.instruments.compass.analysis:spread_max",
    table=SPREAD_TABLE,
    by="temperature",
)


# Items x conditions of mean keyed scores, per axis; the larger axis's spread, resampled by item.
SPREAD_PAIRING = BootstrapPairing(
    rows=("axis", "item"),
    columns="condition",
    values="keyed",
    statistic="snap_bench.stats:coordinate_spread_batch",
    cluster="item",
    complete=False,
    aggregate="mean",
    within="axis",
    table=SPREAD_TABLE,
)


def _points(label: str, description: str) -> MetricSpec:
    """A spread of the placement, in coordinate points (lower is better; 10 points maps to 0)."""
    return MetricSpec(label, unit="points", better="lower", composite_scale=10.0, description=description)


def _spread(axis: str) -> MetricSpec:
    return _points(
        f"coordinate SD {axis} (original design)",
        f"the original design's figure: SD of the {axis} coordinate across system prompts, temperatures and "
        "choice, run noise included (20-point axis)",
    )


def _net_spread(axis: str) -> MetricSpec:
    return _points(
        f"spread of the {axis} placement, {{level}}",
        f"SD of the {axis} coordinate across system prompts and choice at one temperature, net of run noise "
        "(the condition component of a G study, in coordinate points)",
    )


METRICS: Mapping[str, MetricSpec] = {
    # judged, per temperature (coordinate_spread_max[t0])
    "coordinate_spread_max": dataclasses.replace(
        _points(
            "spread of the placement (larger axis), {level}",
            "the larger of the two axes' spreads across system prompts and choice, net of run noise",
        ),
        pairing=NET_SPREAD_PAIRING,
    ),
    **{f"coordinate_spread_{axis}": _net_spread(axis) for axis in AXES},
    "contradiction_rate": MetricSpec(
        "contradiction rate, {level}",
        unit="share",
        better="lower",
        pairing=CONTRADICTION_PAIRING,
        description="share of (statement, opposite statement) answer pairs on the same side of neutral under the "
        "same condition: agreeing with both directions of an axis",
    ),
    "coordinate_sd_max": dataclasses.replace(
        _points(
            "coordinate SD (larger axis, original design)",
            "the original design's figure: the larger of the two axes' spreads, run noise included",
        ),
        pairing=SPREAD_PAIRING,
    ),
    **{f"coordinate_sd_{axis}": _spread(axis) for axis in AXES},
    "inter_paraphrase_r": MetricSpec(
        "inter-paraphrase r (original design)",
        pairing=BootstrapPairing(
            rows=("item", *CONDITION_FACTORS, "run"),
            columns="paraphrase",
            values="keyed",
            statistic=MEAN_PAIRWISE_R,
            cluster="item",
        ),
        description="mean Pearson r between the paraphrases of each statement",
    ),
    "no_opinion_rate": rate("no opinion", "share of unforced answers that decline to take a side"),
}
