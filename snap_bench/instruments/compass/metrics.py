"""The political compass's own metrics (the shared ones are in snap_bench.metric_specs)."""

from __future__ import annotations

from collections.abc import Mapping

from snap_bench.metric_specs import MetricSpec, rate

AXES = ("economic", "social")
FACTORS = ("item", "paraphrase", "system_prompt", "temperature", "choice")


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
        description="the larger of the two axes' spreads of the coordinate across conditions",
    ),
    **{f"coordinate_sd_{axis}": _spread(axis) for axis in AXES},
    "inter_paraphrase_r": MetricSpec(
        "inter-paraphrase r", description="mean Pearson r between the paraphrases of each statement"
    ),
    "no_opinion_rate": rate("no opinion", "share of unforced answers that decline to take a side"),
}
