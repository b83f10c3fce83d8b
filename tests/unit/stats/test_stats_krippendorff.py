"""Krippendorff's alpha against the worked example of Krippendorff (2011)."""

from __future__ import annotations

import numpy as np
import pytest

from snap_bench.stats import KRIPPENDORFF_LEVELS, KrippendorffLevel, UndefinedStatistic, krippendorff_alpha

nan = np.nan

# Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability, section C ("Nominal data,
# any number of observers, missing data"): 4 observers A-D x 12 units, "." (missing) as NaN.
# Rows here are units, columns observers (the paper prints observers as rows).
PAPER_RELIABILITY_DATA = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],  # A
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],  # B
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],  # C
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],  # D
    ]
).T


@pytest.mark.parametrize(
    ("level", "published", "full_precision"),
    [
        # The paper prints alpha to three decimals; the full-precision values are those of the
        # independent `krippendorff` package (Castro 2017, PyPI krippendorff 0.9.0) on the same data,
        # computed outside this project: krippendorff.alpha(reliability_data=..., level_of_measurement=...).
        ("nominal", 0.743, 0.743421052631579),
        ("ordinal", 0.815, 0.8153875037548814),
        ("interval", 0.849, 0.8491071428571428),
        ("ratio", 0.797, 0.7974027747116121),
    ],
)
def test_krippendorff_2011_worked_example(level: KrippendorffLevel, published: float, full_precision: float) -> None:
    alpha = krippendorff_alpha(PAPER_RELIABILITY_DATA, level)
    assert round(alpha, 3) == published
    assert alpha == pytest.approx(full_precision, abs=1e-12)


def test_nominal_alpha_from_the_papers_coincidence_matrix() -> None:
    """Krippendorff (2011) section C tabulates the coincidences of the example (values 1..5):

        o = [[7, 4/3, 1/3, 1/3, 0], [4/3, 10, 4/3, 1/3, 0], [1/3, 4/3, 8, 1/3, 0],
             [1/3, 1/3, 1/3, 4, 0], [0, 0, 0, 0, 3]],  n_c = (9, 13, 10, 5, 3), n = 40

    and alpha_nominal = 1 - (n - 1) * sum_{c != k} o_ck / (n^2 - sum_c n_c^2) = 1 - 39 * 8 / 1216.
    """
    third = 1 / 3
    coincidences = np.array(
        [
            [7, 4 * third, third, third, 0],
            [4 * third, 10, 4 * third, third, 0],
            [third, 4 * third, 8, third, 0],
            [third, third, third, 4, 0],
            [0, 0, 0, 0, 3],
        ]
    )
    marginals = coincidences.sum(axis=1)
    n = marginals.sum()
    assert marginals == pytest.approx([9, 13, 10, 5, 3])
    off_diagonal = coincidences.sum() - np.trace(coincidences)
    by_hand = 1 - (n - 1) * off_diagonal / (n**2 - np.sum(marginals**2))
    assert krippendorff_alpha(PAPER_RELIABILITY_DATA, "nominal") == pytest.approx(by_hand, abs=1e-12)


def test_perfect_agreement_is_one_and_missing_singletons_are_dropped() -> None:
    ratings = np.array([[1, 1, nan], [2, 2, 2], [3, 3, 3], [4, nan, nan]])
    for level in KRIPPENDORFF_LEVELS:
        assert krippendorff_alpha(ratings, level) == pytest.approx(1.0)


def test_level_changes_the_answer_for_ordered_data() -> None:
    near_misses = [[1, 2], [2, 3], [3, 4], [4, 5], [5, 5], [1, 1]]
    assert krippendorff_alpha(near_misses, "interval") > krippendorff_alpha(near_misses, "nominal")


def test_no_variation_is_undefined() -> None:
    with pytest.raises(UndefinedStatistic, match="no variation") as caught:
        krippendorff_alpha(np.array([[5, 5], [5, 5], [5, nan]]))
    assert "same value" in caught.value.reason


def test_no_pairable_unit_is_undefined() -> None:
    with pytest.raises(UndefinedStatistic, match="pairable"):
        krippendorff_alpha(np.array([[1, nan], [nan, 2]]))


def test_bad_input_raises_value_error() -> None:
    with pytest.raises(ValueError, match="unknown level"):
        krippendorff_alpha([[1, 2], [2, 1]], "cardinal")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-negative"):
        krippendorff_alpha([[-1, 2], [2, 1]], "ratio")
    with pytest.raises(ValueError, match="at least 2 columns"):
        krippendorff_alpha([[1], [2]])
    with pytest.raises(ValueError, match="2-D"):
        krippendorff_alpha([1, 2, 3])
