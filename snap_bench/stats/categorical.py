"""Agreement and accuracy of categorical answers: Fleiss' kappa, modal-label share, interval MSE accuracy."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import FloatArray, as_matrix
from snap_bench.stats.errors import UndefinedStatistic

__all__ = [
    "category_counts",
    "fleiss_kappa",
    "interval_squared_errors",
    "modal_share",
    "mse_accuracy",
]


def category_counts(labels: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Count how many raters put each subject in each category.

    Parameters
    ----------
    labels : array_like, shape (n_subjects, n_raters)
        Category codes (any numbers compared exactly), complete (no NaN).

    Returns
    -------
    counts : numpy.ndarray, shape (n_subjects, n_categories)
        ``counts[i, j]`` = raters that put subject ``i`` in category ``categories[j]``.
    categories : numpy.ndarray
        The distinct codes, sorted.

    Raises
    ------
    ValueError
        Not a 2-D numeric matrix, no rows, NaN or infinity.
    """
    matrix = as_matrix(labels, name="labels (rows = subjects, columns = raters)", min_rows=1, min_columns=1)
    categories = np.unique(matrix)
    counts = (matrix[:, :, None] == categories[None, None, :]).sum(axis=1).astype(np.float64)
    return counts, categories


def fleiss_kappa(counts: npt.ArrayLike) -> float:
    r"""Fleiss' kappa: chance-corrected agreement of many raters assigning subjects to categories.

    With :math:`N` subjects, :math:`n` ratings per subject and :math:`n_{ij}` raters putting
    subject :math:`i` in category :math:`j`:

    .. math::

        P_i = \frac{\sum_j n_{ij}^2 - n}{n(n-1)}, \quad \bar P = \frac{1}{N}\sum_i P_i, \quad
        p_j = \frac{\sum_i n_{ij}}{Nn}, \quad \bar P_e = \sum_j p_j^2, \quad
        \kappa = \frac{\bar P - \bar P_e}{1 - \bar P_e}.

    The raters need not be the same people for every subject (here: the prompt variants are the
    "raters" of every input, and they are the same; the formula does not need that).

    Parameters
    ----------
    counts : array_like, shape (n_subjects, n_categories)
        Non-negative whole numbers; every row adds up to the same number of ratings ``n >= 2``.

    Returns
    -------
    float
        Kappa, at most 1; 0 is chance agreement, negative is below chance.

    Raises
    ------
    ValueError
        Not a 2-D matrix, negative or fractional counts, rows with different totals, fewer than 2
        ratings per subject.
    UndefinedStatistic
        Every rating falls in one category (:math:`\bar P_e = 1`): agreement is perfect, but kappa
        is 0/0.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological
    Bulletin, 76(5), 378-382. (Worked example: 30 patients, 6 psychiatrists, 5 diagnoses,
    kappa = 0.430.) R: ``irr::kappam.fleiss``.
    """
    matrix = as_matrix(counts, name="counts (rows = subjects, columns = categories)", min_rows=1, min_columns=1)
    if (matrix < 0).any() or not np.array_equal(matrix, np.round(matrix)):
        raise ValueError("counts must be non-negative whole numbers")
    totals = matrix.sum(axis=1)
    raters = float(totals[0])
    if not np.all(totals == raters):
        raise ValueError(
            f"every subject needs the same number of ratings; row totals range {totals.min():g}..{totals.max():g}"
        )
    if raters < 2:
        raise ValueError(f"Fleiss' kappa needs at least 2 ratings per subject, got {raters:g}")
    subjects = matrix.shape[0]
    agreement = float(((matrix**2).sum(axis=1) - raters).sum() / (subjects * raters * (raters - 1)))
    shares = matrix.sum(axis=0) / (subjects * raters)
    chance = float((shares**2).sum())
    if chance >= 1.0 - 1e-12:
        raise UndefinedStatistic("Fleiss' kappa", "every rating is in one category")
    return (agreement - chance) / (1.0 - chance)


