"""TARa@N: share of cells on which every run gave the same answer (Atil et al. 2024)."""

from __future__ import annotations

import numpy as np
import pytest

from snap_bench.stats import all_runs_agree_share, all_runs_agree_share_batch


def test_share_of_rows_where_all_columns_agree() -> None:
    """Counted by hand: rows 0, 2 and 4 agree in all three runs -> 3 / 5."""
    runs = [[3, 3, 3], [3, 4, 3], [5, 5, 5], [1, 1, 2], [2, 2, 2]]
    assert all_runs_agree_share(runs) == pytest.approx(3 / 5)


def test_extremes() -> None:
    assert all_runs_agree_share([[1, 1], [2, 2]]) == 1.0
    assert all_runs_agree_share([[1, 2], [2, 1]]) == 0.0


def test_batch_with_counts() -> None:
    runs = [[3, 3, 3], [3, 4, 3], [5, 5, 5]]
    batch = all_runs_agree_share_batch(runs, np.array([[1, 1, 1], [0, 3, 0], [2, 0, 1]]))
    np.testing.assert_allclose(batch, [2 / 3, 0.0, 1.0])


@pytest.mark.parametrize(
    ("matrix", "message"),
    [([1.0, 2.0], "2-D"), ([[1.0], [2.0]], "at least 2 columns"), ([[1.0, np.nan]], "NaN")],
)
def test_bad_matrix_raises_value_error(matrix: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        all_runs_agree_share(matrix)  # type: ignore[arg-type]
