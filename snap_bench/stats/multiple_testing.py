"""The false discovery rate over many tests: Benjamini-Hochberg adjusted p-values (q-values)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import FloatArray

__all__ = ["benjamini_hochberg"]


def benjamini_hochberg(p_values: npt.ArrayLike) -> FloatArray:
    """Benjamini-Hochberg adjusted p-values, in the order given.

    With the m p-values sorted ascending, :math:`p_{(1)} \\le \\dots \\le p_{(m)}`, the adjusted value of
    the i-th smallest is

    .. math:: q_{(i)} = \\min\\Big(1, \\min_{j \\ge i} \\frac{m}{j}\\, p_{(j)}\\Big),

    so that rejecting every test with :math:`q \\le \\alpha` is the step-up procedure that keeps the
    false discovery rate at or below :math:`\\alpha` for independent (or positively dependent) tests.
    These are the values of R's ``p.adjust(p, method = "BH")``.

    Parameters
    ----------
    p_values : array_like
        One-dimensional p-values, each in [0, 1]; may be empty.

    Returns
    -------
    numpy.ndarray
        The adjusted p-values (float64), one per input, in the input's order.

    Raises
    ------
    ValueError
        If the input is not one-dimensional, or a value is NaN or outside [0, 1].

    References
    ----------
    Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate: a practical and powerful
    approach to multiple testing. *Journal of the Royal Statistical Society B* 57(1), 289-300.
    Benjamini, Y. & Yekutieli, D. (2001). The control of the false discovery rate in multiple testing
    under dependency. *Annals of Statistics* 29(4), 1165-1188.
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p-values must be one-dimensional; got shape {p.shape}")
    if np.isnan(p).any() or (p < 0).any() or (p > 1).any():
        raise ValueError("p-values must lie in [0, 1] (no NaN)")
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    # The running minimum from the largest p down is the step-up: a smaller p never gets a larger q.
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted
