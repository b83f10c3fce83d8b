"""Fixed-design intervals: answers redrawn within their cells, the SE's small-sample correction, and the
stratified variance of a rate (Cochran 1977, eq. 5.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from snap_bench.stats import UndefinedStatistic
from snap_bench.stats.paired import mover_ci
from snap_bench.stats.within_cell import CellDraws, fixed_design_ci, mean_variance, pooled_sd


def test_answers_are_redrawn_only_from_their_own_cell() -> None:
    cells = np.array([2, 0, 2, 1, 0, 2, 1])
    values = np.array([30.0, 1.0, 31.0, 20.0, 2.0, 32.0, 21.0])
    draws = CellDraws(cells)
    assert draws.smallest == 2
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(200):
        drawn = draws.draw(rng)
        assert (cells[drawn] == cells).all()
        seen.update(values[drawn].tolist())
    # with replacement, every answer of every cell turns up
    assert seen == set(values.tolist())
    assert CellDraws([0, 1, 1]).smallest == 1


def test_a_cell_answered_alike_in_every_run_adds_no_noise() -> None:
    draws = CellDraws(np.repeat(np.arange(4), 3))
    values = np.repeat([1.0, 2.0, 3.0, 4.0], 3)
    rng = np.random.default_rng(2)
    assert all((values[draws.draw(rng)] == values).all() for _ in range(20))
    variance, repeated = mean_variance(values, np.repeat(np.arange(4), 3))
    assert (variance, repeated) == (0.0, 4)


def test_the_standard_error_is_corrected_for_resampling_r_answers_from_r() -> None:
    resampled = np.array([-0.2, 0.1, 0.0, 0.3, -0.1, 0.05])
    interval = fixed_design_ci(0.04, resampled, runs=3, confidence=0.95)
    error = math.sqrt(3 / 2) * float(np.std(resampled, ddof=1))
    assert interval.standard_error == pytest.approx(error)
    assert (interval.low, interval.high) == pytest.approx((0.04 - 1.959964 * error, 0.04 + 1.959964 * error))
    few = fixed_design_ci(0.04, resampled, runs=3, degrees_of_freedom=5)
    assert few.high - few.estimate == pytest.approx(scipy_stats.t.ppf(0.975, 5) * error)


def test_no_interval_without_noise_to_resample_or_with_undefined_resamples() -> None:
    with pytest.raises(ValueError, match="at least 2 answers a cell"):
        fixed_design_ci(0.0, [0.1, 0.2], runs=1)
    with pytest.raises(UndefinedStatistic):
        fixed_design_ci(0.0, [0.1, np.nan, 0.2, np.nan], runs=3)
    with pytest.raises(ValueError, match="no cell has two answers"):
        mean_variance([1.0, 0.0, 1.0], [0, 1, 2])


def test_the_stratified_variance_by_hand_and_a_single_answer_borrowing_the_pooled_one() -> None:
    # cells {1, 0, 1} and {0, 0}: s^2 = 1/3 and 0; V = (3 x 1/3 + 2 x 0) / 5^2
    values = np.array([1.0, 0.0, 1.0, 0.0, 0.0])
    cells = np.array([0, 0, 0, 1, 1])
    assert mean_variance(values, cells) == (pytest.approx(1 / 25), 2)
    # a sixth answer alone in its cell has the pooled variance (2 x 1/3 + 1 x 0) / 3 = 2/9
    variance, repeated = mean_variance(np.append(values, 1.0), np.append(cells, 2))
    assert repeated == 2
    assert variance == pytest.approx((1.0 + 0.0 + 2 / 9) / 36)


def test_the_interval_of_a_difference_of_two_recordings_covers_at_its_level() -> None:
    """Two recordings of one answerer (40 cells x 3 runs, each cell its own mean, noise SD 1): the
    difference of their means is 0; within-cell resampling (corrected) covers it about 95 % of the time,
    and the uncorrected SE would cover less."""
    rng = np.random.default_rng(11)
    truth = rng.uniform(1, 5, 40)
    cells = np.repeat(np.arange(40), 3)
    draws = CellDraws(cells)
    covered, narrow = 0, 0
    for replicate in range(300):
        new, old = (np.repeat(truth, 3) + rng.normal(0, 1, 120) for _ in range(2))
        resampled = [new[draws.draw(rng)].mean() - old[draws.draw(rng)].mean() for _ in range(100)]
        interval = fixed_design_ci(new.mean() - old.mean(), resampled, runs=3)
        covered += interval.low <= 0.0 <= interval.high
        narrow += abs(new.mean() - old.mean()) <= 1.96 * float(np.std(resampled, ddof=1))
        exact = mean_variance(new, cells)[0] + mean_variance(old, cells)[0]
        if replicate < 20:
            # the corrected resampled SE estimates the stratified variance (100 resamples: within 30 %)
            assert interval.standard_error == pytest.approx(math.sqrt(exact), rel=0.3)
    assert 0.92 <= covered / 300 <= 0.98
    assert narrow < covered


def test_the_pooled_run_sd_and_its_chi_square_interval_equal_r_s() -> None:
    # Five cells of three answers, each of sample variance 4: pooled SD 2 on 10 degrees of freedom. R:
    # 2 * sqrt(10 / qchisq(c(0.975, 0.025), 10)) = 1.397434, 3.509867 (Snedecor & Cochran 1989, sec. 5.9).
    values = [c + offset for c in (1.0, 2.0, 3.0, 4.0, 5.0) for offset in (-2.0, 0.0, 2.0)]
    cells = [cell for cell in range(5) for _ in range(3)]
    sd, low, high = pooled_sd([*values, 9.0], [*cells, 5])  # a cell of one answer adds nothing
    assert (sd, low, high) == pytest.approx((2.0, 1.397434, 3.509867), abs=1e-6)


def test_a_pooled_run_sd_of_answers_alike_is_zero_and_of_no_repeated_cell_undefined() -> None:
    assert pooled_sd([3.0, 3.0, 4.0, 4.0], [0, 0, 1, 1]) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="no cell has two answers"):
        pooled_sd([3.0, 4.0], [0, 1])


def test_two_recordings_run_sds_combined_cover_their_difference_at_their_level() -> None:
    # Two independent recordings of one model (48 cells x 3 runs, SD 1): the difference of their pooled SDs,
    # each side's chi-square interval combined (MOVER), covers the true difference, 0, about 95 % of the time.
    rng = np.random.default_rng(7)
    cells = np.repeat(np.arange(48), 3)
    means = rng.uniform(1, 5, 48)[cells]
    held = [
        low <= 0 <= high
        for _ in range(2000)
        for _, low, high in [mover_ci(pooled_sd(means + rng.normal(0, 1, cells.size), cells),
                                      pooled_sd(means + rng.normal(0, 1, cells.size), cells))]
    ]  # fmt: skip
    assert 0.93 <= float(np.mean(held)) <= 0.97
