"""Coefficient of variation of each cell across its occasions (runs), and its summary."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import RELATIVE_ZERO, FloatArray, as_counts, as_matrix
from snap_bench.stats.errors import UndefinedStatistic

__all__ = ["CoefficientOfVariation", "coefficient_of_variation", "coefficient_of_variation_batch"]

_NAME = "coefficient of variation"
_MATRIX = "matrix (rows = cells, columns = occasions)"


@dataclass(frozen=True, slots=True)
class CoefficientOfVariation:
    """Per-row coefficients of variation (percent) and their summary.

    Attributes
    ----------
    per_row : tuple of float
        CV of each row in percent; NaN for a row whose mean is 0 while its SD is not (undefined).
    mean, max : float
        Mean and maximum of the defined per-row CVs.
    n_undefined : int
        Rows left out of ``mean`` and ``max`` because their CV is undefined.
    """

    per_row: tuple[float, ...]
    mean: float
    max: float
    n_undefined: int


def _per_row(matrix: FloatArray) -> FloatArray:
    """CV in percent of each row; NaN where the row's mean is 0 and its SD is not."""
    mean = np.mean(matrix, axis=1)
    sd = np.std(matrix, axis=1, ddof=1)
    # Relative 1e-6 on a standard deviation is RELATIVE_ZERO on a variance.
    tolerance = np.sqrt(RELATIVE_ZERO) * np.sqrt(np.mean(np.square(matrix), axis=1))
    sd = np.where(sd <= tolerance, 0.0, sd)
    zero_mean = np.abs(mean) <= tolerance
    with np.errstate(divide="ignore", invalid="ignore"):
        cv = 100.0 * sd / np.abs(mean)
    result: FloatArray = np.where(zero_mean, np.where(sd == 0, 0.0, np.nan), cv)
    return result


def coefficient_of_variation_batch(matrix: npt.ArrayLike, counts: npt.ArrayLike | None = None) -> FloatArray:
    """Mean per-row CV of many row-resamples of one matrix at once (for :func:`bootstrap_ci`).

    Parameters
    ----------
    matrix : array_like, shape (n_rows, n_columns)
        Complete data, as in :func:`coefficient_of_variation`.
    counts : array_like, shape (n_sets, n_rows), optional
        Row multiplicities: in set ``b`` row ``i`` is counted ``counts[b, i]`` times (a bootstrap
        resample is a row of counts adding up to ``n_rows``). Default: each row once.

    Returns
    -------
    numpy.ndarray, shape (n_sets,)
        The ``mean`` of :func:`coefficient_of_variation` for each set (over its rows with a defined
        CV); NaN where the set has no such row.

    Raises
    ------
    ValueError
        Bad matrix or counts, as in :func:`coefficient_of_variation`.
    """
    checked = as_matrix(matrix, name=_MATRIX, min_rows=1, min_columns=2)
    weights = as_counts(counts, checked.shape[0], min_total=1)
    per_row = _per_row(checked)
    defined = ~np.isnan(per_row)
    total = weights @ np.where(defined, per_row, 0.0)
    count = weights @ defined.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        result: FloatArray = np.where(count > 0, total / count, np.nan)
    return result


def coefficient_of_variation(matrix: npt.ArrayLike) -> CoefficientOfVariation:
    r"""Coefficient of variation of every row across its columns, in percent.

    Parameters
    ----------
    matrix : array_like, shape (n_rows, n_columns)
        Rows are cells, columns are occasions (for snap-bench: the runs of one condition).
        Complete data, at least 2 columns. Scores should be on a ratio-like scale with positive
        values (Likert 1..5 coded from 1); on a scale centred on 0 the CV is not meaningful.

    Returns
    -------
    CoefficientOfVariation

    Raises
    ------
    ValueError
        Not a 2-D numeric matrix, fewer than 2 columns, NaN or infinity.
    UndefinedStatistic
        Every row has mean 0 and a non-zero SD, so no CV is defined.

    Notes
    -----
    .. math:: CV_i = 100 \cdot \frac{s_i}{|\bar x_i|}

    with :math:`s_i` the sample standard deviation (``ddof=1``, divisor :math:`k-1`) of row
    :math:`i` over its :math:`k` columns. A row whose mean is 0 is handled on purpose: if its SD is
    also 0 (all values 0) the row did not vary and its CV is 0; otherwise the CV is undefined, the
    row's entry is NaN, it is left out of ``mean`` and ``max``, and it is counted in
    ``n_undefined`` for the caller to report. :math:`|\bar x_i|` keeps the CV non-negative for a
    negative mean. Values within ``1e-6`` of the row's root mean square of 0 count as 0.

    References
    ----------
    Everitt, B. S., & Skrondal, A. (2010). *The Cambridge Dictionary of Statistics* (4th ed.),
    "coefficient of variation". Cambridge University Press.
    """
    checked = as_matrix(matrix, name=_MATRIX, min_rows=1, min_columns=2)
    per_row = _per_row(checked)
    defined = per_row[~np.isnan(per_row)]
    if defined.size == 0:
        raise UndefinedStatistic(_NAME, "every row has mean 0 and a non-zero standard deviation")
    return CoefficientOfVariation(
        per_row=tuple(float(value) for value in per_row),
        mean=float(np.mean(defined)),
        max=float(np.max(defined)),
        n_undefined=int(per_row.size - defined.size),
    )
