"""Each perturbation figure with its percentile interval over resampled samples, the independent units.

Every interval resamples samples, keeping all their variants and occasions together.
"""

from __future__ import annotations

import math

import numpy as np

from snap_bench.analysis.metric_tables import AnalysisSettings, Metric
from snap_bench.instruments.task.answers import Answers
from snap_bench.instruments.task.unit_statistics import (
    UnitStatistic,
    normalised_errors,
    squared_errors,
    variant_spread,
)
from snap_bench.stats import UndefinedStatistic, bootstrap_ci
from snap_bench.stats.resampled_sums import CountsStatistic, SampleSums


def bootstrapped(
    answers: Answers,
    statistic: UnitStatistic,
    settings: AnalysisSettings,
    batch: CountsStatistic,
    *,
    left_out: bool = True,
    complete_only: bool = False,
) -> Metric:
    """The statistic on every unit, with a percentile interval over resampled samples.

    ``batch`` is the same statistic of resampled sample counts (instruments/task/resampling.py):
    the bootstrap draws the same resamples either way, and this way costs one matrix product.
    """
    every = np.arange(len(answers.sample_of), dtype=np.intp)
    unscored = np.isnan(answers.values)
    if complete_only:
        n, n_left_out = int((~unscored.any(axis=1)).sum()), int(unscored.any(axis=1).sum())
    else:
        n = int((~unscored).sum()) if left_out else unscored.size
        n_left_out = int(unscored.sum()) if left_out else 0
    try:
        value = statistic(answers, every)
    except UndefinedStatistic as error:
        return Metric(None, n=n, n_left_out=n_left_out, undefined=error.reason)
    if len(answers.samples) < 2:
        return Metric(value, n=n, n_left_out=n_left_out, note="no interval: one sample")
    samples = np.arange(len(answers.samples), dtype=np.float64).reshape(-1, 1)
    try:
        interval = bootstrap_ci(
            batch,
            samples,
            n_resamples=settings.n_resamples,
            confidence=settings.confidence,
            seed=settings.seed,
            vectorized=True,
        )
    except UndefinedStatistic as error:
        return Metric(value, n=n, n_left_out=n_left_out, note=f"no interval: {error.reason}")
    return Metric(value, interval.low, interval.high, n=n, n_left_out=n_left_out)


def variant_effect_metrics(answers: Answers, settings: AnalysisSettings, sums: SampleSums) -> dict[str, Metric]:
    """The variant effect net of input noise (variant_effect), and the spread judged on it (variant_spread).

    Both come from the two-way mixed model of :mod:`variant_effect` (inputs random), with a percentile
    interval over resampled samples; the observed max-min of the variant accuracies, which carries
    the input noise, is kept beside them as ``variant_spread_observed``, shown and never judged.
    """
    from snap_bench.stats.paired import cluster_bootstrap_ci
    from snap_bench.stats.variant_effect import (
        corrected_spread_batch,
        variant_f_test,
        variant_sd_batch,
    )

    errors = normalised_errors(answers)
    n_scored = int((~np.isnan(errors)).sum())
    n_left_out = int(np.isnan(errors).sum())
    statistic, df1, df2, p_value = variant_f_test(errors)
    test = f"F({df1:g}, {df2:g}) = {statistic:.2f}, p = {p_value:.3g}" if not math.isnan(statistic) else "no F test"
    result: dict[str, Metric] = {}
    for name, batch in (("variant_effect_sd", variant_sd_batch), ("variant_spread", corrected_spread_batch)):
        value = float(batch(errors, np.ones((1, errors.shape[0])))[0])
        if math.isnan(value):
            result[name] = Metric(None, n=n_scored, n_left_out=n_left_out, undefined="fewer than two inputs scored")
            continue
        note = f"net of input noise (inputs a random effect); variants differ: {test}"
        try:
            interval = cluster_bootstrap_ci(
                batch,
                errors,
                answers.sample_of,
                n_resamples=settings.n_resamples,
                confidence=settings.confidence,
                seed=settings.seed,
            )
        except (UndefinedStatistic, ValueError) as error:
            result[name] = Metric(value, n=n_scored, n_left_out=n_left_out, note=f"{note}; no interval: {error}")
            continue
        result[name] = Metric(value, interval.low, interval.high, n=n_scored, n_left_out=n_left_out, note=note)
    result["variant_spread_observed"] = bootstrapped(answers, variant_spread, settings, sums.variant_spread)
    return result


def sample_sums(answers: Answers) -> SampleSums:
    """The table's per-sample sums, from which each batch statistic computes every resample at once."""
    every = np.arange(len(answers.sample_of), dtype=np.intp)
    errors = squared_errors(answers, every)
    worst = answers.label_set.max_error(answers.gold_kind)
    return SampleSums(
        answers.values, errors, answers.gold_low, answers.gold_high, answers.sample_of, len(answers.samples), worst
    )
