"""Intervals conditional on a fixed design: the upgrade gate's noise when both models answered the same design.

Two recordings of one questionnaire share its items, prompts and temperatures; what differs between them is
the models' run-to-run noise. Each cell of the design (a condition without its run) holds that cell's
answers, exchangeable draws of the model, so a statistic's noise is found by redrawing every cell's answers
from its own, with replacement, each recording on its own (they are independent):

- :class:`CellDraws`: one resample's redrawing, vectorised over the cells;
- :func:`fixed_design_ci`: the difference's interval from its resampled values, estimate +- quantile x SE,
  the SE corrected by sqrt(R / (R - 1)) (resampling R answers from R underestimates their variance by
  (R - 1) / R; R the fewest answers in a cell, so the correction is never too small);
- :func:`mean_variance`: the exact variance of a mean that such resampling (corrected) converges to, a
  stratified variance over the cells (Cochran 1977, eq. 5.3), for rates;
- :func:`pooled_sd`: the run-to-run SD itself, pooled over the cells, with its chi-square interval.

A cell answered alike in every run (temperature 0) has no noise, and adds none; a cell asked once has no
noise of its own to resample: the callers say what they do with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import check_confidence
from snap_bench.stats.errors import UndefinedStatistic

FloatArray = npt.NDArray[np.float64]

__all__ = ["CellDraws", "FixedDesignCI", "fixed_design_ci", "mean_variance", "pooled_sd"]

_NAME = "fixed-design interval"


class CellDraws:
    """For entries labelled with their cell (0 .. c-1), draws for each entry an entry of the same cell with
    replacement: ``values[draws.draw(rng)]`` is one resample of every cell's answers."""

    def __init__(self, cells: npt.ArrayLike) -> None:
        codes = np.asarray(cells, dtype=np.intp).reshape(-1)
        if codes.size == 0:
            raise ValueError("no entries to resample")
        if codes.min() < 0:
            raise ValueError("cell codes must be 0 .. c-1")
        self._order = np.argsort(codes, kind="stable")
        sizes = np.bincount(codes)
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        self._start = starts[codes].astype(np.float64)
        self._size = sizes[codes].astype(np.float64)
        present = sizes[sizes > 0]
        #: The fewest answers in a cell (1: some cell was asked once and cannot be resampled).
        self.smallest = int(present.min())

    def draw(self, rng: np.random.Generator) -> npt.NDArray[np.intp]:
        positions = (self._start + np.floor(rng.random(self._start.size) * self._size)).astype(np.intp)
        drawn: npt.NDArray[np.intp] = self._order[positions]
        return drawn


@dataclass(frozen=True, slots=True)
class FixedDesignCI:
    """``estimate`` +- quantile x ``standard_error`` from ``n_resamples`` within-cell resamples."""

    estimate: float
    low: float
    high: float
    standard_error: float
    n_resamples: int
    n_undefined: int


def fixed_design_ci(
    estimate: float,
    resampled: npt.ArrayLike,
    runs: int,
    confidence: float = 0.95,
    *,
    degrees_of_freedom: int | None = None,
    max_undefined_share: float = 0.05,
) -> FixedDesignCI:
    r"""Interval of a difference from its values on within-cell resamples of both recordings.

    :math:`\mathrm{SE} = \sqrt{R / (R - 1)}\, \mathrm{sd}(\hat\theta^*)`, and the interval is the estimate
    plus or minus the normal quantile (Student's t on ``degrees_of_freedom`` when given: few resamples make
    the SE itself uncertain). The estimate is not bias-corrected: resampling a cell's few answers shrinks a
    spread-based statistic, but both recordings shrink alike and only the spread of the difference is used.
    Raises ValueError for ``runs`` < 2 (a cell asked once has no noise to resample) and
    :class:`UndefinedStatistic` when the estimate or more than ``max_undefined_share`` of the resamples is NaN.
    """
    from scipy.stats import norm
    from scipy.stats import t as student

    level = check_confidence(confidence)
    if runs < 2:
        raise ValueError(f"resampling within cells needs at least 2 answers a cell, got {runs}")
    values = np.asarray(resampled, dtype=np.float64).reshape(-1)
    defined = values[~np.isnan(values)]
    n_undefined = int(values.size - defined.size)
    if math.isnan(estimate) or defined.size < 2 or n_undefined > max_undefined_share * values.size:
        raise UndefinedStatistic(_NAME, f"the statistic is undefined on {n_undefined} of {values.size} resamples")
    error = math.sqrt(runs / (runs - 1)) * float(np.std(defined, ddof=1))
    upper = 0.5 + level / 2
    quantile = float(norm.ppf(upper) if degrees_of_freedom is None else student.ppf(upper, degrees_of_freedom))
    half = quantile * error
    return FixedDesignCI(float(estimate), estimate - half, estimate + half, error, int(values.size), n_undefined)


