"""A position on a signed agreement axis (the political compass), its spread and its uncertainty."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import FloatArray, check_confidence
from snap_bench.stats.bootstrap import BootstrapCI
from snap_bench.stats.errors import UndefinedStatistic

__all__ = [
    "AXIS_SCALE",
    "axis_coordinate",
    "axis_coordinate_batch",
    "coordinate_spread_batch",
    "two_way_bootstrap_ci",
]

#: Largest absolute keyed score of one answer (Strongly agree +2 ... Strongly disagree -2).
MAX_ABS_SCORE = 2.0
#: The coordinates run from -AXIS_SCALE to +AXIS_SCALE.
AXIS_SCALE = 10.0


def axis_coordinate(keyed_scores: npt.ArrayLike) -> float:
    r"""The position on one axis of a set of keyed answers, on [-10, 10].

    .. math:: x = 10 \cdot \frac{\sum_i s_i}{2 N}

    where :math:`s_i \in [-2, 2]` are the keyed scores (reverse items already inverted) and
    :math:`N` their number: the raw sum divided by the largest possible absolute raw sum, times
    10, as in the Neural Net Neutrality design (``tools/aggregate.py``). On one complete answer
    sheet this is the design's figure; over many conditions it is their mean, which is the same
    thing as the mean of per-sheet coordinates when every sheet is complete.

    Raises
    ------
    ValueError
        Empty input, NaN, or a score outside [-2, 2].
    """
    scores = np.asarray(keyed_scores, dtype=float).ravel()
    if scores.size == 0:
        raise ValueError("axis_coordinate: no scores")
    if np.isnan(scores).any():
        raise ValueError("axis_coordinate: NaN in the scores; drop unscored answers first")
    if (np.abs(scores) > MAX_ABS_SCORE).any():
        raise ValueError(f"axis_coordinate: scores must lie in [-{MAX_ABS_SCORE:g}, {MAX_ABS_SCORE:g}]")
    return float(AXIS_SCALE * scores.sum() / (MAX_ABS_SCORE * scores.size))


def _column_coordinates(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """Per resample and column: the coordinate of the rows drawn (NaN cells left out)."""
    present = ~np.isnan(matrix)
    filled = np.where(present, matrix, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        result: FloatArray = AXIS_SCALE * (counts @ filled) / (MAX_ABS_SCORE * (counts @ present))
    return result


def axis_coordinate_batch(matrix: npt.ArrayLike, counts: npt.ArrayLike | None = None) -> FloatArray:
    """The coordinate of many row-resamples at once (for :func:`~snap_bench.stats.bootstrap_ci`).

    ``matrix`` holds mean keyed scores with rows = items and columns = occasions (NaN: not
    answered); the coordinate is 10 x the mean of the answered cells / 2. ``counts`` (sets x rows)
    are row multiplicities; default each row once. NaN for a resample with no answered cell.
    """
    data = np.asarray(matrix, dtype=float)
    weights = np.ones((1, data.shape[0])) if counts is None else np.asarray(counts, dtype=float)
    present = ~np.isnan(data)
    filled = np.where(present, data, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        result: FloatArray = (
            AXIS_SCALE * (weights @ filled).sum(axis=1) / (MAX_ABS_SCORE * (weights @ present).sum(axis=1))
        )
    return result


def coordinate_spread_batch(matrix: npt.ArrayLike, counts: npt.ArrayLike | None = None) -> FloatArray:
    r"""The sample SD (ddof 1) across columns of the per-column coordinates, for many row-resamples.

    ``matrix`` holds mean keyed scores, rows = items, columns = conditions (e.g. system prompt x
    temperature x choice); each column's coordinate is computed from the rows drawn, and the spread
    is their standard deviation: how far the placement moves when only the conditions change.
    NaN for a resample where fewer than two columns have a coordinate.
    """
    data = np.asarray(matrix, dtype=float)
    weights = np.ones((1, data.shape[0])) if counts is None else np.asarray(counts, dtype=float)
    columns = _column_coordinates(data, weights)
    defined = (~np.isnan(columns)).sum(axis=1)
    spread = np.full(columns.shape[0], np.nan)
    enough = defined >= 2
    if enough.any():
        spread[enough] = np.nanstd(columns[enough], axis=1, ddof=1)
    return spread


def two_way_bootstrap_ci(
    matrix: npt.ArrayLike,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = None,
) -> BootstrapCI:
    r"""Percentile interval of :func:`axis_coordinate_batch`, resampling rows *and* columns.

    Rows (items) and columns (runs) are drawn with replacement independently in each resample, the
    two-way ("pigeonhole") bootstrap for crossed random factors (Owen 2007, *The pigeonhole
    bootstrap*, Ann. Appl. Stat. 1(2)); the interval is the :math:`\gamma/2` and
    :math:`1-\gamma/2` quantiles of the resampled coordinates. It is wider than resampling items
    alone whenever the runs disagree, which is the point: the placement is uncertain both because
    the item bank is a sample and because a model answers differently from run to run.

    Raises
    ------
    ValueError
        Not a 2-D matrix with at least 2 rows and 1 column, or bad ``n_resamples``/``confidence``.
    UndefinedStatistic
        No answered cell at all, or more than 5% of the resamples without one.
    """
    data = np.asarray(matrix, dtype=float)
    if data.ndim != 2 or data.shape[0] < 2 or data.shape[1] < 1:
        raise ValueError(f"two_way_bootstrap_ci: need a matrix with >= 2 rows and >= 1 column, got {data.shape}")
    if n_resamples < 1:
        raise ValueError("two_way_bootstrap_ci: n_resamples must be at least 1")
    check_confidence(confidence)
    estimate = float(axis_coordinate_batch(data)[0])
    if np.isnan(estimate):
        raise UndefinedStatistic("two_way_bootstrap_ci", "no answered cell")
    generator = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_rows, n_columns = data.shape
    rows = generator.integers(0, n_rows, size=(n_resamples, n_rows))
    columns = generator.integers(0, n_columns, size=(n_resamples, n_columns))
    drawn = data[rows[:, :, None], columns[:, None, :]]
    present = ~np.isnan(drawn)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = (
            AXIS_SCALE * np.where(present, drawn, 0.0).sum(axis=(1, 2)) / (MAX_ABS_SCORE * present.sum(axis=(1, 2)))
        )
    undefined = int(np.isnan(values).sum())
    if undefined > 0.05 * n_resamples:
        raise UndefinedStatistic("two_way_bootstrap_ci", f"{undefined} of {n_resamples} resamples had no answered cell")
    gamma = 1 - confidence
    low, high = np.quantile(values[~np.isnan(values)], [gamma / 2, 1 - gamma / 2])
    return BootstrapCI(estimate, float(low), float(high), confidence, "two-way percentile", n_resamples, undefined)