def modal_share(labels: npt.ArrayLike) -> FloatArray:
    r"""Per subject, the share of its raters that gave the most frequent label.

    :math:`c_i = \max_j n_{ij} / n`, with :math:`n` the number of columns. A missing rating (NaN:
    an answer without a label) counts in :math:`n` but never towards a label, so it lowers the
    share instead of silently shrinking the denominator. 12 of 16 variants saying "positive" give
    0.75.

    Parameters
    ----------
    labels : array_like, shape (n_subjects, n_raters)
        Category codes, NaN for missing; at least one column.

    Returns
    -------
    numpy.ndarray, shape (n_subjects,)
        Shares in [0, 1]; 0 for a subject with no label at all.

    Raises
    ------
    ValueError
        Not a 2-D numeric matrix, no rows or columns, infinity.

    References
    ----------
    The per-input consistency of the prompt-perturbation robustness study (max over labels of the
    share of the 16 variants predicting it).
    """
    matrix = as_matrix(
        labels, name="labels (rows = subjects, columns = raters)", min_rows=1, min_columns=1, allow_nan=True
    )
    shares = np.zeros(matrix.shape[0])
    for row_index, row in enumerate(matrix):
        present = row[~np.isnan(row)]
        if present.size:
            _, counts = np.unique(present, return_counts=True)
            shares[row_index] = counts.max() / matrix.shape[1]
    return shares


def interval_squared_errors(predicted: npt.ArrayLike, gold_low: npt.ArrayLike, gold_high: npt.ArrayLike) -> FloatArray:
    r"""Squared distance of each prediction to its gold interval :math:`[l_i, h_i]`.

    :math:`e_i = (\max(l_i - y_i, 0, y_i - h_i))^2`. A single gold value is the interval
    :math:`[g, g]`, giving the ordinary squared error; a gold *polarity* is the interval of its
    labels (positive = [+2, +3] on the polarity-weighted encoding), so any label of the right
    polarity costs nothing and the nearest one sets the cost of the others.

    Parameters
    ----------
    predicted, gold_low, gold_high : array_like, shape (n,)
        Finite numbers, ``gold_low <= gold_high``, at least one.

    Returns
    -------
    numpy.ndarray, shape (n,)

    Raises
    ------
    ValueError
        Different lengths, empty input, non-finite values, or ``gold_low > gold_high``.
    """
    arrays = [np.asarray(values, dtype=np.float64).reshape(-1) for values in (predicted, gold_low, gold_high)]
    y, low, high = arrays
    if not y.size or len({a.size for a in arrays}) != 1:
        raise ValueError(f"predicted and gold need the same non-zero length, got {[a.size for a in arrays]}")
    if not all(np.isfinite(a).all() for a in arrays):
        raise ValueError("predicted and gold must be finite (leave unscored answers out, and count them)")
    if (low > high).any():
        raise ValueError("gold_low must not exceed gold_high")
    distance = np.maximum(np.maximum(low - y, 0.0), y - high)
    result: FloatArray = distance**2
    return result


def mse_accuracy(squared_errors: npt.ArrayLike, max_error: float) -> float:
    r"""The study's MSE-based custom accuracy, mapped to [0, 1]: :math:`1 - \mathrm{MSE} / e_{max}`.

    On the polarity-weighted encoding (-3, -2, 0, +2, +3) the penalties are 1 for an intensity
    mistake, 4 for neutral against a polar label, 16 (25) for the wrong polarity and 36 for one
    extreme against the other; ``max_error`` is the largest penalty the gold allows (36 for five
    classes, 25 for a gold polarity), so 1 is perfect and 0 is always the worst answer.

    Parameters
    ----------
    squared_errors : array_like, shape (n,)
        From :func:`interval_squared_errors`; at least one, each in [0, max_error].
    max_error : float
        Positive.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Empty input, a non-positive ``max_error``, or an error outside [0, max_error].

    References
    ----------
    The custom accuracy of the prompt-perturbation robustness study (``mean_squared_error`` of the
    encodings; the map to [0, 1] is ours, so that it can enter the 0.7 / 0.3 weighted index).
    """
    errors = np.asarray(squared_errors, dtype=np.float64).reshape(-1)
    if not errors.size:
        raise ValueError("no squared errors: at least one scored answer is needed")
    if not max_error > 0:
        raise ValueError(f"max_error must be positive, got {max_error!r}")
    if not np.isfinite(errors).all() or (errors < 0).any() or (errors > max_error).any():
        raise ValueError(f"squared errors must lie in [0, {max_error:g}]")
    return float(1.0 - errors.mean() / max_error)
