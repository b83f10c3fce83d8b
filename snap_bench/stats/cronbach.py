"""Cronbach's alpha (internal consistency of a scale) and its Feldt (1965) confidence interval."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

from snap_bench.stats._validation import RELATIVE_ZERO, FloatArray, as_counts, as_matrix, check_confidence
from snap_bench.stats.errors import UndefinedStatistic

__all__ = ["cronbach_alpha", "cronbach_alpha_batch", "cronbach_alpha_ci"]

_NAME = "Cronbach's alpha"
_SCORES = "scores (rows = respondents, columns = items)"


def cronbach_alpha_batch(scores: npt.ArrayLike, counts: npt.ArrayLike | None = None) -> FloatArray:
    """Cronbach's alpha of many row-resamples of one score matrix at once (for :func:`bootstrap_ci`).

    Parameters
    ----------
    scores : array_like, shape (n_respondents, n_items)
        Complete scores, as in :func:`cronbach_alpha`.
    counts : array_like, shape (n_sets, n_respondents), optional
        Row multiplicities: in set ``b`` respondent ``i`` is counted ``counts[b, i]`` times (a
        bootstrap resample is a row of counts adding up to ``n_respondents``). Default: each once.

    Returns
    -------
    numpy.ndarray, shape (n_sets,)
        Alpha of each set, NaN where the total score has zero variance (where
        :func:`cronbach_alpha` raises :class:`UndefinedStatistic`).

    Raises
    ------
    ValueError
        Bad scores or counts, as in :func:`cronbach_alpha`.
    """
    matrix = as_matrix(scores, name=_SCORES, min_rows=2, min_columns=2)
    weights = as_counts(counts, matrix.shape[0], min_total=2)
    k = matrix.shape[1]
    # Centring on the full-data item means keeps "sum of squares minus squared sum" accurate.
    centred = matrix - np.mean(matrix, axis=0)
    totals = np.sum(centred, axis=1)
    sums = weights @ np.column_stack([centred, np.square(centred), totals, np.square(totals)])
    n = np.sum(weights, axis=1)
    item_sums, item_squares = sums[:, :k], sums[:, k : 2 * k]
    # Sums of squared deviations; the common factor 1 / (n - 1) of the variances cancels in the ratio.
    item_variance_sum = np.sum(item_squares - np.square(item_sums) / n[:, None], axis=1)
    total_variance = sums[:, 2 * k + 1] - np.square(sums[:, 2 * k]) / n
    tolerance = RELATIVE_ZERO * k * n * float(np.mean(np.square(matrix)))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = k / (k - 1) * (1.0 - item_variance_sum / total_variance)
    result: FloatArray = np.where(total_variance <= tolerance, np.nan, alpha)
    return result


def cronbach_alpha(scores: npt.ArrayLike) -> float:
    r"""Cronbach's alpha: internal consistency of a set of items meant to measure one construct.

    Parameters
    ----------
    scores : array_like, shape (n_respondents, n_items)
        Rows are respondents (for snap-bench: the conditions a model answered under), columns are
        the items of one scale, already reverse-keyed where needed. Complete data only.

    Returns
    -------
    float
        Alpha; not clipped, so it can be negative when items correlate negatively.

    Raises
    ------
    ValueError
        Not a 2-D numeric matrix, fewer than 2 respondents or 2 items, NaN or infinity.
    UndefinedStatistic
        The total score has zero variance (``reason`` "zero variance of the total score"), e.g. a
        model that gives the same answer to every item under every condition.

    Notes
    -----
    .. math:: \alpha = \frac{k}{k-1}\left(1 - \frac{\sum_{i=1}^{k} s^2_i}{s^2_X}\right)

    with :math:`k` items, item variances :math:`s^2_i` and the variance :math:`s^2_X` of the total
    score :math:`X = \sum_i x_i`; the same value as ``psych::alpha``'s ``raw_alpha``.

    References
    ----------
    Cronbach, L. J. (1951). Coefficient alpha and the internal structure of tests.
    *Psychometrika*, 16(3), 297-334.
    """
    alpha = float(cronbach_alpha_batch(scores)[0])
    if np.isnan(alpha):
        raise UndefinedStatistic(_NAME, "zero variance of the total score")
    return alpha


def cronbach_alpha_ci(scores: npt.ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    r"""Feldt (1965) F-based confidence interval for Cronbach's alpha, as ``psych::alpha`` reports it.

    Parameters
    ----------
    scores : array_like, shape (n_respondents, n_items)
        As in :func:`cronbach_alpha`.
    confidence : float
        Level of the two-sided interval.

    Returns
    -------
    (float, float)
        The lower and upper bound.

    Raises
    ------
    ValueError, UndefinedStatistic
        As :func:`cronbach_alpha`.

    Notes
    -----
    :math:`(1 - \alpha)/(1 - \hat\alpha)` follows an F distribution with :math:`n-1` and
    :math:`(n-1)(k-1)` degrees of freedom, so with :math:`\gamma = 1 - \text{confidence}`

    .. math::

        \text{low} = 1 - (1 - \hat\alpha)\, F_{1-\gamma/2}(n-1, (n-1)(k-1)), \qquad
        \text{high} = 1 - (1 - \hat\alpha)\, F_{\gamma/2}(n-1, (n-1)(k-1))

    which is ``psych::alpha.ci`` (the "Feldt" row of ``psych::alpha``'s confidence boundaries).
    It assumes the items are essentially tau-equivalent with normal errors.

    References
    ----------
    Feldt, L. S. (1965). The approximate sampling distribution of Kuder-Richardson reliability
    coefficient twenty. *Psychometrika*, 30(3), 357-370.
    Feldt, L. S., Woodruff, D. J., & Salih, F. A. (1987). Statistical inference for coefficient
    alpha. *Applied Psychological Measurement*, 11(1), 93-103.
    """
    level = check_confidence(confidence)
    matrix = as_matrix(scores, name=_SCORES, min_rows=2, min_columns=2)
    alpha = cronbach_alpha(matrix)
    n, k = matrix.shape
    df1, df2 = n - 1, (n - 1) * (k - 1)
    tail = (1.0 - level) / 2.0
    low = 1.0 - (1.0 - alpha) * float(scipy_stats.f.ppf(1.0 - tail, df1, df2))
    high = 1.0 - (1.0 - alpha) * float(scipy_stats.f.ppf(tail, df1, df2))
    return low, high
