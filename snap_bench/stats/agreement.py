"""Share of cells on which every occasion gave the same answer (TARa@N)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import FloatArray, as_counts, as_matrix

__all__ = ["all_runs_agree_share", "all_runs_agree_share_batch"]

_MATRIX = "matrix (rows = cells, columns = runs)"


def all_runs_agree_share_batch(matrix: npt.ArrayLike, counts: npt.ArrayLike | None = None) -> FloatArray:
    """:func:`all_runs_agree_share` of many row-resamples of one matrix at once (for the bootstrap).

    Parameters
    ----------
    matrix : array_like, shape (n_rows, n_columns)
        Complete data, as in :func:`all_runs_agree_share`.
    counts : array_like, shape (n_sets, n_rows), optional
        Row multiplicities: in set ``b`` row ``i`` is counted ``counts[b, i]`` times (a bootstrap
        resample is a row of counts adding up to ``n_rows``). Default: each row once.

    Returns
    -------
    numpy.ndarray, shape (n_sets,)
        The share for each set.

    Raises
    ------
    ValueError
        Bad matrix or counts, as in :func:`all_runs_agree_share`.
    """
    checked = as_matrix(matrix, name=_MATRIX, min_rows=1, min_columns=2)
    weights = as_counts(counts, checked.shape[0], min_total=1)
    agree = np.all(checked == checked[:, :1], axis=1).astype(np.float64)
    result: FloatArray = (weights @ agree) / np.sum(weights, axis=1)
    return result


def all_runs_agree_share(matrix: npt.ArrayLike) -> float:
    r"""Share of rows in which every column holds the same value: TARa@N, N = number of columns.

    "Total agreement rate" of a cell over its N runs (Atil et al. 2024): 1.0 means every cell got
    the same answer in all N runs. Values are compared exactly, so pass parsed scores or label codes,
    not floats that went through arithmetic.

    Parameters
    ----------
    matrix : array_like, shape (n_rows, n_columns)
        Rows are cells, columns are runs. Complete data, at least 1 row and 2 columns.

    Returns
    -------
    float
        :math:`\frac{1}{n}\sum_{i=1}^{n} [x_{i1} = x_{i2} = \dots = x_{iN}]`, in [0, 1].

    Raises
    ------
    ValueError
        Not a 2-D numeric matrix, no rows, fewer than 2 columns, NaN or infinity.

    References
    ----------
    Atil, B., Chittams, A., Fu, L., Ture, F., Xu, L., & Baldwin, B. (2024). LLM stability: A
    detailed analysis with some surprises. arXiv:2408.04667 (TARa@N: total agreement rate of the
    parsed answers over N runs).
    """
    return float(all_runs_agree_share_batch(matrix)[0])
