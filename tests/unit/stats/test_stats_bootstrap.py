"""Row bootstrap: agreement with scipy.stats.bootstrap, vectorized == loop, undefined resamples."""

from __future__ import annotations

from functools import partial

import numpy as np
import numpy.typing as npt
import pytest
from scipy import stats as scipy_stats

from snap_bench.stats import (
    BOOTSTRAP_METHODS,
    BootstrapMethod,
    UndefinedStatistic,
    bootstrap_ci,
    coefficient_of_variation,
    coefficient_of_variation_batch,
    cronbach_alpha,
    cronbach_alpha_batch,
    icc,
    icc_batch,
    mean_pairwise_r,
    mean_pairwise_r_batch,
)


def _likert_runs(n_cells: int, seed: int) -> npt.NDArray[np.float64]:
    """Cells x 3 runs of 1..5 answers: a per-cell true score plus run noise, rounded and clipped."""
    rng = np.random.default_rng(seed)
    true_scores = rng.normal(3.0, 1.0, size=(n_cells, 1))
    return np.clip(np.rint(true_scores + rng.normal(0.0, 0.6, size=(n_cells, 3))), 1, 5)


def _mean_difference(matrix: npt.NDArray[np.float64]) -> float:
    return float(np.mean(matrix[:, 0]) - np.mean(matrix[:, 1]))


