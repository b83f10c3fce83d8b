"""Krippendorff's alpha: agreement among raters at any level of measurement, with missing data."""

from __future__ import annotations

from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import FloatArray, as_matrix
from snap_bench.stats.errors import UndefinedStatistic

__all__ = ["KRIPPENDORFF_LEVELS", "KrippendorffLevel", "krippendorff_alpha"]

KrippendorffLevel = Literal["nominal", "ordinal", "interval", "ratio"]

#: The legal ``level`` values.
KRIPPENDORFF_LEVELS: Final[tuple[KrippendorffLevel, ...]] = ("nominal", "ordinal", "interval", "ratio")

_NAME = "Krippendorff's alpha"


def _squared_distances(level: KrippendorffLevel, values: FloatArray, totals: FloatArray) -> FloatArray:
    """The metric difference function delta^2(c, k) for every pair of observed values."""
    if level == "nominal":
        return 1.0 - np.eye(values.size)
    if level == "ordinal":
        # delta^2 = (sum_{g=c}^{k} n_g - (n_c + n_k) / 2)^2 over the ranks of the observed values.
        cumulative = np.concatenate(([0.0], np.cumsum(totals)))
        low = np.minimum.outer(np.arange(values.size), np.arange(values.size))
        high = np.maximum.outer(np.arange(values.size), np.arange(values.size))
        between = cumulative[high + 1] - cumulative[low]
        distances: FloatArray = np.square(between - (totals[:, None] + totals[None, :]) / 2.0)
        return distances
    if level == "interval":
        return np.square(np.subtract.outer(values, values))
    sums = np.add.outer(values, values)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.square(np.subtract.outer(values, values) / sums)
    # Only (0, 0) has a zero sum (values are non-negative), and its difference is 0.
    return np.where(sums == 0, 0.0, ratio)


def krippendorff_alpha(ratings: npt.ArrayLike, level: KrippendorffLevel = "ordinal") -> float:
    r"""Krippendorff's alpha reliability coefficient, missing data allowed.

    Parameters
    ----------
    ratings : array_like, shape (n_units, n_raters)
        Rows are units (the things rated), columns are raters (runs, coders); NaN marks a missing
        rating. Categories must be coded as numbers; for ``"nominal"`` only their identity matters,
        for ``"ordinal"`` only their order.
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement, which chooses the difference function :math:`\delta^2`.

    Returns
    -------
    float
        Alpha: 1 is perfect agreement, 0 agreement at chance level, negative systematic disagreement.

    Raises
    ------
    ValueError
        Not a 2-D numeric matrix, fewer than 2 raters, infinity, an unknown level, or negative values
        with ``level="ratio"``.
    UndefinedStatistic
        Fewer than two pairable values (a unit is pairable when at least two raters rated it), or
        every pairable value identical, so the expected disagreement is zero ("no variation").

    Notes
    -----
    Units with fewer than two ratings are dropped, as the coefficient prescribes. From the
    coincidence matrix :math:`o_{ck} = \sum_u P_{ck}(u) / (m_u - 1)`, where :math:`P_{ck}(u)` counts
    the ordered pairs of values :math:`(c, k)` from different raters in unit :math:`u` and
    :math:`m_u` is the number of ratings in unit :math:`u`, the marginals
    :math:`n_c = \sum_k o_{ck}` and :math:`n = \sum_c n_c`:

    .. math::

        \alpha = 1 - \frac{D_o}{D_e} = 1 - (n - 1)
            \frac{\sum_{c,k} o_{ck}\, \delta^2_{ck}}{\sum_{c,k} n_c n_k\, \delta^2_{ck}}

    with :math:`\delta^2_{ck}` = 0 if :math:`c = k` else 1 (nominal);
    :math:`(\sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2` (ordinal, over the ordered observed values);
    :math:`(c-k)^2` (interval); :math:`((c-k)/(c+k))^2` (ratio).

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. University of Pennsylvania,
    Annenberg School for Communication, Departmental Papers 43.
    Hayes, A. F., & Krippendorff, K. (2007). Answering the call for a standard reliability measure
    for coding data. *Communication Methods and Measures*, 1(1), 77-89.
    """
    if level not in KRIPPENDORFF_LEVELS:
        raise ValueError(f"unknown level {level!r}; use one of {', '.join(KRIPPENDORFF_LEVELS)}")
    matrix = as_matrix(
        ratings, name="ratings (rows = units, columns = raters)", min_rows=1, min_columns=2, allow_nan=True
    )
    if level == "ratio" and np.nanmin(matrix, initial=0.0) < 0:
        raise ValueError("the ratio level needs non-negative values (a ratio scale has a true zero)")
    present = ~np.isnan(matrix)
    pairable = matrix[present.sum(axis=1) >= 2]
    if pairable.shape[0] == 0:
        raise UndefinedStatistic(_NAME, "fewer than two pairable values (no unit has two ratings)")
    values, codes = np.unique(pairable[~np.isnan(pairable)], return_inverse=True)
    # counts[u, c]: how many raters gave value c to unit u.
    counts = np.zeros((pairable.shape[0], values.size))
    unit_index = np.nonzero(~np.isnan(pairable))[0]
    np.add.at(counts, (unit_index, codes), 1.0)
    per_unit = counts.sum(axis=1)
    weights = 1.0 / (per_unit - 1.0)
    coincidences = np.einsum("u,uc,uk->ck", weights, counts, counts) - np.diag(weights @ counts)
    totals = coincidences.sum(axis=1)
    n = totals.sum()
    distances = _squared_distances(level, values.astype(np.float64), totals)
    expected = float(totals @ distances @ totals)
    if values.size < 2 or expected <= 0.0:
        raise UndefinedStatistic(_NAME, "no variation: every pairable rating has the same value")
    observed = float(np.sum(coincidences * distances))
    return float(1.0 - (n - 1.0) * observed / expected)
