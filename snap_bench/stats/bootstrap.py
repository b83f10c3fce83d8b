"""Nonparametric bootstrap confidence intervals that resample the rows (cells) of a matrix."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias, cast

import numpy as np
import numpy.typing as npt
from scipy import special

from snap_bench.stats._validation import FloatArray, check_confidence
from snap_bench.stats.errors import UndefinedStatistic

__all__ = [
    "BOOTSTRAP_METHODS",
    "BootstrapCI",
    "BootstrapMethod",
    "CountsStatistic",
    "Statistic",
    "bootstrap_ci",
]

BootstrapMethod = Literal["percentile", "basic", "bca"]

#: The legal ``method`` values.
BOOTSTRAP_METHODS: Final[tuple[BootstrapMethod, ...]] = ("percentile", "basic", "bca")

#: At most this many multiplicities are materialised per batch of resamples (32 MiB).
_BATCH_ELEMENTS = 1 << 22

_NAME = "bootstrap confidence interval"

#: A statistic of one matrix: ``statistic(matrix) -> float``, raising UndefinedStatistic.
Statistic: TypeAlias = Callable[[FloatArray], float]

#: A vectorized statistic: ``statistic(matrix, counts) -> array`` with one value per row of counts.
CountsStatistic: TypeAlias = Callable[[FloatArray, FloatArray], FloatArray]


@dataclass(frozen=True, slots=True)
class BootstrapCI:
    """A bootstrap confidence interval and how it was obtained.

    Attributes
    ----------
    estimate : float
        The statistic on the full data.
    low, high : float
        The interval's bounds.
    confidence : float
        Its level, e.g. 0.95.
    method : str
        ``"percentile"``, ``"basic"`` or ``"bca"``.
    n_resamples : int
        Resamples drawn.
    n_undefined : int
        Resamples on which the statistic was undefined, left out of the interval.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    method: str
    n_resamples: int
    n_undefined: int


