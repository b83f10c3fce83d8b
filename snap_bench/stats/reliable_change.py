"""Has one item's answer changed beyond the noise of asking again? An exact permutation test within cells.

A cell is one item asked under one setting of the design's other factors (prompt, temperature, ...), asked
again in several runs. If the new model answers a cell as the baseline does, the two sides' answers to
that cell are draws from one distribution, so any relabelling of the cell's pooled answers into "new" and
"baseline" is as likely as the one observed. That null holds whatever the run-to-run noise is at the
cell's temperature, since the noise is in the pooled answers themselves: a cell answered identically in
every run (temperature 0) cannot move the statistic at all, and a noisy one spreads its null distribution.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import FloatArray

__all__ = ["ReliableChange", "within_cell_permutation_test"]


@dataclass(frozen=True)
class ReliableChange:
    """The item's mean paired shift (new - baseline), its exact two-sided p-value and the pairs it rests on."""

    shift: float
    p: float
    n_pairs: int


def within_cell_permutation_test(new: Sequence[npt.ArrayLike], baseline: Sequence[npt.ArrayLike]) -> ReliableChange:
    """Exact stratified permutation test of the shift of an item's answers, cells as strata.

    Cell :math:`c` holds :math:`m_c` paired answers of each side (integers, e.g. Likert points). The
    statistic is the sum of the paired differences,

    .. math:: T = \\sum_c \\Big(\\sum_{r} y^{new}_{cr} - \\sum_{r} y^{old}_{cr}\\Big),
              \\qquad \\text{shift} = T / \\sum_c m_c,

    and its null distribution is that of :math:`T` when, in every cell independently, :math:`m_c` of the
    cell's :math:`2 m_c` pooled answers are drawn at random (all :math:`\\binom{2m_c}{m_c}` splits
    equally likely) to be "new". Each cell's distribution is counted exactly (subsets of size
    :math:`m_c` by their sum), the cells' are convolved, and :math:`p = P(|T^*| \\ge |T|)`. With equal
    group sizes relabelling maps :math:`T` to :math:`-T`, so the null is symmetric about 0. Identical
    answers give :math:`T = 0` and :math:`p = 1`.

    Parameters
    ----------
    new, baseline : sequence of array_like
        Per cell, the new model's and the baseline's answers (whole numbers), equally many per cell (the
        runs both sides answered). Cells may differ in size.

    Returns
    -------
    ReliableChange
        The shift in answer points, the p-value and the number of pairs.

    Raises
    ------
    ValueError
        If there is no pair, the two sides differ in cells or a cell's sizes, or an answer is not a
        whole number.

    References
    ----------
    Ernst, M. D. (2004). Permutation methods: a basis for exact inference. *Statistical Science* 19(4),
    676-685 (exact permutation distributions; stratified designs permute within strata).
    Jacobson, N. S. & Truax, P. (1991). Clinical significance: a statistical approach to defining
    meaningful change. *Journal of Consulting and Clinical Psychology* 59(1), 12-19 (change judged
    against the measurement's own noise).
    """
    if len(new) != len(baseline):
        raise ValueError(f"new and baseline need the same cells; got {len(new)} and {len(baseline)}")
    cells = [_cell(a, b, index) for index, (a, b) in enumerate(zip(new, baseline, strict=True))]
    n_pairs = sum(a.size for a, _ in cells)
    if n_pairs == 0:
        raise ValueError("no paired answers to test")
    observed = int(sum(a.sum() - b.sum() for a, b in cells))
    # The null distribution of T, as probabilities on the whole numbers from `low`.
    low, probabilities = 0, np.ones(1)
    for a, b in cells:
        pooled = np.concatenate([a, b])
        if pooled.min() == pooled.max():
            continue  # a cell answered alike in every run cannot move T: a point mass at 0
        cell_low, cell_probabilities = _cell_null(pooled, a.size)
        low += cell_low
        probabilities = np.convolve(probabilities, cell_probabilities)
    values = low + np.arange(probabilities.size)
    p = float(probabilities[np.abs(values) >= abs(observed)].sum())
    return ReliableChange(shift=observed / n_pairs, p=min(1.0, max(0.0, p)), n_pairs=n_pairs)


def _cell(
    new: npt.ArrayLike, baseline: npt.ArrayLike, index: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    a, b = np.asarray(new, dtype=np.float64).ravel(), np.asarray(baseline, dtype=np.float64).ravel()
    if a.size != b.size:
        raise ValueError(f"cell {index}: {a.size} new answers but {b.size} baseline ones (pairs are needed)")
    both = np.concatenate([a, b])
    if not np.isfinite(both).all() or (both != np.round(both)).any():
        raise ValueError(f"cell {index}: answers must be whole numbers")
    return a.astype(np.int64), b.astype(np.int64)


def _cell_null(pooled: npt.NDArray[np.int64], m: int) -> tuple[int, FloatArray]:
    """The distribution of (sum of m drawn) - (sum of the other m) over all splits of ``pooled``:
    the lowest value and the probabilities of every whole number from it (odd steps have probability 0)."""
    floor = int(pooled.min())
    shifted = pooled - floor
    top = int(shifted.sum())
    # ways[k, s]: the subsets of k answers whose (shifted) sum is s, built one answer at a time.
    ways = np.zeros((m + 1, top + 1))
    ways[0, 0] = 1.0
    for taken, value in enumerate(shifted, start=1):
        for k in range(min(taken, m), 0, -1):
            if value == 0:
                ways[k] += ways[k - 1]
            else:
                ways[k, value:] += ways[k - 1, :-value]
    drawn = ways[m] / math.comb(pooled.size, m)
    # Sum drawn S = s + m * floor; T = S - (total - S) = 2 s + 2 m floor - total.
    total = int(pooled.sum())
    lowest = 2 * m * floor - total
    probabilities = np.zeros(2 * top + 1)
    probabilities[::2] = drawn
    return lowest, probabilities
