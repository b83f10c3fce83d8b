"""What a figure rests on: the share of its design it was computed from, shown beside it.

A metric computed on 47 of 540 cells is not the same finding as one computed on all 540, even with the
same value: every table cell shows ``used / designed``, and a figure on less than half of its design is
drawn grey and hatched, never in a status colour (it cannot look "excellent").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from snap_bench.analysis.coverage import THIN_COVERAGE

THIN_CLASS = "snap-thin"


def used_designed(metric: Mapping[str, Any]) -> tuple[int, int] | None:
    """(n, n + n_left_out) of a metric's entry in analysis.json, or None without counts."""
    n, left_out = metric.get("n"), metric.get("n_left_out") or 0
    if not isinstance(n, int) or not isinstance(left_out, int) or n + left_out <= 0:
        return None
    return n, n + left_out


def is_thin(metric: Mapping[str, Any]) -> bool:
    counts = used_designed(metric)
    return counts is not None and counts[0] / counts[1] < THIN_COVERAGE


def coverage_text(metric: Mapping[str, Any]) -> str:
    """``47 / 540`` (used / designed), or nothing when the metric has no counts."""
    counts = used_designed(metric)
    return "" if counts is None else f"{counts[0]:,} / {counts[1]:,}"


def cell_class(status_class: str, metric: Mapping[str, Any]) -> str:
    """The status colour, or the hatched grey of a thin figure in its place."""
    return THIN_CLASS if is_thin(metric) else status_class
