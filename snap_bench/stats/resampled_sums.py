"""A classification task's statistics over whole batches of bootstrap resamples at once, from per-sample sums.

A bootstrap resample of a task draws samples (with all their units); every
statistic it reports is a ratio of sums over units (squared errors over scored answers, hits over
scored answers, modal shares over units, changed over counted variant pairs), or a function of such
ratios (Fleiss' kappa, the spread of the variants' accuracies). So each one is ``counts @ sums``:
``counts[b, s]`` is how often resample ``b`` drew sample ``s`` (what ``bootstrap_ci(vectorized=True)``
passes) and ``sums[s]`` the sample's own total. Calling the per-unit statistic once per resample in
Python cost ~7 s of a 20 s replay; this costs milliseconds and sees the very same resamples (same seed,
same draws). The sums of squared errors, hits and counts are whole numbers and the modal shares are
fractions k/V, so the resampled values agree with the per-resample ones to rounding (1e-12 and better;
``tests/unit/instruments/task/test_resampling.py`` checks it on a design with every kind of gap).

A statistic undefined on a resample is NaN there, where the per-resample path raised UndefinedStatistic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import FloatArray

CountsStatistic = Callable[[FloatArray, FloatArray], FloatArray]
# Fleiss' kappa is undefined once chance agreement reaches 1 (stats.categorical.fleiss_kappa's tolerance).
_CHANCE_TOLERANCE = 1e-12


def _ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """numerator / denominator, NaN where the denominator is 0 (nothing to average)."""
    result = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=result, where=denominator != 0)
    return result


class SampleSums:
    """Per-sample totals of one model's perturbation answers, and the statistics of resampled counts.

    ``values[u, v]`` is the encoding unit u got from variant v (NaN: unscored), ``errors`` the squared
    errors against the gold interval (NaN where unscored), ``sample_of[u]`` the unit's sample and
    ``worst`` the largest penalty the gold allows. Every statistic takes ``(data, counts)`` as
    :func:`snap_bench.stats.bootstrap_ci` passes them with ``vectorized=True`` (``data`` is unused: the
    sums were taken here) and returns one value per row of ``counts``.
    """

    def __init__(
        self,
        values: FloatArray,
        errors: FloatArray,
        gold_low: FloatArray,
        gold_high: FloatArray,
        sample_of: npt.NDArray[np.intp],
        n_samples: int,
        worst: float,
    ) -> None:
        self._sample_of = sample_of
        self._n_samples = n_samples
        self._values = values
        self._errors = errors
        self._worst = worst
        scored = ~np.isnan(values)
        self._scored = scored
        n_variants = values.shape[1]
        # Per variant (columns kept): squared errors and scored answers, for every accuracy of a set of columns.
        self._error_sums = self._per_sample(np.where(scored, errors, 0.0))
        self._scored_sums = self._per_sample(scored.astype(np.float64))
        gold_sign = np.sign(gold_low + gold_high)[:, None]
        self._polarity_hits = self._per_sample((scored & (np.sign(values) == gold_sign)).sum(axis=1))
        self._exact_hits = self._per_sample((scored & (values == gold_low[:, None])).sum(axis=1))
        self._modal = self._per_sample(_modal_shares(values, scored))
        self._units = self._per_sample(np.ones(len(sample_of)))
        complete = scored.all(axis=1)
        self._complete_units = self._per_sample(complete.astype(np.float64))
        categories = np.unique(values[complete]) if complete.any() else np.empty(0)
        per_category = (values[:, :, None] == categories[None, None, :]).sum(axis=1).astype(np.float64)
        per_category[~complete] = 0.0
        self._category_totals = self._per_sample(per_category)
        self._squares = self._per_sample((per_category**2).sum(axis=1))
        self._raters = float(n_variants)

    def _per_sample(self, per_unit: npt.ArrayLike) -> FloatArray:
        """Sum a per-unit array (first axis: units) over the units of each sample."""
        array = np.asarray(per_unit, dtype=np.float64)
        totals = np.zeros((self._n_samples, *array.shape[1:]))
        np.add.at(totals, self._sample_of, array)
        return totals

    # -- the statistics, each of (data, counts) -------------------------------------------------

    def _accuracy(self, counts: FloatArray, columns: Sequence[int] | slice) -> FloatArray:
        errors = counts @ self._error_sums[:, columns].sum(axis=1)
        scored = counts @ self._scored_sums[:, columns].sum(axis=1)
        return 1.0 - _ratio(errors, scored) / self._worst

    def custom_accuracy(self, data: FloatArray, counts: FloatArray) -> FloatArray:
        return self._accuracy(counts, slice(None))

    def polarity_accuracy(self, data: FloatArray, counts: FloatArray) -> FloatArray:
        return _ratio(counts @ self._polarity_hits, counts @ self._scored_sums.sum(axis=1))

    def exact_accuracy(self, data: FloatArray, counts: FloatArray) -> FloatArray:
        return _ratio(counts @ self._exact_hits, counts @ self._scored_sums.sum(axis=1))

    def consistency(self, data: FloatArray, counts: FloatArray) -> FloatArray:
        return _ratio(counts @ self._modal, counts @ self._units)

    def weighted_index(self, weight: float) -> CountsStatistic:
        def statistic(data: FloatArray, counts: FloatArray) -> FloatArray:
            accuracy = self.custom_accuracy(data, counts)
            return weight * accuracy + (1 - weight) * self.consistency(data, counts)

        return statistic

    def fleiss_kappa(self, data: FloatArray, counts: FloatArray) -> FloatArray:
        """Kappa over the units every variant labelled; NaN under 2 such units or when chance agreement is 1."""
        subjects = counts @ self._complete_units
        raters = self._raters
        agreement = _ratio(counts @ self._squares - subjects * raters, subjects * raters * (raters - 1))
        shares = _ratio(counts @ self._category_totals, (subjects * raters)[:, None])
        chance = (shares**2).sum(axis=1)
        kappa = _ratio(agreement - chance, 1.0 - chance)
        kappa[(subjects < 2) | ~(chance < 1.0 - _CHANCE_TOLERANCE)] = np.nan
        return kappa

    def variant_spread(self, data: FloatArray, counts: FloatArray) -> FloatArray:
        """Best minus worst variant's custom accuracy; NaN with fewer than two variants scored."""
        accuracies = 1.0 - _ratio(counts @ self._error_sums, counts @ self._scored_sums) / self._worst
        defined = ~np.isnan(accuracies)
        spread = np.full(counts.shape[0], np.nan)
        enough = defined.sum(axis=1) >= 2
        if enough.any():
            chosen = accuracies[enough]
            spread[enough] = np.nanmax(chosen, axis=1) - np.nanmin(chosen, axis=1)
        return spread

    def accuracy_effect(self, first: Sequence[int], second: Sequence[int]) -> CountsStatistic:
        """Accuracy over the ``first`` variant columns minus over the ``second``."""

        def statistic(data: FloatArray, counts: FloatArray) -> FloatArray:
            return self._accuracy(counts, list(first)) - self._accuracy(counts, list(second))

        return statistic

    def flip_rate(self, pairs: Sequence[tuple[int, int]]) -> CountsStatistic:
        """Changed over counted variant pairs (see unit_statistics.flip_rate for what counts)."""
        changed, counted = self._flips(pairs)

        def statistic(data: FloatArray, counts: FloatArray) -> FloatArray:
            return _ratio(counts @ changed, counts @ counted)

        return statistic

    def max_flip_rate(self, pairs_per_factor: Sequence[Sequence[tuple[int, int]]]) -> CountsStatistic:
        """The largest flip rate over the factors; NaN where any of them is (or without factors)."""
        rates = [self.flip_rate(pairs) for pairs in pairs_per_factor]

        def statistic(data: FloatArray, counts: FloatArray) -> FloatArray:
            if not rates:
                return np.full(counts.shape[0], np.nan)
            largest: FloatArray = np.max(np.stack([rate(data, counts) for rate in rates]), axis=0)
            return largest

        return statistic

    def _flips(self, pairs: Sequence[tuple[int, int]]) -> tuple[FloatArray, FloatArray]:
        changed = np.zeros(len(self._sample_of))
        counted = np.zeros(len(self._sample_of))
        for first, second in pairs:
            a, b = self._values[:, first], self._values[:, second]
            both_missing = np.isnan(a) & np.isnan(b)
            counted += ~both_missing
            changed += ~both_missing & ~((a == b) & ~np.isnan(a))
        return self._per_sample(changed), self._per_sample(counted)


def _modal_shares(values: FloatArray, scored: npt.NDArray[np.bool_]) -> FloatArray:
    """Per unit, the share of all variants giving its most frequent label (stats.categorical.modal_share)."""
    present = values[scored]
    if not present.size:
        return np.zeros(values.shape[0])
    categories = np.unique(present)
    counts = (values[:, :, None] == categories[None, None, :]).sum(axis=1)
    shares: FloatArray = counts.max(axis=1) / values.shape[1]
    return shares
