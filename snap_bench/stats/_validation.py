"""Input checks shared by the statistics: shapes, finiteness, confidence levels (private)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["RELATIVE_ZERO", "FloatArray", "as_counts", "as_matrix", "check_confidence"]

FloatArray = npt.NDArray[np.float64]

#: Sums of squares below this fraction of the data's mean square are rounding noise, not variance.
#: Likert data are small integers, so a true zero comes out as ~1e-16 relative, far below this.
RELATIVE_ZERO = 1e-12


def as_matrix(
    data: npt.ArrayLike,
    *,
    name: str,
    min_rows: int,
    min_columns: int,
    allow_nan: bool = False,
) -> FloatArray:
    """Return ``data`` as a 2-D float64 array, or raise ValueError saying what is wrong with it.

    Parameters
    ----------
    data : array_like
        The matrix to check.
    name : str
        How the error messages name it, including what rows and columns mean.
    min_rows, min_columns : int
        The fewest rows and columns the statistic needs.
    allow_nan : bool
        Whether NaN (missing) is legal. Infinity never is.
    """
    try:
        matrix = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be numeric: {error}") from None
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got {matrix.ndim} dimension(s) of shape {matrix.shape}")
    rows, columns = matrix.shape
    if rows < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} rows, got {rows}")
    if columns < min_columns:
        raise ValueError(f"{name} needs at least {min_columns} columns, got {columns}")
    if np.isinf(matrix).any():
        raise ValueError(f"{name} contains infinite values")
    if not allow_nan and np.isnan(matrix).any():
        count = int(np.isnan(matrix).sum())
        raise ValueError(
            f"{name} contains {count} NaN value(s); this statistic needs complete data: "
            "drop or impute the incomplete rows explicitly and report how many"
        )
    return matrix


def check_confidence(confidence: float) -> float:
    """Return ``confidence`` as a float if it lies strictly between 0 and 1, else raise ValueError."""
    value = float(confidence)
    if not 0.0 < value < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return value


def as_counts(counts: npt.ArrayLike | None, n_rows: int, *, min_total: float) -> FloatArray:
    """Return row multiplicities as a 2-D float64 array of shape (n_sets, n_rows), or raise ValueError.

    ``None`` means every row once (one set: the data as given). Each set's counts must be finite and
    non-negative and add up to at least ``min_total``.
    """
    if counts is None:
        return np.ones((1, n_rows))
    try:
        array = np.asarray(counts, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"counts must be numeric: {error}") from None
    if array.ndim != 2 or array.shape[1] != n_rows:
        raise ValueError(
            f"counts must have shape (n_resamples, {n_rows}): one multiplicity per row of the data "
            f"for each resample; got shape {array.shape}"
        )
    if not np.isfinite(array).all() or (array < 0).any():
        raise ValueError("counts must be finite and non-negative")
    if array.shape[0] and array.sum(axis=1).min() < min_total:
        raise ValueError(f"every resample's counts must add up to at least {min_total}")
    return array
