"""A simulated respondent of known reliability: the statistics recover it within their intervals.

Classical test theory (Lord & Novick 1968): answer = true score + error, with true-score variance
1 and error variance 0.25, so the reliability of one run is 1 / 1.25 = 0.8 and that of the mean
of k = 3 parallel runs is the Spearman-Brown value 3 * 0.8 / (1 + 2 * 0.8) = 12 / 13.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import numpy.typing as npt
import pytest

from snap_bench.stats import (
    CountsStatistic,
    ICCForm,
    bootstrap_ci,
    cronbach_alpha,
    cronbach_alpha_batch,
    cronbach_alpha_ci,
    icc,
    icc_batch,
    mean_pairwise_r,
    mean_pairwise_r_batch,
)

TRUE_VARIANCE = 1.0
ERROR_VARIANCE = 0.25
RUNS = 3
SINGLE_RUN_RELIABILITY = TRUE_VARIANCE / (TRUE_VARIANCE + ERROR_VARIANCE)  # 0.8
MEAN_OF_RUNS_RELIABILITY = RUNS * SINGLE_RUN_RELIABILITY / (1 + (RUNS - 1) * SINGLE_RUN_RELIABILITY)  # 12/13


def _respondent(n_cells: int, seed: int, run_offsets: tuple[float, ...] = (0.0, 0.0, 0.0)) -> npt.NDArray[np.float64]:
    rng = np.random.default_rng(seed)
    true_scores = rng.normal(0.0, np.sqrt(TRUE_VARIANCE), size=(n_cells, 1))
    errors = rng.normal(0.0, np.sqrt(ERROR_VARIANCE), size=(n_cells, RUNS))
    answers: npt.NDArray[np.float64] = 3.0 + true_scores + errors + np.asarray(run_offsets)
    return answers


@pytest.mark.parametrize("form", ["1,1", "2,1", "3,1"])
def test_single_run_icc_recovered_within_its_f_interval(form: ICCForm) -> None:
    result = icc(_respondent(400, seed=20240601), form)
    assert result.ci_low < SINGLE_RUN_RELIABILITY < result.ci_high
    assert result.value == pytest.approx(SINGLE_RUN_RELIABILITY, abs=0.05)


@pytest.mark.parametrize("form", ["1,k", "2,k", "3,k"])
def test_mean_of_runs_icc_recovered_within_its_f_interval(form: ICCForm) -> None:
    result = icc(_respondent(400, seed=20240601), form)
    assert result.ci_low < MEAN_OF_RUNS_RELIABILITY < result.ci_high


def test_consistency_icc_ignores_a_fixed_run_offset_and_absolute_agreement_does_not() -> None:
    """A run that answers 0.5 higher throughout: ICC(3,1) still recovers 0.8, ICC(2,1) drops."""
    shifted = _respondent(400, seed=7, run_offsets=(0.0, 0.5, 0.0))
    consistency = icc(shifted, "3,1")
    assert consistency.ci_low < SINGLE_RUN_RELIABILITY < consistency.ci_high
    assert icc(shifted, "2,1").value < consistency.value - 0.03


def test_cronbach_alpha_recovered_within_the_feldt_interval() -> None:
    """Runs as parallel items: alpha estimates the reliability of their sum, 12/13."""
    scores = _respondent(400, seed=99)
    low, high = cronbach_alpha_ci(scores)
    assert low < MEAN_OF_RUNS_RELIABILITY < high
    assert cronbach_alpha(scores) == pytest.approx(MEAN_OF_RUNS_RELIABILITY, abs=0.02)


def test_bootstrap_intervals_recover_the_known_values() -> None:
    scores = _respondent(720, seed=31)
    cases: list[tuple[CountsStatistic, float]] = [
        (partial(icc_batch, form="2,1"), SINGLE_RUN_RELIABILITY),
        (mean_pairwise_r_batch, SINGLE_RUN_RELIABILITY),
        (cronbach_alpha_batch, MEAN_OF_RUNS_RELIABILITY),
    ]
    for statistic, truth in cases:
        result = bootstrap_ci(statistic, scores, n_resamples=1000, seed=3, vectorized=True, method="bca")
        assert result.low < truth < result.high, statistic
    assert mean_pairwise_r(scores).value == pytest.approx(SINGLE_RUN_RELIABILITY, abs=0.05)
