"""Item-level change: Benjamini-Hochberg q-values, the exact within-cell permutation test, and the stratified
interval of a mean paired difference (snap_bench.stats.multiple_testing, reliable_change,
stratified_difference).

Reference values for Benjamini-Hochberg are R's ``p.adjust(p, method = "BH")`` (stats package, R 4.x),
worked here by hand from its formula q_(i) = min_{j >= i} min(1, m p_(j) / j):

- ``p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "BH")`` = 0.05 0.05 0.05 0.05 0.05
- ``p.adjust(c(0.01, 0.04, 0.03, 0.005, 0.5), "BH")`` = 0.025 0.05 0.05 0.025 0.5
- ``p.adjust(c(0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205), "BH")``
  = 0.008 0.032 0.0672 0.0672 0.0672 0.08 0.08457143 0.205
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from snap_bench.stats.multiple_testing import benjamini_hochberg
from snap_bench.stats.reliable_change import within_cell_permutation_test
from snap_bench.stats.stratified_difference import NoiseUnreadable, stratified_mean_difference_ci


@pytest.mark.parametrize(
    ("p", "expected"),
    [
        ([0.01, 0.02, 0.03, 0.04, 0.05], [0.05, 0.05, 0.05, 0.05, 0.05]),
        ([0.01, 0.04, 0.03, 0.005, 0.5], [0.025, 0.05, 0.05, 0.025, 0.5]),
        (
            [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205],
            [0.008, 0.032, 0.0672, 0.0672, 0.0672, 0.08, 0.08457143, 0.205],
        ),
        ([0.9, 0.95], [0.95, 0.95]),
        ([], []),
    ],
)
def test_benjamini_hochberg_matches_r_p_adjust(p: list[float], expected: list[float]) -> None:
    assert benjamini_hochberg(p) == pytest.approx(expected, abs=1e-8)


@pytest.mark.parametrize("bad", [[0.1, np.nan], [-0.1], [1.2], [[0.1, 0.2]]])
def test_benjamini_hochberg_refuses_what_is_no_p_value(bad: object) -> None:
    with pytest.raises(ValueError, match="p-values"):
        benjamini_hochberg(bad)  # type: ignore[arg-type]


def test_identical_answers_do_not_move_the_statistic() -> None:
    result = within_cell_permutation_test([[3, 3, 3], [2, 4, 5]], [[3, 3, 3], [2, 4, 5]])
    assert (result.shift, result.p, result.n_pairs) == (0.0, 1.0, 6)


def test_one_cell_moved_in_every_run_has_the_exact_split_probability() -> None:
    # Pooled 4,4,4,3,3,3: of the C(6,3) = 20 splits, 1 gives T = +3 and 1 gives T = -3: p = 2/20.
    result = within_cell_permutation_test([[4, 4, 4]], [[3, 3, 3]])
    assert (result.shift, result.p) == (1.0, pytest.approx(0.1))


def test_the_p_value_is_the_count_of_every_split() -> None:
    rng = np.random.default_rng(7)
    new = [rng.integers(1, 6, 3) for _ in range(3)]
    old = [rng.integers(1, 6, 3) for _ in range(3)]
    observed = sum(int(a.sum() - b.sum()) for a, b in zip(new, old, strict=True))
    per_cell = []
    for a, b in zip(new, old, strict=True):
        pooled = np.concatenate([a, b])
        per_cell.append(
            [2 * int(pooled[list(chosen)].sum()) - int(pooled.sum()) for chosen in itertools.combinations(range(6), 3)]
        )
    totals = [sum(combination) for combination in itertools.product(*per_cell)]
    expected = sum(abs(total) >= abs(observed) for total in totals) / len(totals)
    assert within_cell_permutation_test(new, old).p == pytest.approx(expected, abs=1e-12)


def test_a_large_shift_is_far_beyond_the_run_noise() -> None:
    rng = np.random.default_rng(3)
    old = [np.clip(np.round(2 + rng.normal(0, 1, 3)), 1, 5) for _ in range(8)]
    new = [np.clip(np.round(4 + rng.normal(0, 1, 3)), 1, 5) for _ in range(8)]
    result = within_cell_permutation_test(new, old)
    assert result.shift > 1.0
    assert result.p < 1e-4


def test_pure_run_noise_is_rejected_at_its_nominal_rate() -> None:
    """Both sides drawn from the same cells at temperature 1: p below 0.05 in about 5 % of items, not more."""
    rng = np.random.default_rng(11)
    truth = rng.uniform(1.5, 4.5, 8)
    p_values = []
    for _ in range(400):
        new = [np.clip(np.round(mu + rng.normal(0, 1, 3)), 1, 5) for mu in truth]
        old = [np.clip(np.round(mu + rng.normal(0, 1, 3)), 1, 5) for mu in truth]
        p_values.append(within_cell_permutation_test(new, old).p)
    rejected = np.mean(np.asarray(p_values) <= 0.05)
    assert rejected <= 0.075  # 5 % plus two binomial standard errors (0.011 each) on 400 items
    assert rejected > 0.01  # and not a test that never rejects


def test_the_permutation_test_refuses_unpaired_or_fractional_answers() -> None:
    with pytest.raises(ValueError, match="pairs"):
        within_cell_permutation_test([[1, 2]], [[1]])
    with pytest.raises(ValueError, match="whole numbers"):
        within_cell_permutation_test([[1.5]], [[1]])
    with pytest.raises(ValueError, match="no paired"):
        within_cell_permutation_test([], [])


def test_the_stratified_interval_reads_the_noise_off_each_cells_runs() -> None:
    # Two cells: differences (0, 2) and (1, 1, 1). N = 5, mean 1.0; s^2 = 2 and 0:
    # V = (2 x 2 + 3 x 0) / 25 = 0.16, SE 0.4; one cell carries the variance, so df = 1.
    interval = stratified_mean_difference_ci([[0, 2], [1, 1, 1]])
    assert (interval.estimate, interval.standard_error, interval.df) == (1.0, pytest.approx(0.4), pytest.approx(1.0))
    assert interval.high - interval.estimate == pytest.approx(12.7062047 * 0.4)


def test_the_stratified_interval_stays_inside_the_scale() -> None:
    interval = stratified_mean_difference_ci([[0, 4], [-4, 4]], bound=4.0)
    assert -4.0 <= interval.low < interval.estimate < interval.high <= 4.0


def test_no_spread_anywhere_gives_the_point() -> None:
    interval = stratified_mean_difference_ci([[0.0, 0.0], [0.0]])
    assert (interval.low, interval.high) == (0.0, 0.0)
    moved = stratified_mean_difference_ci([[1.0, 1.0, 1.0]])
    assert (moved.low, moved.high) == (1.0, 1.0)


def test_a_single_difference_borrows_the_pooled_noise() -> None:
    with_single = stratified_mean_difference_ci([[0, 2], [0, 2], [5]])
    # Pooled s^2 = 2; V = (2 x 2 + 2 x 2 + 1 x 2) / 25 = 0.4.
    assert with_single.standard_error == pytest.approx(0.4**0.5)
    with pytest.raises(ValueError, match="repetitions"):
        stratified_mean_difference_ci([[0], [1]])
    with pytest.raises(ValueError, match="bound"):
        stratified_mean_difference_ci([[0, 1]], bound=0.0)


def test_single_differences_borrow_their_own_temperatures_noise_counted_once_in_the_degrees_of_freedom() -> None:
    # t0: (0, 0) and (0); t1: (0, 2), (1, 3), (1) and (1). N = 9, mean 8/9. The only variance estimates are
    # the two t1 cells' s^2 = 2 (1 df each); t0's is 0. t1's two single differences borrow t1's pooled
    # s^2 = 2 (never t0's 0), which is those two estimates, so each stands for 2 + 2 x 1/2 = 3 differences:
    # V = (3 x 2 + 3 x 2) / 81 = 12/81, SE 0.3849, and Satterthwaite's df = (6 + 6)^2 / (6^2 + 6^2) = 2.
    # (Pooling across temperatures, each single difference an independent term with the pooled df 3, gave
    # the same V by chance here but df 144 / 33.78 = 4.26.) t(0.975, 2) = 4.302653 (R: qt(0.975, 2)).
    interval = stratified_mean_difference_ci(
        [[0, 0], [0], [0, 2], [1, 3], [1], [1]], strata=["t0", "t0", "t1", "t1", "t1", "t1"]
    )
    assert interval.estimate == pytest.approx(8 / 9)
    assert (interval.standard_error, interval.df) == (pytest.approx(12**0.5 / 9), pytest.approx(2.0))
    assert interval.high - interval.estimate == pytest.approx(4.302653 * 12**0.5 / 9, rel=1e-6)


def test_a_temperature_without_a_repeated_cell_reads_its_own_spread_not_temperature_0s_zero() -> None:
    # t0: (1, 1), (1): no noise; t1: (0), (2), (4), each asked once. Borrowing the only repeated cell's
    # zero variance would give the point 1.5. t1's spread instead: s^2 = 4 on 2 df standing for its 3
    # differences; N = 6: V = 3 x 4 / 36 = 1/3, df 2.
    interval = stratified_mean_difference_ci([[1, 1], [1], [0], [2], [4]], strata=[0, 0, 1, 1, 1])
    assert interval.estimate == pytest.approx(1.5)
    assert (interval.standard_error, interval.df) == (pytest.approx(3**-0.5), pytest.approx(2.0))


def test_two_equal_differences_do_not_show_a_temperature_has_no_noise() -> None:
    # Two answers of a 1-5 scale agree by chance about one time in five at the shipped models' t1 noise.
    with pytest.raises(NoiseUnreadable, match="'t1' holds 2 equal"):
        stratified_mean_difference_ci([[0, 0], [0, 0], [1], [1]], strata=["t0", "t0", "t1", "t1"])
    with pytest.raises(ValueError, match="one label per group"):
        stratified_mean_difference_ci([[0, 0], [1]], strata=["t0"])
