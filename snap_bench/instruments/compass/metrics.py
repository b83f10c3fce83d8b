"""The political compass's own metrics (the shared ones are in snap_bench.metric_specs)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from snap_bench.metric_specs import MetricSpec, Pairing, rate

if TYPE_CHECKING:
    from snap_bench.metric_specs import Batch
    from snap_bench.observation import Observation

AXES = ("economic", "social")
FACTORS = ("item", "paraphrase", "system_prompt", "temperature", "choice")
# The conditions whose coordinates should agree: everything but the item, the paraphrase and the run.
CONDITION_FACTORS = ("system_prompt", "temperature", "choice")


def _compass_table(instrument: Any, observations: Sequence[Observation]) -> Any:
    """The shared table with each answer's axis and its condition (system prompt/temperature/choice)."""
    from snap_bench.analysis import pairing_table

    table = pairing_table(instrument, observations)
    table["axis"] = [o.construct or "" for o in observations]
    table["condition"] = table[list(CONDITION_FACTORS)].astype(str).agg("/".join, axis=1)
    return table


def _table() -> Callable[[Any, Sequence[Observation]], Any]:
    return _compass_table


def _spread_statistic() -> Batch:
    from snap_bench.stats import coordinate_spread_batch

    return coordinate_spread_batch


def _mean_pairwise_r() -> Batch:
    from snap_bench.stats import mean_pairwise_r_batch

    return mean_pairwise_r_batch


# Items x conditions of mean keyed scores, per axis; the larger axis's spread, resampled by item.
SPREAD_PAIRING = Pairing(
    ("axis", "item"),
    "condition",
    "keyed",
    _spread_statistic,
    cluster="item",
    complete=False,
    aggregate="mean",
    within="axis",
    table=_table,
)


def _spread(axis: str) -> MetricSpec:
    return MetricSpec(
        f"coordinate SD {axis}",
        unit="points",
        better="lower",
        composite_scale=10.0,
        description=f"SD of the {axis} coordinate across system prompts, temperatures and choice (20-point axis)",
    )


METRICS: Mapping[str, MetricSpec] = {
    "coordinate_sd_max": MetricSpec(
        "coordinate SD (larger axis)",
        unit="points",
        better="lower",
        composite_scale=10.0,
        pairing=SPREAD_PAIRING,
        description="the larger of the two axes' spreads of the coordinate across conditions",
    ),
    **{f"coordinate_sd_{axis}": _spread(axis) for axis in AXES},
    "inter_paraphrase_r": MetricSpec(
        "inter-paraphrase r",
        pairing=Pairing(("item", *CONDITION_FACTORS, "run"), "paraphrase", "keyed", _mean_pairwise_r, cluster="item"),
        description="mean Pearson r between the paraphrases of each statement",
    ),
    "no_opinion_rate": rate("no opinion", "share of unforced answers that decline to take a side"),
}
