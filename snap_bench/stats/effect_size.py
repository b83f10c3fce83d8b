"""Eta squared of each experimental factor from a main-effects ANOVA decomposition."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import RELATIVE_ZERO, FloatArray
from snap_bench.stats.errors import UndefinedStatistic

__all__ = ["RESIDUAL", "eta_squared"]

#: Key of the residual share in the mapping :func:`eta_squared` returns.
RESIDUAL = "residual"


def _dummies(labels: Sequence[Hashable], name: str, n: int) -> FloatArray:
    """Treatment-coded indicator columns of one factor (first level seen is the reference)."""
    if len(labels) != n:
        raise ValueError(f"factor {name!r} has {len(labels)} labels for {n} scores; give one label per score")
    codes: dict[Hashable, int] = {}
    try:
        indices = np.fromiter((codes.setdefault(label, len(codes)) for label in labels), dtype=np.intp, count=n)
    except TypeError as error:
        raise ValueError(f"factor {name!r} has an unhashable label: {error}") from None
    columns = np.zeros((n, max(len(codes) - 1, 0)))
    rows = np.nonzero(indices > 0)[0]
    columns[rows, indices[rows] - 1] = 1.0
    return columns


def eta_squared(scores: npt.ArrayLike, factors: Mapping[str, Sequence[Hashable]]) -> dict[str, float]:
    r"""Classical eta squared of each factor's main effect, plus the residual share.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One score per observation; complete data.
    factors : mapping of str to sequence of hashable
        Factor name to the level of each observation (same length as ``scores``), e.g.
        ``{"system_prompt": [...], "temperature": [...], "paraphrase": [...]}``. The mapping's order
        is the order of the sequential decomposition (it matters only for unbalanced data).

    Returns
    -------
    dict of str to float
        ``eta^2`` of every factor in the given order, then ``"residual"``. The values sum to 1.

    Raises
    ------
    ValueError
        ``scores`` not 1-D numeric, fewer than 2 scores, NaN or infinity; no factors; a factor named
        ``"residual"``; a factor whose length differs from ``scores``; an unhashable label.
    UndefinedStatistic
        The scores have zero variance ("zero variance"), so no share of it can be attributed.

    Notes
    -----
    Classical (not partial) eta squared:

    .. math:: \eta^2_f = \frac{SS_f}{SS_\text{total}}, \qquad
              \eta^2_\text{residual} = \frac{SS_\text{residual}}{SS_\text{total}}, \qquad
              \sum_f SS_f + SS_\text{residual} = SS_\text{total} = \sum_i (y_i - \bar y)^2

    from a main-effects model (no interactions; whatever the interactions explain is in the
    residual). :math:`SS_f` are sequential (type I) sums of squares: with :math:`\hat y_j` the
    least-squares fit of the intercept and the first :math:`j` factors (treatment-coded),
    :math:`SS_{f_j} = \lVert \hat y_j - \hat y_{j-1} \rVert^2` and
    :math:`SS_\text{residual} = \lVert y - \hat y_\text{all} \rVert^2`. The fits are nested
    projections, so by Pythagoras the parts add up to the total (to rounding) and none is negative.
    For a balanced full-factorial design the factors are orthogonal, order does not matter, and
    :math:`SS_f = \sum_\ell n_\ell (\bar y_\ell - \bar y)^2` (the textbook formula); for unbalanced
    data each factor gets only what the factors before it did not explain. A factor with one level,
    or one aliased with earlier factors, gets 0.

    References
    ----------
    Cohen, J. (1973). Eta-squared and partial eta-squared in fixed factor ANOVA designs.
    *Educational and Psychological Measurement*, 33(1), 107-112.
    Maxwell, S. E., Delaney, H. D., & Kelley, K. (2018). *Designing Experiments and Analyzing Data*
    (3rd ed.), ch. 7 (sums of squares in nonorthogonal designs). Routledge.
    """
    try:
        y = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"scores must be numeric: {error}") from None
    if y.ndim != 1:
        raise ValueError(f"scores must be 1-D (one score per observation), got shape {y.shape}")
    n = y.size
    if n < 2:
        raise ValueError(f"eta squared needs at least 2 scores, got {n}")
    if not np.isfinite(y).all():
        raise ValueError(
            f"scores contain {int((~np.isfinite(y)).sum())} NaN or infinite value(s); drop the "
            "incomplete observations (and their factor labels) explicitly and report how many"
        )
    if not factors:
        raise ValueError("give at least one factor")
    if RESIDUAL in factors:
        raise ValueError(f"a factor may not be called {RESIDUAL!r}: that key holds the residual share")

    centred = y - np.mean(y)
    ss_total = float(centred @ centred)
    if ss_total <= RELATIVE_ZERO * float(y @ y):
        raise UndefinedStatistic("eta squared", "zero variance: every score is identical")

    design = np.ones((n, 1))
    fitted_before = np.full(n, np.mean(y))
    sums_of_squares: dict[str, float] = {}
    for name, labels in factors.items():
        design = np.hstack([design, _dummies(labels, name, n)])
        coefficients = np.linalg.lstsq(design, y, rcond=None)[0]
        fitted = design @ coefficients
        step = fitted - fitted_before
        sums_of_squares[name] = float(step @ step)
        fitted_before = fitted
    residual = y - fitted_before
    sums_of_squares[RESIDUAL] = float(residual @ residual)
    return {name: part / ss_total for name, part in sums_of_squares.items()}
