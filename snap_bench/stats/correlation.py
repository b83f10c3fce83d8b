"""Mean pairwise Pearson correlation between occasions (runs or paraphrases), averaged via Fisher z."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import RELATIVE_ZERO, FloatArray, as_counts, as_matrix
from snap_bench.stats.errors import UndefinedStatistic

__all__ = ["DEFAULT_MAX_ABS_R", "PairwiseCorrelation", "mean_pairwise_r", "mean_pairwise_r_batch"]

#: Correlations are clipped to +-this before arctanh, which bounds a perfect pair's z at ~4.95.
DEFAULT_MAX_ABS_R = 0.9999

_NAME = "mean pairwise Pearson r"
_MATRIX = "matrix (rows = cells, columns = occasions)"


@dataclass(frozen=True, slots=True)
class PairwiseCorrelation:
    r"""The Fisher-z mean of the Pearson correlations between every pair of columns.

    Attributes
    ----------
    value : float
        :math:`\tanh` of the mean of :math:`\operatorname{arctanh}(r)` over the pairs.
    pair_r : tuple of float
        Each pair's Pearson r, unclipped, in the order of ``pairs``.
    pairs : tuple of (int, int)
        The column indices ``(i, j)``, ``i < j``, of each pair.
    n_rows : int
        Number of rows (cells) each correlation is computed over.
    """

    value: float
    pair_r: tuple[float, ...]
    pairs: tuple[tuple[int, int], ...]
    n_rows: int


def _check_bound(max_abs_r: float) -> float:
    bound = float(max_abs_r)
    if not 0.0 < bound < 1.0:
        raise ValueError(f"max_abs_r must lie strictly between 0 and 1, got {max_abs_r!r}")
    return bound


def _pair_correlations(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """Pearson r of every column pair i < j, one row per set of ``counts``; NaN for a constant column.

    Row ``i`` of ``matrix`` enters set ``b`` ``counts[b, i]`` times, so a batch of bootstrap
    resamples costs one matrix product of ``counts`` with per-row cross products.
    """
    k = matrix.shape[1]
    # Centring on the full-data column means keeps "sum of products minus product of sums" accurate.
    centred = matrix - np.mean(matrix, axis=0)
    rows, columns = np.triu_indices(k)
    sums = counts @ np.column_stack([centred, centred[:, rows] * centred[:, columns]])
    n = np.sum(counts, axis=1)
    column_sums = sums[:, :k]
    cross = np.empty((counts.shape[0], k, k))
    cross[:, rows, columns] = sums[:, k:] - column_sums[:, rows] * column_sums[:, columns] / n[:, None]
    cross[:, columns, rows] = cross[:, rows, columns]
    sums_of_squares = np.diagonal(cross, axis1=1, axis2=2)
    tolerance = RELATIVE_ZERO * n[:, None] * np.mean(np.square(matrix), axis=0)
    constant = sums_of_squares <= tolerance
    first, second = np.triu_indices(k, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = cross[:, first, second] / np.sqrt(sums_of_squares[:, first] * sums_of_squares[:, second])
    r = np.where(constant[:, first] | constant[:, second], np.nan, r)
    # |r| can exceed 1 by rounding when two columns are proportional.
    clipped: FloatArray = np.clip(r, -1.0, 1.0)
    return clipped


def _fisher_mean(r: FloatArray, bound: float) -> FloatArray:
    z = np.arctanh(np.clip(r, -bound, bound))
    mean = np.tanh(np.mean(z, axis=-1))
    # A mean of the clipped values can leave the range of the unclipped ones (e.g. every r = 1
    # would give 0.9999); the Fisher mean lies between the smallest and largest r, so put it back.
    result: FloatArray = np.clip(mean, np.min(r, axis=-1), np.max(r, axis=-1))
    return result


def mean_pairwise_r_batch(
    matrix: npt.ArrayLike, counts: npt.ArrayLike | None = None, *, max_abs_r: float = DEFAULT_MAX_ABS_R
) -> FloatArray:
    """Fisher-z mean pairwise r of many row-resamples of one matrix at once (for :func:`bootstrap_ci`).

    Parameters
    ----------
    matrix : array_like, shape (n_rows, n_columns)
        Complete data, as in :func:`mean_pairwise_r`.
    counts : array_like, shape (n_sets, n_rows), optional
        Row multiplicities: in set ``b`` row ``i`` is counted ``counts[b, i]`` times (a bootstrap
        resample is a row of counts adding up to ``n_rows``). Default: each row once.
    max_abs_r : float
        As in :func:`mean_pairwise_r`.

    Returns
    -------
    numpy.ndarray, shape (n_sets,)
        The mean r of each set, NaN where a column has zero variance (where :func:`mean_pairwise_r`
        raises :class:`UndefinedStatistic`).

    Raises
    ------
    ValueError
        Bad matrix, counts or ``max_abs_r``, as in :func:`mean_pairwise_r`.
    """
    bound = _check_bound(max_abs_r)
    checked = as_matrix(matrix, name=_MATRIX, min_rows=3, min_columns=2)
    weights = as_counts(counts, checked.shape[0], min_total=3)
    return _fisher_mean(_pair_correlations(checked, weights), bound)


def mean_pairwise_r(matrix: npt.ArrayLike, *, max_abs_r: float = DEFAULT_MAX_ABS_R) -> PairwiseCorrelation:
    r"""Mean Pearson correlation between every pair of columns, averaged through Fisher's z.

    Test-retest r is this with columns = runs; inter-paraphrase r with columns = paraphrases; the
    rows are the cells (conditions) the occasions are compared over.

    Parameters
    ----------
    matrix : array_like, shape (n_rows, n_columns)
        Complete data, at least 3 rows (a correlation of two points is +-1 by construction) and
        2 columns.
    max_abs_r : float
        Each r is clipped to :math:`[-\text{max\_abs\_r}, \text{max\_abs\_r}]` before
        :math:`\operatorname{arctanh}`, which is infinite at :math:`\pm 1`. The default 0.9999 caps a
        perfect pair's z at about 4.95, so one perfect pair still pulls the mean strongly towards 1
        (e.g. r = 1, 0.5, 0.5 gives 0.965): report ``pair_r`` next to the mean.

    Returns
    -------
    PairwiseCorrelation

    Raises
    ------
    ValueError
        Not a 2-D numeric matrix, too few rows or columns, NaN or infinity, a bad ``max_abs_r``.
    UndefinedStatistic
        A column has zero variance (e.g. a run in which the model gave every cell the same answer):
        its correlations, and so their mean, are undefined.

    Notes
    -----
    .. math::

        \bar r = \tanh\Big(\frac{1}{P} \sum_{i<j} \operatorname{arctanh}
            \big(\operatorname{clip}(r_{ij})\big)\Big), \qquad P = \binom{k}{2}

    The result is finally clipped into :math:`[\min r_{ij}, \max r_{ij}]`, where a Fisher mean of
    unclipped values always lies, so that identical columns give exactly 1.

    References
    ----------
    Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation deduced from a
    small sample. *Metron*, 1, 3-32.
    Silver, N. C., & Dunlap, W. P. (1987). Averaging correlation coefficients: Should Fisher's z
    transformation be used? *Journal of Applied Psychology*, 72(1), 146-148.
    """
    bound = _check_bound(max_abs_r)
    checked = as_matrix(matrix, name=_MATRIX, min_rows=3, min_columns=2)
    r = _pair_correlations(checked, np.ones((1, checked.shape[0])))[0]
    pairs = tuple(combinations(range(checked.shape[1]), 2))
    if np.isnan(r).any():
        constant = [str(column) for column in range(checked.shape[1]) if np.ptp(checked[:, column]) == 0]
        where = f"column(s) {', '.join(constant)}" if constant else "a column"
        raise UndefinedStatistic(_NAME, f"zero variance in {where}: every row has the same value")
    return PairwiseCorrelation(
        value=float(_fisher_mean(r, bound)),
        pair_r=tuple(float(value) for value in r),
        pairs=pairs,
        n_rows=checked.shape[0],
    )
