"""Intraclass correlation coefficients (Shrout & Fleiss 1979) with psych::ICC's F tests and intervals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

from snap_bench.stats._validation import RELATIVE_ZERO, FloatArray, as_counts, as_matrix, check_confidence
from snap_bench.stats.errors import UndefinedStatistic

__all__ = ["ICC_FORMS", "ICCForm", "ICCResult", "icc", "icc_batch"]

ICCForm = Literal["1,1", "2,1", "3,1", "1,k", "2,k", "3,k"]

#: The legal ``form`` values: Shrout & Fleiss's ICC(model, 1) and ICC(model, k).
ICC_FORMS: Final[tuple[ICCForm, ...]] = ("1,1", "2,1", "3,1", "1,k", "2,k", "3,k")

_RATINGS = "ratings (rows = targets, columns = raters)"


@dataclass(frozen=True, slots=True)
class ICCResult:
    """One intraclass correlation with its F test and confidence interval, as ``psych::ICC`` reports it.

    Attributes
    ----------
    form : str
        ``"1,1"``, ``"2,1"``, ``"3,1"``, ``"1,k"``, ``"2,k"`` or ``"3,k"``.
    value : float
        The ICC.
    F : float
        F statistic of the test that the ICC is zero: ``MSR / MSW`` for model 1, ``MSR / MSE`` for
        models 2 and 3. ``inf`` when the ratings have no residual variance.
    df1, df2 : int
        Its degrees of freedom.
    p : float
        Upper-tail p value of ``F``.
    ci_low, ci_high : float
        The F-based confidence interval at ``confidence``.
    confidence : float
        Confidence level of the interval, e.g. 0.95.
    n_targets, n_raters : int
        Rows and columns of the ratings.
    """

    form: str
    value: float
    F: float
    df1: int
    df2: int
    p: float
    ci_low: float
    ci_high: float
    confidence: float
    n_targets: int
    n_raters: int


def _check_form(form: str) -> ICCForm:
    for legal in ICC_FORMS:
        if form == legal:
            return legal
    raise ValueError(f"unknown ICC form {form!r}; use one of {', '.join(ICC_FORMS)}")


def _mean_squares(ratings: FloatArray, counts: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Two-way ANOVA mean squares (MSR, MSC, MSW, MSE), one per row of ``counts``.

    Row ``i`` of ``ratings`` enters set ``b`` ``counts[b, i]`` times, so a whole batch of bootstrap
    resamples costs one matrix product of ``counts`` with per-row sums instead of copying every
    resampled matrix. The ratings are centred on their grand mean first, which keeps the
    "sum of squares minus squared sum" forms accurate. Mean squares below ``RELATIVE_ZERO`` times
    the mean squared rating are set to exactly 0: constant data give zeros, not rounding noise.
    """
    k = ratings.shape[1]
    offset = float(np.mean(ratings))
    centred = ratings - offset
    row_sums = np.sum(centred, axis=1)
    per_row = np.column_stack([row_sums, np.square(row_sums), np.sum(np.square(centred), axis=1), centred])
    sums = counts @ per_row
    n = np.sum(counts, axis=1)
    total, row_sum_squares, squares, column_sums = sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3:]
    correction = np.square(total) / (n * k)
    ss_total = squares - correction
    ss_rows = row_sum_squares / k - correction
    ss_columns = np.sum(np.square(column_sums), axis=1) / n - correction
    ss_error = ss_total - ss_rows - ss_columns
    mean = offset + total / (n * k)
    tolerance = RELATIVE_ZERO * (ss_total / (n * k) + np.square(mean))

    def clean(mean_square: FloatArray) -> FloatArray:
        return np.where(mean_square <= tolerance, 0.0, mean_square)

    ms_rows = clean(ss_rows / (n - 1))
    ms_columns = clean(ss_columns / (k - 1))
    ms_within = clean((ss_columns + ss_error) / (n * (k - 1)))
    ms_error = clean(ss_error / ((n - 1) * (k - 1)))
    return ms_rows, ms_columns, ms_within, ms_error


