"""What an instrument's part of the report is drawn from, as the report hands it over."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from snap_bench.analysis.metric_specs import MetricCatalogue
from snap_bench.observations.observation import Observation


@dataclass(frozen=True)
class ReportContext:
    """What an instrument's report section is drawn from (all of it already escaped-free data)."""

    models: Mapping[str, Mapping[str, Any]]  # model -> its analysis.json entry, by rank
    observations: Sequence[Observation]  # this instrument's observations
    thresholds: Mapping[str, Mapping[str, Any]]  # metric -> better, minimum, target, excellent
    comparisons: Sequence[Mapping[str, Any]]  # this instrument's baseline comparisons
    catalogue: MetricCatalogue  # what each metric is (labels, units, direction)