def _generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def _resampled_values(
    statistic: Statistic | CountsStatistic,
    matrix: FloatArray,
    indices: npt.NDArray[np.intp],
    *,
    vectorized: bool,
) -> FloatArray:
    """The statistic on ``matrix[indices[b]]`` for every row b of ``indices``; NaN where undefined."""
    n_sets = indices.shape[0]
    n = matrix.shape[0]
    values = np.empty(n_sets)
    if vectorized:
        counts_statistic = cast("CountsStatistic", statistic)
        batch = max(1, _BATCH_ELEMENTS // n)
        for start in range(0, n_sets, batch):
            chunk = indices[start : start + batch]
            sets = chunk.shape[0]
            # counts[b, i]: how often row i was drawn in resample b.
            flat = (chunk + n * np.arange(sets)[:, None]).ravel()
            counts = np.bincount(flat, minlength=sets * n).reshape(sets, n).astype(np.float64)
            values[start : start + sets] = _checked_output(counts_statistic(matrix, counts), sets)
        return values
    single_statistic = cast("Statistic", statistic)
    for position, rows in enumerate(indices):
        try:
            values[position] = float(single_statistic(matrix[rows]))
        except UndefinedStatistic:
            values[position] = np.nan
    return values


def _checked_output(result: FloatArray, sets: int) -> FloatArray:
    array = np.asarray(result, dtype=np.float64)
    if array.shape != (sets,):
        raise ValueError(
            f"a vectorized statistic must return one value per row of counts, shape ({sets},); got shape {array.shape}"
        )
    return array


def _estimate(statistic: Statistic | CountsStatistic, matrix: FloatArray, *, vectorized: bool) -> float:
    if vectorized:
        counts_statistic = cast("CountsStatistic", statistic)
        value = float(_checked_output(counts_statistic(matrix, np.ones((1, matrix.shape[0]))), 1)[0])
        if np.isnan(value):
            raise UndefinedStatistic(_NAME, "the statistic is undefined on the full data")
        return value
    single_statistic = cast("Statistic", statistic)
    return float(single_statistic(matrix))


def _jackknife(statistic: Statistic | CountsStatistic, matrix: FloatArray, *, vectorized: bool) -> FloatArray:
    """Leave-one-row-out values of the statistic; NaN where undefined."""
    n = matrix.shape[0]
    if vectorized:
        counts_statistic = cast("CountsStatistic", statistic)
        values = np.empty(n)
        batch = max(1, _BATCH_ELEMENTS // n)
        for start in range(0, n, batch):
            stop = min(n, start + batch)
            counts = np.ones((stop - start, n))
            counts[np.arange(stop - start), np.arange(start, stop)] = 0.0
            values[start:stop] = _checked_output(counts_statistic(matrix, counts), stop - start)
        return values
    # Row i of leave_one_out lists every row index except i.
    leave_one_out = np.arange(1, n)[None, :] - np.tri(n, n - 1, k=-1, dtype=np.intp)
    return _resampled_values(statistic, matrix, leave_one_out, vectorized=False)


def bootstrap_ci(
    statistic: Statistic | CountsStatistic,
    data: npt.ArrayLike,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = None,
    method: BootstrapMethod = "percentile",
    vectorized: bool = False,
    max_undefined_share: float = 0.05,
) -> BootstrapCI:
    r"""Bootstrap confidence interval of a statistic of a matrix, resampling its rows with replacement.

    Rows are the independent units (for snap-bench: cells, each with its runs or paraphrases in the
    columns); columns stay together, so the dependence between occasions is preserved.

    Parameters
    ----------
    statistic : callable
        If ``vectorized`` is False: ``statistic(matrix) -> float`` on one resampled matrix of shape
        (n, k), raising :class:`UndefinedStatistic` where it is undefined (as every public statistic
        of this package does; wrap those returning a result object, e.g.
        ``lambda m: icc(m).value``). If ``vectorized`` is True: ``statistic(data, counts) -> array``
        where ``counts`` has shape (b, n) and ``counts[j, i]`` is how often row ``i`` was drawn in
        resample ``j``, returning one value per resample with NaN where undefined: the ``*_batch``
        functions of this package, e.g. ``functools.partial(icc_batch, form="2,1")``,
        :func:`cronbach_alpha_batch`, :func:`mean_pairwise_r_batch`. They reduce a whole batch of
        resamples to one matrix product, which is what makes 1,000 resamples cost milliseconds.
    data : array_like, shape (n, k)
        The matrix whose rows are resampled. NaN is passed through: the statistic decides.
    n_resamples : int
        Number of bootstrap resamples (at least 1).
    confidence : float
        Level of the two-sided interval.
    seed : int, numpy.random.Generator or None
        Seed or generator for reproducible resampling; None draws fresh entropy.
    method : {"percentile", "basic", "bca"}
        Percentile interval, basic (reverse percentile) interval, or bias-corrected and accelerated
        interval (BCa; needs ``n`` extra leave-one-out evaluations for the acceleration).
    vectorized : bool
        Whether ``statistic`` takes ``(data, counts)`` (see above). Both forms see the same
        resamples for the same seed, so they give the same interval.
    max_undefined_share : float
        Largest share of resamples on which the statistic may be undefined.

    Returns
    -------
    BootstrapCI

    Raises
    ------
    ValueError
        ``data`` not 2-D numeric or with fewer than 2 rows (3 for BCa), bad ``n_resamples``,
        ``confidence``, ``method`` or ``max_undefined_share``, or a vectorized statistic returning
        the wrong shape.
    UndefinedStatistic
        The statistic is undefined on the full data; or on more than ``max_undefined_share`` of the
        resamples; or a BCa correction is (every resample on one side of the estimate, or fewer
        than two defined leave-one-out values).

    Notes
    -----
    With :math:`\hat\theta` the estimate, :math:`\hat\theta^*_b` the defined resample values,
    :math:`q(p)` their :math:`p`-quantile (linear interpolation) and :math:`\gamma = 1 - \text{confidence}`:

    - percentile: :math:`[q(\gamma/2),\ q(1-\gamma/2)]`
    - basic: :math:`[2\hat\theta - q(1-\gamma/2),\ 2\hat\theta - q(\gamma/2)]`
    - BCa: :math:`[q(\alpha_1),\ q(\alpha_2)]` with
      :math:`\alpha_i = \Phi\big(z_0 + \frac{z_0 + z_i}{1 - a (z_0 + z_i)}\big)`,
      :math:`z_1 = \Phi^{-1}(\gamma/2)`, :math:`z_2 = \Phi^{-1}(1 - \gamma/2)`, the bias correction
      :math:`z_0 = \Phi^{-1}(\text{share of } \hat\theta^*_b < \hat\theta)` (ties counted half)
      and the acceleration :math:`a = \sum_i d_i^3 / (6 (\sum_i d_i^2)^{3/2})`,
      :math:`d_i = \bar\theta_{(\cdot)} - \theta_{(i)}`, from the leave-one-row-out jackknife
      values :math:`\theta_{(i)}` (undefined ones left out; :math:`a = 0` if they are all equal),
      as in ``scipy.stats.bootstrap``.

    **Undefined resamples.** A resample can make a statistic undefined where the full data did not
    (e.g. every drawn cell answered 5, so a correlation has zero variance). Such resamples are left
    out and counted in ``n_undefined``; the interval is then conditional on the statistic being
    defined, which is harmless while they are rare. When they exceed ``max_undefined_share`` the
    interval would describe a different population than the estimate, so
    :class:`UndefinedStatistic` is raised instead.

    References
    ----------
    Efron, B., & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 13-14.
    Chapman & Hall.
    Davison, A. C., & Hinkley, D. V. (1997). *Bootstrap Methods and their Application*, ch. 5.
    Cambridge University Press.
    """
    level = check_confidence(confidence)
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"unknown bootstrap method {method!r}; use one of {', '.join(BOOTSTRAP_METHODS)}")
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 <= max_undefined_share < 1.0:
        raise ValueError(f"max_undefined_share must lie in [0, 1), got {max_undefined_share!r}")
    try:
        matrix = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"data must be numeric: {error}") from None
    if matrix.ndim != 2:
        raise ValueError(f"data must be a 2-D array whose rows are resampled, got shape {matrix.shape}")
    n = matrix.shape[0]
    if n < 2:
        raise ValueError(f"the bootstrap needs at least 2 rows to resample, got {n}")
    if method == "bca" and n < 3:
        raise ValueError(f"the BCa interval's leave-one-row-out jackknife needs at least 3 rows, got {n}")

    estimate = _estimate(statistic, matrix, vectorized=vectorized)
    indices = _generator(seed).integers(0, n, size=(int(n_resamples), n))
    resampled = _resampled_values(statistic, matrix, indices, vectorized=vectorized)
    defined = resampled[~np.isnan(resampled)]
    n_undefined = int(resampled.size - defined.size)
    if defined.size == 0 or n_undefined > max_undefined_share * resampled.size:
        raise UndefinedStatistic(
            _NAME,
            f"the statistic is undefined on {n_undefined} of {resampled.size} resamples "
            f"(more than the allowed share {max_undefined_share})",
        )

    tail = (1.0 - level) / 2.0
    if method == "percentile":
        low, high = np.quantile(defined, [tail, 1.0 - tail])
    elif method == "basic":
        upper, lower = np.quantile(defined, [1.0 - tail, tail])
        low, high = 2.0 * estimate - upper, 2.0 * estimate - lower
    else:
        share_below = (np.sum(defined < estimate) + np.sum(defined <= estimate)) / (2.0 * defined.size)
        z0 = float(special.ndtri(share_below))
        if not np.isfinite(z0):
            raise UndefinedStatistic(
                _NAME, "BCa bias correction is infinite: every resample lies on one side of the estimate"
            )
        jackknife = _jackknife(statistic, matrix, vectorized=vectorized)
        jackknife = jackknife[~np.isnan(jackknife)]
        if jackknife.size < 2:
            raise UndefinedStatistic(
                _NAME, "BCa acceleration is undefined: the statistic is undefined when single rows are left out"
            )
        deviations = np.mean(jackknife) - jackknife
        spread = float(np.sum(np.square(deviations)))
        acceleration = float(np.sum(deviations**3)) / (6.0 * spread**1.5) if spread > 0 else 0.0
        z_tails = special.ndtri(np.array([tail, 1.0 - tail]))
        adjusted = special.ndtr(z0 + (z0 + z_tails) / (1.0 - acceleration * (z0 + z_tails)))
        low, high = np.quantile(defined, adjusted)
    return BootstrapCI(
        estimate=estimate,
        low=float(low),
        high=float(high),
        confidence=level,
        method=method,
        n_resamples=int(n_resamples),
        n_undefined=n_undefined,
    )
