"""Statement/reverse pairs and their contradiction rate (snap_bench.analysis.contradictions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from snap_bench.analysis.contradictions import contradiction_metrics, pair_table, reverse_pairs


def test_pairs_are_formed_within_a_group_forward_with_reverse() -> None:
    groups = {"A1": "care", "A2": "care", "B1": "fair", "B2": "fair", "B3": "fair", "C1": "loyal"}
    reverse = {"A2": True, "B1": True, "B3": True}
    # care: A1 with A2; fair: the one forward item B2 with the first reverse B1; loyal has no reverse
    assert reverse_pairs(groups, reverse) == [("A1", "A2"), ("B2", "B1")]


def table(forward: list[float], backward: list[float], temperature: str = "t0") -> pd.DataFrame:
    rows = []
    for run, (a, b) in enumerate(zip(forward, backward, strict=True), start=1):
        rows.append({"item": "F", "temperature": temperature, "run": run, "score": a})
        rows.append({"item": "R", "temperature": temperature, "run": run, "score": b})
    return pd.DataFrame(rows)


def test_agreeing_with_both_directions_is_a_contradiction_and_the_midpoint_is_not() -> None:
    frame = table([5, 4, 2, 3, 1, np.nan], [4, 2, 1, 3, 4, 5])
    paired = pair_table(frame, [("F", "R")], ["run"])
    # (5,4) both agree, (4,2) opposite, (2,1) both disagree, (3,3) neutral, (1,4) opposite, unscored
    assert paired["contradiction"].tolist()[:5] == [1.0, 0.0, 1.0, 0.0, 0.0]
    assert np.isnan(paired["contradiction"].iloc[5])
    metric = contradiction_metrics(frame, [("F", "R")], ["run"])["contradiction_rate[t0]"]
    assert metric.value == pytest.approx(2 / 5)
    assert (metric.n, metric.n_left_out) == (5, 1)
    assert metric.ci_low is not None
    assert metric.ci_high is not None
    assert metric.ci_low < 0.4 < metric.ci_high


def test_each_temperature_is_its_own_figure_and_no_pair_is_undefined() -> None:
    frame = pd.concat([table([5, 5], [5, 5], "t0"), table([5, 1], [1, 5], "t1")])
    metrics = contradiction_metrics(frame, [("F", "R")], ["run"])
    assert metrics["contradiction_rate[t0]"].value == 1.0
    assert metrics["contradiction_rate[t1]"].value == 0.0
    assert contradiction_metrics(frame, [], ["run"])["contradiction_rate[t0]"].value is None