def _cell_sums(values: npt.ArrayLike, cells: npt.ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    """Each cell's count, sum and sum of squares, and the number of values; ValueError on a bad input."""
    data = np.asarray(values, dtype=np.float64).reshape(-1)
    codes = np.asarray(cells, dtype=np.intp).reshape(-1)
    if data.shape != codes.shape or data.size == 0:
        raise ValueError(f"one cell per value needed; got {data.shape} and {codes.shape}")
    if np.isnan(data).any():
        raise ValueError("values must not be NaN")
    sizes = np.bincount(codes).astype(np.float64)
    sums = np.bincount(codes, weights=data).astype(np.float64)
    squares = np.bincount(codes, weights=data * data).astype(np.float64)
    return sizes, sums, squares, int(data.size)


def _within(sizes: FloatArray, sums: FloatArray, squares: FloatArray) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Each cell's sample variance (n - 1 denominator; 0 for a cell of one answer) and which cells have two
    answers or more; ValueError when none has."""
    repeated = sizes >= 2
    if not repeated.any():
        raise ValueError("no cell has two answers: no run-to-run noise to read off")
    within = np.zeros_like(sizes)
    within[repeated] = (squares[repeated] - sums[repeated] ** 2 / sizes[repeated]) / (sizes[repeated] - 1)
    return np.maximum(within, 0.0), repeated  # rounding below 0 for a cell answered alike


def pooled_sd(values: npt.ArrayLike, cells: npt.ArrayLike, confidence: float = 0.95) -> tuple[float, float, float]:
    r"""The run-to-run SD of one answer, pooled over the cells, with its interval: (s, low, high).

    :math:`s^2 = \sum_c (n_c - 1) s_c^2 / \nu`, :math:`\nu = \sum_c (n_c - 1)` (cells of one answer add
    nothing), and the interval :math:`[s \sqrt{\nu / \chi^2_{\nu, 1 - \alpha/2}},\ s \sqrt{\nu /
    \chi^2_{\nu, \alpha/2}}]` of a normal variance (Snedecor & Cochran 1989, sec. 5.9). It rests on the
    design's answers alone, so two recordings' SDs are independent estimates. A design whose cells all
    answer alike has s = 0 and the interval [0, 0]: nothing in the answers varies. ValueError when no cell
    has two answers.
    """
    from scipy.stats import chi2

    check_confidence(confidence)
    sizes, sums, squares, _ = _cell_sums(values, cells)
    within, repeated = _within(sizes, sums, squares)
    df = float(np.sum(sizes[repeated] - 1))
    sd = math.sqrt(float(np.sum(within[repeated] * (sizes[repeated] - 1))) / df)
    alpha = 1 - confidence
    low = sd * math.sqrt(df / float(chi2.ppf(1 - alpha / 2, df)))
    high = sd * math.sqrt(df / float(chi2.ppf(alpha / 2, df)))
    return sd, low, high


def mean_variance(values: npt.ArrayLike, cells: npt.ArrayLike) -> tuple[float, int]:
    r"""The variance of the mean of ``values`` given the design: each cell's answers a sample of its own.

    :math:`V = \sum_c n_c s_c^2 / N^2`, :math:`s_c^2` the cell's sample variance (n - 1 denominator); a cell
    with one answer borrows the pooled within-cell variance of the others (it has noise, but none to read
    off it: leaving it out would make V too small). Returns (V, the number of cells with two answers or
    more); raises ValueError when none has: there is no run noise to read off at all.
    """
    sizes, sums, squares, total = _cell_sums(values, cells)
    within, repeated = _within(sizes, sums, squares)
    pooled = float(np.sum(within[repeated] * (sizes[repeated] - 1)) / np.sum(sizes[repeated] - 1))
    within[sizes == 1] = pooled
    return float(np.sum(sizes * within) / float(total) ** 2), int(repeated.sum())
