"""Mean pairwise Pearson r (Fisher z) against R's cor() and the clipping rules."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from snap_bench.stats import DEFAULT_MAX_ABS_R, UndefinedStatistic, mean_pairwise_r, mean_pairwise_r_batch

# 10 cells x 3 runs, the same Likert matrix as in test_stats_icc.py.
RUNS = [[4, 4, 5], [2, 3, 2], [5, 5, 5], [3, 3, 4], [1, 2, 1], [4, 5, 4], [2, 2, 3], [3, 4, 3], [5, 4, 5], [1, 1, 2]]

# R 4.2.2:
#
#   options(digits = 15)
#   m <- matrix(c(4,4,5, 2,3,2, 5,5,5, 3,3,4, 1,2,1, 4,5,4, 2,2,3, 3,4,3, 5,4,5, 1,1,2),
#               ncol = 3, byrow = TRUE)
#   r <- cor(m); print(r[upper.tri(r)]); print(tanh(mean(atanh(r[upper.tri(r)]))))
#   [1] 0.891645140120564 0.938314863256836 0.743683455756311
#   [1] 0.878869216695667
#
# R's upper.tri order is (1,2), (1,3), (2,3), the order of `pairs`.
R_PAIR_R = (0.891645140120564, 0.938314863256836, 0.743683455756311)
R_FISHER_MEAN = 0.878869216695667


def test_matches_r_cor_and_fisher_mean() -> None:
    result = mean_pairwise_r(RUNS)
    assert result.pairs == ((0, 1), (0, 2), (1, 2))
    assert result.pair_r == pytest.approx(R_PAIR_R, abs=1e-12)
    assert result.value == pytest.approx(R_FISHER_MEAN, abs=1e-12)
    assert result.n_rows == 10


def test_pair_r_matches_scipy_pearsonr() -> None:
    matrix = np.random.default_rng(7).normal(size=(50, 4))
    result = mean_pairwise_r(matrix)
    for (first, second), r in zip(result.pairs, result.pair_r, strict=True):
        assert r == pytest.approx(scipy_stats.pearsonr(matrix[:, first], matrix[:, second]).statistic, abs=1e-12)


def test_identical_columns_give_exactly_one() -> None:
    same = np.repeat(np.array([[1.0], [2.0], [5.0], [3.0]]), 3, axis=1)
    result = mean_pairwise_r(same)
    assert result.value == 1.0
    assert result.pair_r == (1.0, 1.0, 1.0)


def test_a_perfect_pair_is_clipped_before_arctanh() -> None:
    """r = 1 would make arctanh infinite; it is clipped to DEFAULT_MAX_ABS_R (documented)."""
    base = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 2.0, 4.0])
    other = np.array([2.0, 1.0, 3.0, 5.0, 4.0, 2.0, 5.0])
    matrix = np.column_stack([base, base, other])
    result = mean_pairwise_r(matrix)
    r_other = scipy_stats.pearsonr(base, other).statistic
    expected = np.tanh((np.arctanh(DEFAULT_MAX_ABS_R) + 2 * np.arctanh(r_other)) / 3)
    assert result.pair_r[0] == pytest.approx(1.0)
    assert result.value == pytest.approx(expected, abs=1e-12)
    looser = mean_pairwise_r(matrix, max_abs_r=0.99)
    assert looser.value == pytest.approx(np.tanh((np.arctanh(0.99) + 2 * np.arctanh(r_other)) / 3), abs=1e-12)


def test_batch_with_counts_equals_the_repeated_rows() -> None:
    counts = np.array([[1] * 10, [2, 0, 1, 1, 0, 3, 1, 0, 1, 1]])
    matrix = np.asarray(RUNS, dtype=float)
    expected = [mean_pairwise_r(np.repeat(matrix, row, axis=0)).value for row in counts]
    np.testing.assert_allclose(mean_pairwise_r_batch(RUNS, counts), expected, rtol=1e-12)


def test_a_constant_run_is_undefined_with_a_reason() -> None:
    """A model answering 5 to every cell in one run: correlations with that run are undefined."""
    matrix = np.column_stack([np.full(6, 5.0), np.arange(6.0), np.arange(6.0) % 3])
    with pytest.raises(UndefinedStatistic, match="zero variance") as caught:
        mean_pairwise_r(matrix)
    assert caught.value.reason == "zero variance in column(s) 0: every row has the same value"
    assert np.isnan(mean_pairwise_r_batch(matrix)).all()


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        ([1.0, 2.0, 3.0], "2-D"),
        ([[1.0, 2.0], [2.0, 3.0]], "at least 3 rows"),
        ([[1.0], [2.0], [3.0]], "at least 2 columns"),
        ([[1.0, 2.0], [2.0, np.nan], [3.0, 1.0]], "NaN"),
    ],
)
def test_bad_matrix_raises_value_error(matrix: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mean_pairwise_r(matrix)  # type: ignore[arg-type]


@pytest.mark.parametrize("bound", [0.0, 1.0, 1.5])
def test_bad_bound_raises_value_error(bound: float) -> None:
    with pytest.raises(ValueError, match="max_abs_r"):
        mean_pairwise_r(RUNS, max_abs_r=bound)
