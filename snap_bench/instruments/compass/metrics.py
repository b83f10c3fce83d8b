"""The political compass's own metrics (the shared ones are in snap_bench.analysis.metric_specs)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from snap_bench.analysis.metric_functions import metric_function
from snap_bench.analysis.metric_specs import MetricSpec, contradiction_pairing, mean_pairwise_r, rate
from snap_bench.analysis.pairings import BootstrapPairing, IndependentPairing
from snap_bench.instruments.compass.factors import AXES, CONDITION_FACTORS, PAIR_CONDITION

if TYPE_CHECKING:
    from snap_bench.analysis.pairings import Batch, Estimate, TableMaker

# The compass's metric functions: each imports its implementation (numpy, pandas) on first use.


@metric_function
def spread_table() -> TableMaker:
    """The shared table with each answer's axis and its condition, which both spreads are computed on."""
    from snap_bench.instruments.compass.analysis import spread_table

    return spread_table


@metric_function
def contradiction_table() -> TableMaker:
    from snap_bench.instruments.compass.analysis import contradiction_table

    return contradiction_table


@metric_function
def spread_max() -> Estimate:
    from snap_bench.instruments.compass.analysis import spread_max

    return spread_max


@metric_function
def coordinate_spread() -> Batch:
    from snap_bench.stats import coordinate_spread_batch

    return coordinate_spread_batch


CONTRADICTION_PAIRING = contradiction_pairing(PAIR_CONDITION, contradiction_table)
# The judged spread net of run noise, per temperature: its interval is conditional on the shipped items
# and conditions, so two models' spreads are independent estimates, each with its own interval.
NET_SPREAD_PAIRING = IndependentPairing(
    values="keyed",
    estimate=spread_max,
    table=spread_table,
    by="temperature",
)


# Items x conditions of mean keyed scores, per axis; the larger axis's spread, resampled by item.
SPREAD_PAIRING = BootstrapPairing(
    rows=("axis", "item"),
    columns="condition",
    values="keyed",
    statistic=coordinate_spread,
    cluster="item",
    complete=False,
    aggregate="mean",
    within="axis",
    table=spread_table,
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
            statistic=mean_pairwise_r,
            cluster="item",
        ),
        description="mean Pearson r between the paraphrases of each statement",
    ),
    "no_opinion_rate": rate("no opinion", "share of unforced answers that decline to take a side"),
}
