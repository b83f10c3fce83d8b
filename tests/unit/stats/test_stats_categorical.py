"""Fleiss' kappa, modal-label share and the interval MSE accuracy against published and hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from snap_bench.stats import UndefinedStatistic
from snap_bench.stats.categorical import (
    category_counts,
    fleiss_kappa,
    interval_squared_errors,
    modal_share,
    mse_accuracy,
)

# The worked example of the Wikipedia article "Fleiss' kappa" (10 subjects, 14 raters, 5 categories),
# which statsmodels' test_inter_rater.py also checks: P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210
# (0.20993 to five places). Rows are subjects, columns the number of raters per category.
WIKIPEDIA_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_matches_the_published_worked_example() -> None:
    assert fleiss_kappa(WIKIPEDIA_TABLE) == pytest.approx(0.20993, abs=5e-6)


def test_fleiss_kappa_by_hand() -> None:
    # perfect agreement on two categories: P-bar = 1, P_e = 0.5
    assert fleiss_kappa([[2, 0], [0, 2]]) == pytest.approx(1.0)
    # the two raters always split: P-bar = 0, P_e = 0.5 -> -1
    assert fleiss_kappa([[1, 1], [1, 1]]) == pytest.approx(-1.0)
    # 3 raters: P_1 = (9 - 3) / 6 = 1, P_2 = (4 + 1 - 3) / 6 = 1/3; p = (5/6, 1/6); P_e = 26/36
    expected = ((1 + 1 / 3) / 2 - 26 / 36) / (1 - 26 / 36)
    assert fleiss_kappa([[3, 0], [2, 1]]) == pytest.approx(expected)


def test_fleiss_kappa_from_labels_equals_kappa_from_counts() -> None:
    labels = [[-3, -3, 2], [2, 2, 2], [0, 2, 3]]
    counts, categories = category_counts(labels)
    assert categories.tolist() == [-3, 0, 2, 3]
    assert counts.tolist() == [[2, 0, 1, 0], [0, 0, 3, 0], [0, 1, 1, 1]]
    assert fleiss_kappa(counts) == pytest.approx(fleiss_kappa([[2, 0, 1, 0], [0, 0, 3, 0], [0, 1, 1, 1]]))


def test_fleiss_kappa_is_undefined_when_every_rating_is_one_category() -> None:
    with pytest.raises(UndefinedStatistic, match="one category"):
        fleiss_kappa([[4, 0], [4, 0]])


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ([[2, 0], [1, 2]], "same number of ratings"),
        ([[1, 0], [0, 1]], "at least 2 ratings"),
        ([[1.5, 0.5]], "whole numbers"),
        ([[-1, 3]], "non-negative"),
        ([1, 2, 3], "2-D"),
        ([[1, np.nan]], "NaN"),
    ],
)
def test_fleiss_kappa_rejects_bad_input(counts: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fleiss_kappa(counts)  # type: ignore[arg-type]


def test_modal_share_is_the_study_consistency() -> None:
    twelve_of_sixteen = [2.0] * 12 + [-2.0] * 4
    assert modal_share([twelve_of_sixteen]).tolist() == [0.75]
    # a missing answer stays in the denominator: 2 of 4, not 2 of 3
    assert modal_share([[2, 2, 3, np.nan]]).tolist() == [0.5]
    assert modal_share([[np.nan, np.nan]]).tolist() == [0.0]
    assert modal_share([[0, 0], [0, 3]]).tolist() == [1.0, 0.5]


def test_modal_share_rejects_infinity() -> None:
    with pytest.raises(ValueError, match="infinite"):
        modal_share([[np.inf, 1]])


def test_interval_squared_errors_give_the_study_penalties() -> None:
    # five-class gold (a one-point interval): adjacent 1, base to neutral 4, cross polarity 16, extremes 36
    predicted = [-3, 0, 2, 3]
    gold = [-2, -2, -2, -3]
    assert interval_squared_errors(predicted, gold, gold).tolist() == [1, 4, 16, 36]
    # polarity gold positive = [2, 3]: both positive labels are right, the rest pay to the nearer
    low, high = [2] * 5, [3] * 5
    assert interval_squared_errors([-3, -2, 0, 2, 3], low, high).tolist() == [25, 16, 4, 0, 0]


@pytest.mark.parametrize(
    ("predicted", "low", "high", "message"),
    [
        ([1, 2], [1], [1], "same non-zero length"),
        ([], [], [], "same non-zero length"),
        ([np.nan], [1], [1], "finite"),
        ([1], [3], [2], "must not exceed"),
    ],
)
def test_interval_squared_errors_reject_bad_input(
    predicted: list[float], low: list[float], high: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        interval_squared_errors(predicted, low, high)


def test_mse_accuracy_maps_mse_to_the_unit_interval() -> None:
    assert mse_accuracy([0, 0], 36) == 1.0
    assert mse_accuracy([36, 36], 36) == 0.0
    assert mse_accuracy([0, 16], 25) == pytest.approx(1 - 8 / 25)
    with pytest.raises(ValueError, match="no squared errors"):
        mse_accuracy([], 36)
    with pytest.raises(ValueError, match="positive"):
        mse_accuracy([1], 0)
    with pytest.raises(ValueError, match=r"\[0, 25\]"):
        mse_accuracy([36], 25)
