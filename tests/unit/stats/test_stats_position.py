"""Compass coordinates: the Neural Net Neutrality formula, the spread across conditions, the two-way bootstrap.

Reference for the coordinate: the original design's aggregation (tools/aggregate.py as described in
the design document): "per-axis raw sum is normalized to [-10..+10] by dividing by the maximum
possible absolute raw score (2 * N_questions_on_axis) and multiplying by 10".
"""

from __future__ import annotations

import numpy as np
import pytest

from snap_bench.stats import (
    UndefinedStatistic,
    axis_coordinate,
    axis_coordinate_batch,
    coordinate_spread_batch,
    two_way_bootstrap_ci,
)


def test_coordinate_is_the_designs_normalised_sum() -> None:
    # Four economic answers, keyed: +2, +1, 0, -1 -> raw sum 2, largest |sum| 2 x 4 = 8 -> 10 x 2/8 = 2.5.
    assert axis_coordinate([2, 1, 0, -1]) == pytest.approx(2.5)
    assert axis_coordinate([2, 2, 2]) == pytest.approx(10.0)
    assert axis_coordinate([-2, -2]) == pytest.approx(-10.0)


@pytest.mark.parametrize("bad", [[], [1.0, np.nan], [3.0], [-2.5]])
def test_coordinate_refuses_bad_scores(bad: list[float]) -> None:
    with pytest.raises(ValueError, match="axis_coordinate"):
        axis_coordinate(bad)


def test_batch_coordinate_leaves_out_unanswered_cells_and_weights_rows_by_counts() -> None:
    matrix = np.array([[2.0, np.nan], [0.0, -1.0], [1.0, 1.0]])
    # Each row once: answered cells 2, 0, -1, 1, 1 -> mean 0.6 -> coordinate 3.0.
    assert axis_coordinate_batch(matrix)[0] == pytest.approx(3.0)
    counts = np.array([[3, 0, 0], [0, 2, 1]], dtype=float)
    # Row 0 thrice: only cell 2 (x3) -> 10. Rows 1, 1, 2: 0, -1, 0, -1, 1, 1 -> mean 0 -> 0.
    assert axis_coordinate_batch(matrix, counts) == pytest.approx([10.0, 0.0])


def test_spread_is_the_sd_of_the_column_coordinates() -> None:
    # Columns = conditions; their coordinates 5 x column means: 5 x [1.5, 0.5, -0.5] = [7.5, 2.5, -2.5].
    matrix = np.array([[2.0, 1.0, 0.0], [1.0, 0.0, -1.0]])
    assert coordinate_spread_batch(matrix)[0] == pytest.approx(np.std([7.5, 2.5, -2.5], ddof=1))
    assert coordinate_spread_batch(np.ones((4, 3)))[0] == 0.0
    assert np.isnan(coordinate_spread_batch(np.array([[1.0, np.nan], [0.0, np.nan]]))[0])


def test_two_way_bootstrap_of_identical_answers_has_no_width() -> None:
    interval = two_way_bootstrap_ci(np.full((6, 3), 1.0), n_resamples=200, seed=1)
    assert interval.estimate == interval.low == interval.high == pytest.approx(5.0)


def test_two_way_bootstrap_is_seeded_and_validates() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.integers(-2, 3, size=(8, 3)).astype(float)
    first = two_way_bootstrap_ci(matrix, n_resamples=300, seed=7)
    assert first == two_way_bootstrap_ci(matrix, n_resamples=300, seed=7)
    assert first.low <= first.estimate <= first.high
    with pytest.raises(ValueError, match=">= 2 rows"):
        two_way_bootstrap_ci(np.ones((1, 3)))
    with pytest.raises(UndefinedStatistic):
        two_way_bootstrap_ci(np.full((3, 2), np.nan))


def test_two_way_bootstrap_covers_a_simulated_respondents_true_position() -> None:
    """Simulated: items with true keyed means around a position, answered over 3 noisy runs.

    The 95% interval must cover the population position (the mean over the item population) in
    most replications; resampling items alone would be too narrow when runs disagree.
    """
    rng = np.random.default_rng(20261122)
    true_position = 0.6  # mean keyed score -> coordinate 3.0
    covered = 0
    replications = 200
    for _ in range(replications):
        item_means = rng.normal(true_position, 0.6, size=8)
        run_shifts = rng.normal(0.0, 0.3, size=3)
        answers = item_means[:, None] + run_shifts[None, :] + rng.normal(0.0, 0.4, size=(8, 3))
        interval = two_way_bootstrap_ci(np.clip(answers, -2, 2), n_resamples=400, seed=int(rng.integers(1 << 30)))
        covered += interval.low <= 5 * true_position <= interval.high
    assert covered / replications >= 0.85
