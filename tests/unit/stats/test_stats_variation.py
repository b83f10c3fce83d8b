"""Coefficient of variation per cell against R's sd() / mean() and the mean-zero rule."""

from __future__ import annotations

import numpy as np
import pytest

from snap_bench.stats import UndefinedStatistic, coefficient_of_variation, coefficient_of_variation_batch

RUNS = [[4, 4, 5], [2, 3, 2], [5, 5, 5], [3, 3, 4], [1, 2, 1], [4, 5, 4], [2, 2, 3], [3, 4, 3], [5, 4, 5], [1, 1, 2]]

# R 4.2.2 (sd() uses the n - 1 divisor):
#
#   options(digits = 15)
#   m <- matrix(c(4,4,5, 2,3,2, 5,5,5, 3,3,4, 1,2,1, 4,5,4, 2,2,3, 3,4,3, 5,4,5, 1,1,2),
#               ncol = 3, byrow = TRUE)
#   print(apply(m, 1, function(row) sd(row) / mean(row) * 100))
#    [1] 13.3234677505298 24.7435829652697  0.0000000000000 17.3205080756888
#    [5] 43.3012701892219 13.3234677505298 24.7435829652697 17.3205080756888
#    [9] 12.3717914826348 43.3012701892219
R_PER_ROW = [
    13.3234677505298,
    24.7435829652697,
    0.0,
    17.3205080756888,
    43.3012701892219,
    13.3234677505298,
    24.7435829652697,
    17.3205080756888,
    12.3717914826348,
    43.3012701892219,
]


def test_matches_r_sd_over_mean() -> None:
    result = coefficient_of_variation(RUNS)
    assert result.per_row == pytest.approx(R_PER_ROW, abs=1e-12)
    assert result.mean == pytest.approx(np.mean(R_PER_ROW), abs=1e-12)
    assert result.max == pytest.approx(max(R_PER_ROW), abs=1e-12)
    assert result.n_undefined == 0


def test_row_with_mean_zero() -> None:
    """All zeros: no variation, CV 0. Mean 0 with spread: undefined, left out and counted."""
    matrix = [[0, 0, 0], [-1, 0, 1], [2, 2, 4]]
    result = coefficient_of_variation(matrix)
    assert result.per_row[0] == 0.0
    assert np.isnan(result.per_row[1])
    assert result.per_row[2] == pytest.approx(100 * np.std([2, 2, 4], ddof=1) / np.mean([2, 2, 4]))
    assert result.n_undefined == 1
    assert result.mean == pytest.approx(np.mean([0.0, result.per_row[2]]))
    assert result.max == pytest.approx(result.per_row[2])


def test_negative_mean_uses_its_absolute_value() -> None:
    assert coefficient_of_variation([[-2, -4]]).per_row[0] == pytest.approx(100 * np.sqrt(2) / 3)


def test_every_row_undefined_raises() -> None:
    with pytest.raises(UndefinedStatistic, match="mean 0"):
        coefficient_of_variation([[-1, 1], [2, -2]])


def test_batch_with_counts_is_the_weighted_mean_of_defined_rows() -> None:
    counts = np.array([[1] * 10, [3, 0, 0, 0, 0, 0, 0, 0, 0, 7]])
    batch = coefficient_of_variation_batch(RUNS, counts)
    assert batch[0] == pytest.approx(np.mean(R_PER_ROW), abs=1e-12)
    assert batch[1] == pytest.approx((3 * R_PER_ROW[0] + 7 * R_PER_ROW[9]) / 10, abs=1e-12)


@pytest.mark.parametrize(
    ("matrix", "message"),
    [([1.0, 2.0], "2-D"), ([[1.0], [2.0]], "at least 2 columns"), ([[1.0, np.nan]], "NaN")],
)
def test_bad_matrix_raises_value_error(matrix: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        coefficient_of_variation(matrix)  # type: ignore[arg-type]