@pytest.mark.parametrize("method", BOOTSTRAP_METHODS)
def test_same_resamples_same_interval_as_scipy_bootstrap(method: BootstrapMethod) -> None:
    """scipy.stats.bootstrap on the row indices draws rng.integers(0, n, (n_resamples, n)) exactly as
    bootstrap_ci does, so with the same seed both see the same resamples and must agree (SciPy 1.17,
    percentile, basic and BCa as in Efron & Tibshirani 1993)."""
    matrix = np.random.default_rng(3).normal(size=(40, 2)) * [1.0, 2.0]

    def on_indices(indices: npt.NDArray[np.intp], axis: int) -> npt.NDArray[np.float64]:
        rows = matrix[indices]
        return np.asarray(np.mean(rows[..., 0], axis=-1) - np.mean(rows[..., 1], axis=-1))

    reference = scipy_stats.bootstrap(
        (np.arange(40),),
        on_indices,
        n_resamples=2000,
        vectorized=True,
        method=method,
        confidence_level=0.9,
        rng=np.random.default_rng(11),
    )
    ours = bootstrap_ci(_mean_difference, matrix, n_resamples=2000, confidence=0.9, seed=11, method=method)
    assert ours.low == pytest.approx(reference.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(reference.confidence_interval.high, abs=1e-12)
    assert ours.estimate == pytest.approx(_mean_difference(matrix))
    assert (ours.n_resamples, ours.n_undefined, ours.method, ours.confidence) == (2000, 0, method, 0.9)


@pytest.mark.parametrize("method", BOOTSTRAP_METHODS)
@pytest.mark.parametrize(
    ("single", "batched"),
    [
        (lambda m: icc(m, "2,1").value, partial(icc_batch, form="2,1")),
        (lambda m: mean_pairwise_r(m).value, mean_pairwise_r_batch),
        (cronbach_alpha, cronbach_alpha_batch),
        (lambda m: coefficient_of_variation(m).mean, coefficient_of_variation_batch),
    ],
    ids=["icc2_1", "mean_pairwise_r", "cronbach_alpha", "cv_mean"],
)
def test_vectorized_equals_loop(single: object, batched: object, method: BootstrapMethod) -> None:
    matrix = _likert_runs(60, seed=4)
    loop = bootstrap_ci(single, matrix, n_resamples=200, seed=9, method=method)  # type: ignore[arg-type]
    fast = bootstrap_ci(batched, matrix, n_resamples=200, seed=9, method=method, vectorized=True)  # type: ignore[arg-type]
    assert fast.estimate == pytest.approx(loop.estimate, abs=1e-12)
    assert (fast.low, fast.high) == pytest.approx((loop.low, loop.high), abs=1e-12)


def test_seeded_runs_repeat_and_generators_are_accepted() -> None:
    matrix = _likert_runs(50, seed=1)
    statistic = partial(icc_batch, form="2,1")
    first = bootstrap_ci(statistic, matrix, seed=5, vectorized=True)
    again = bootstrap_ci(statistic, matrix, seed=5, vectorized=True)
    from_generator = bootstrap_ci(statistic, matrix, seed=np.random.default_rng(5), vectorized=True)
    assert first == again == from_generator
    assert first.low < first.estimate < first.high


def test_percentile_interval_covers_the_estimate_of_a_reliable_matrix() -> None:
    matrix = _likert_runs(720, seed=2)
    result = bootstrap_ci(partial(icc_batch, form="2,1"), matrix, seed=0, vectorized=True)
    assert result.low < icc(matrix, "2,1").value < result.high
    assert result.high - result.low < 0.1


def _mostly_constant(n_cells: int, n_varying: int) -> npt.NDArray[np.float64]:
    """Every cell answered 5 in all runs except ``n_varying`` cells that vary across runs."""
    matrix = np.full((n_cells, 3), 5.0)
    matrix[:n_varying] = [[1.0, 2.0, 4.0], [2.0, 3.0, 1.0], [4.0, 4.0, 2.0]][:n_varying]
    return matrix


def test_rare_undefined_resamples_are_left_out_and_counted() -> None:
    """With 3 varying cells of 30, P(a resample draws none of them) = (27/30)^30 = 4.2%."""
    matrix = _mostly_constant(30, 3)
    result = bootstrap_ci(
        mean_pairwise_r_batch, matrix, n_resamples=2000, seed=1, vectorized=True, max_undefined_share=0.2
    )
    assert 0 < result.n_undefined < 0.1 * 2000
    looped = bootstrap_ci(lambda m: mean_pairwise_r(m).value, matrix, n_resamples=2000, seed=1, max_undefined_share=0.2)
    assert looped.n_undefined == result.n_undefined
    assert (looped.low, looped.high) == pytest.approx((result.low, result.high), abs=1e-12)


def test_too_many_undefined_resamples_raise() -> None:
    """With 1 varying cell of 30, P(undefined) = (29/30)^30 = 36%: over the 5% default limit."""
    matrix = _mostly_constant(30, 1)
    with pytest.raises(UndefinedStatistic, match="undefined on") as caught:
        bootstrap_ci(mean_pairwise_r_batch, matrix, seed=1, vectorized=True)
    assert "resamples" in caught.value.reason


def test_undefined_on_the_full_data_raises() -> None:
    constant = np.full((10, 3), 5.0)
    with pytest.raises(UndefinedStatistic):
        bootstrap_ci(lambda m: icc(m).value, constant, seed=0)
    with pytest.raises(UndefinedStatistic, match="full data"):
        bootstrap_ci(partial(icc_batch, form="2,1"), constant, seed=0, vectorized=True)


def test_bca_needs_a_defined_jackknife() -> None:
    def only_on_full_size(matrix: npt.NDArray[np.float64]) -> float:
        if matrix.shape[0] < 8:
            raise UndefinedStatistic("toy statistic", "needs 8 rows")
        return 1.0

    assert bootstrap_ci(only_on_full_size, np.ones((8, 2)), n_resamples=20, seed=0).low == 1.0
    with pytest.raises(UndefinedStatistic, match="left out"):
        bootstrap_ci(only_on_full_size, np.arange(16.0).reshape(8, 2), n_resamples=20, seed=0, method="bca")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 2.5}, "n_resamples"),
        ({"confidence": 1.5}, "confidence"),
        ({"method": "studentized"}, "unknown bootstrap method"),
        ({"max_undefined_share": 1.0}, "max_undefined_share"),
        ({"method": "bca", "data": np.ones((2, 2))}, "at least 3 rows"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"data": np.ones((5, 2)), **kwargs}
    with pytest.raises(ValueError, match=message):
        bootstrap_ci(_mean_difference, **arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize(("data", "message"), [(np.ones(5), "2-D"), (np.ones((1, 3)), "at least 2 rows")])
def test_bad_data_raise_value_error(data: npt.NDArray[np.float64], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_ci(_mean_difference, data)


def test_vectorized_statistic_must_return_one_value_per_resample() -> None:
    with pytest.raises(ValueError, match="one value per row of counts"):
        bootstrap_ci(lambda data, counts: np.zeros(3), np.ones((5, 2)), vectorized=True)