def _values(
    form: ICCForm,
    n: FloatArray,
    k: int,
    ms_rows: FloatArray,
    ms_columns: FloatArray,
    ms_within: FloatArray,
    ms_error: FloatArray,
) -> FloatArray:
    """ICC values from mean squares; NaN where the ICC is undefined (see :func:`icc`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if form == "1,1":
            value = (ms_rows - ms_within) / (ms_rows + (k - 1) * ms_within)
        elif form == "2,1":
            value = (ms_rows - ms_error) / (ms_rows + (k - 1) * ms_error + k * (ms_columns - ms_error) / n)
        elif form == "3,1":
            value = (ms_rows - ms_error) / (ms_rows + (k - 1) * ms_error)
        elif form == "1,k":
            value = (ms_rows - ms_within) / ms_rows
        elif form == "2,k":
            value = (ms_rows - ms_error) / (ms_rows + (ms_columns - ms_error) / n)
        else:
            value = (ms_rows - ms_error) / ms_rows
    residual = ms_within if form in ("1,1", "1,k") else ms_error
    undefined = ((ms_rows == 0) & (residual == 0)) | ~np.isfinite(value)
    result: FloatArray = np.where(undefined, np.nan, value)
    return result


def icc_batch(ratings: npt.ArrayLike, counts: npt.ArrayLike | None = None, form: ICCForm = "2,1") -> FloatArray:
    """ICC of many row-resamples of one ratings matrix at once (for :func:`bootstrap_ci`).

    Parameters
    ----------
    ratings : array_like, shape (n_targets, n_raters)
        Complete ratings, as in :func:`icc`.
    counts : array_like, shape (n_sets, n_targets), optional
        Row multiplicities: in set ``b`` target ``i`` is counted ``counts[b, i]`` times (a bootstrap
        resample is a row of counts adding up to ``n_targets``). Default: each target once.
    form : str
        As in :func:`icc`.

    Returns
    -------
    numpy.ndarray, shape (n_sets,)
        The ICC of each set, NaN where it is undefined (where :func:`icc` raises
        :class:`UndefinedStatistic`).

    Raises
    ------
    ValueError
        Bad ratings, counts or form, as in :func:`icc`.
    """
    checked = _check_form(form)
    matrix = as_matrix(ratings, name=_RATINGS, min_rows=2, min_columns=2)
    weights = as_counts(counts, matrix.shape[0], min_total=2)
    n = np.sum(weights, axis=1)
    return _values(checked, n, matrix.shape[1], *_mean_squares(matrix, weights))


def _undefined_reason(form: ICCForm, ms_rows: float, ms_columns: float, residual: float) -> str:
    if ms_rows == 0 and ms_columns == 0 and residual == 0:
        return "zero variance: every rating is identical"
    if ms_rows == 0 and residual == 0:
        return "zero variance within raters: each rater gives every target the same rating"
    if ms_rows == 0:
        return "zero variance between targets: every target has the same mean rating"
    return f"the ICC({form}) formula divides by zero on these mean squares"


def icc(ratings: npt.ArrayLike, form: ICCForm = "2,1", *, confidence: float = 0.95) -> ICCResult:
    r"""Intraclass correlation coefficient with its F test and F-based confidence interval.

    Parameters
    ----------
    ratings : array_like, shape (n_targets, n_raters)
        Rows are targets (for snap-bench: cells), columns are raters (runs). Complete data only:
        NaN raises ValueError, so missing answers must be dropped, and counted, by the caller.
    form : {"1,1", "2,1", "3,1", "1,k", "2,k", "3,k"}
        Shrout & Fleiss (1979) ICC(model, 1 or k). ``"2,1"`` is McGraw & Wong's (1996) ICC(A,1), the
        two-way random-effects absolute-agreement single-rater ICC; ``"3,1"`` is ICC(C,1).
    confidence : float
        Level of the two-sided confidence interval.

    Returns
    -------
    ICCResult

    Raises
    ------
    ValueError
        Not a 2-D numeric matrix, fewer than 2 targets or 2 raters, NaN or infinity, unknown form.
    UndefinedStatistic
        The ICC is 0/0: no variance between targets and no residual variance (e.g. every rating
        identical, ``reason`` "zero variance"), or, for the average-rater forms, no variance between
        targets at all.

    Notes
    -----
    With :math:`n` targets, :math:`k` raters and the two-way ANOVA mean squares for rows
    :math:`MSR`, columns :math:`MSC`, residual :math:`MSE` and within rows
    :math:`MSW = (SS_C + SS_E) / (n (k - 1))`:

    .. math::

        ICC(1,1) &= \frac{MSR - MSW}{MSR + (k-1) MSW}, \qquad
        ICC(1,k) = \frac{MSR - MSW}{MSR} \\
        ICC(2,1) &= \frac{MSR - MSE}{MSR + (k-1) MSE + k (MSC - MSE) / n}, \qquad
        ICC(2,k) = \frac{MSR - MSE}{MSR + (MSC - MSE) / n} \\
        ICC(3,1) &= \frac{MSR - MSE}{MSR + (k-1) MSE}, \qquad
        ICC(3,k) = \frac{MSR - MSE}{MSR}

    The F test is :math:`F = MSR/MSW` on :math:`(n-1, n(k-1))` df for model 1 and
    :math:`F = MSR/MSE` on :math:`(n-1, (n-1)(k-1))` df for models 2 and 3. The confidence intervals
    are those of Shrout & Fleiss (1979) and McGraw & Wong (1996) exactly as ``psych::ICC``
    (Revelle, psych 2.2.9) computes them, including the Satterthwaite degrees of freedom for model 2;
    they are written in terms of mean squares instead of F ratios so that perfectly consistent raters
    (:math:`MSE = 0`, :math:`F = \infty`, common for a model at temperature 0) give the limit
    ``(1.0, 1.0)`` rather than NaN. Mean squares below ``1e-12`` times the mean squared rating are
    treated as exactly zero.

    References
    ----------
    Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: Uses in assessing rater
    reliability. *Psychological Bulletin*, 86(2), 420-428.
    McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass correlation
    coefficients. *Psychological Methods*, 1(1), 30-46.

    Examples
    --------
    >>> shrout_fleiss = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
    >>> round(icc(shrout_fleiss, "2,1").value, 2)
    0.29
    """
    checked = _check_form(form)
    level = check_confidence(confidence)
    matrix = as_matrix(ratings, name=_RATINGS, min_rows=2, min_columns=2)
    n, k = matrix.shape
    mean_squares = _mean_squares(matrix, np.ones((1, n)))
    value = float(_values(checked, np.array([float(n)]), k, *mean_squares)[0])
    ms_rows, ms_columns, ms_within, ms_error = (float(mean_square[0]) for mean_square in mean_squares)
    one_way = checked in ("1,1", "1,k")
    residual = ms_within if one_way else ms_error
    if np.isnan(value):
        raise UndefinedStatistic(f"ICC({checked})", _undefined_reason(checked, ms_rows, ms_columns, residual))

    df1 = n - 1
    df2 = n * (k - 1) if one_way else (n - 1) * (k - 1)
    f_ratio = ms_rows / residual if residual > 0 else float("inf")
    p = float(scipy_stats.f.sf(f_ratio, df1, df2))
    upper_tail = 1.0 - (1.0 - level) / 2.0
    if checked in ("2,1", "2,k"):
        icc21 = _icc21(n, k, ms_rows, ms_columns, ms_error)
        low, high = _model2_interval(icc21, n, k, ms_rows, ms_columns, ms_error, upper_tail)
        if checked == "2,k":
            # psych::ICC steps the ICC(2,1) bounds up to k raters with Spearman-Brown.
            low, high = _spearman_brown(low, k), _spearman_brown(high, k)
    else:
        # F_L = F / q(df1, df2) and F_U = F * q(df2, df1) as in psych::ICC, multiplied through by
        # the residual mean square so that residual = 0 gives the limit instead of inf / inf.
        q_low = float(scipy_stats.f.ppf(upper_tail, df1, df2))
        q_high = float(scipy_stats.f.ppf(upper_tail, df2, df1))
        if checked in ("1,1", "3,1"):
            low = (ms_rows - q_low * residual) / (ms_rows + (k - 1) * q_low * residual)
            high = (ms_rows * q_high - residual) / (ms_rows * q_high + (k - 1) * residual)
        else:
            low = 1.0 - q_low * residual / ms_rows
            high = 1.0 - residual / (q_high * ms_rows)
    if not (np.isfinite(low) and np.isfinite(high) and np.isfinite(p)):
        reason = _undefined_reason(checked, ms_rows, ms_columns, residual)
        raise UndefinedStatistic(f"ICC({checked})", f"the F-based confidence interval is undefined ({reason})")
    return ICCResult(
        form=checked,
        value=value,
        F=f_ratio,
        df1=df1,
        df2=df2,
        p=p,
        ci_low=float(low),
        ci_high=float(high),
        confidence=level,
        n_targets=n,
        n_raters=k,
    )


def _icc21(n: int, k: int, ms_rows: float, ms_columns: float, ms_error: float) -> float:
    return (ms_rows - ms_error) / (ms_rows + (k - 1) * ms_error + k * (ms_columns - ms_error) / n)


def _spearman_brown(single: float, k: int) -> float:
    return single * k / (1.0 + single * (k - 1))


def _model2_interval(
    icc21: float, n: int, k: int, ms_rows: float, ms_columns: float, ms_error: float, upper_tail: float
) -> tuple[float, float]:
    """McGraw & Wong (1996) interval for ICC(A,1) with Satterthwaite df, as in psych::ICC."""
    # psych: v = (k-1)(n-1)(k ICC Fj + B)^2 / ((n-1) k^2 ICC^2 Fj^2 + B^2) with Fj = MSC / MSE and
    # B = n (1 + (k-1) ICC) - k ICC; numerator and denominator multiplied by MSE^2 here.
    b = n * (1.0 + (k - 1) * icc21) - k * icc21
    numerator = (k - 1) * (n - 1) * (k * icc21 * ms_columns + b * ms_error) ** 2
    denominator = (n - 1) * k**2 * icc21**2 * ms_columns**2 + b**2 * ms_error**2
    # MSC = MSE = 0 (identical runs): the bounds below are 1 whatever v is; any finite v will do.
    v = numerator / denominator if denominator > 0 else float((k - 1) * (n - 1))
    f_upper = float(scipy_stats.f.ppf(upper_tail, n - 1, v))
    f_lower = float(scipy_stats.f.ppf(upper_tail, v, n - 1))
    spread = k * ms_columns + (k * n - k - n) * ms_error
    low = n * (ms_rows - f_upper * ms_error) / (f_upper * spread + n * ms_rows)
    high = n * (f_lower * ms_rows - ms_error) / (spread + n * f_lower * ms_rows)
    return low, high
