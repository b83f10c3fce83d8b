"""Cronbach's alpha and its Feldt interval against psych::alpha (R)."""

from __future__ import annotations

import numpy as np
import pytest

from snap_bench.stats import UndefinedStatistic, cronbach_alpha, cronbach_alpha_batch, cronbach_alpha_ci

# 10 respondents x 4 items, written for this test.
ITEMS = [
    [4, 5, 4, 3],
    [2, 2, 3, 2],
    [5, 4, 5, 5],
    [3, 3, 2, 3],
    [1, 2, 2, 1],
    [4, 4, 3, 4],
    [2, 3, 3, 2],
    [5, 5, 4, 4],
    [3, 2, 3, 3],
    [4, 3, 4, 5],
]

# R 4.2.2, psych 2.2.9 (Debian r-cran-psych):
#
#   library(psych); options(digits = 15)
#   items <- matrix(c(4,5,4,3, 2,2,3,2, 5,4,5,5, 3,3,2,3, 1,2,2,1, 4,4,3,4, 2,3,3,2, 5,5,4,4,
#                     3,2,3,3, 4,3,4,5), ncol = 4, byrow = TRUE)
#   a <- alpha(items)
#   print(a$total$raw_alpha)
#   [1] 0.913685061653527
#   print(unlist(a$feldt[c("lower.ci", "alpha", "upper.ci")]))
#   lower.ci.raw_alpha    alpha.raw_alpha upper.ci.raw_alpha
#    0.772917862129970  0.913685061653527  0.975919629657789
#   print(unlist(alpha.ci(a$total$raw_alpha, 10, 4, p.val = 0.10)[c("lower.ci", "upper.ci")]))
#            lower.ci          upper.ci
#   0.805780040273795 0.970030832680080
PSYCH_RAW_ALPHA = 0.913685061653527
PSYCH_FELDT_95 = (0.772917862129970, 0.975919629657789)
PSYCH_FELDT_90 = (0.805780040273795, 0.970030832680080)


def test_alpha_matches_psych() -> None:
    assert cronbach_alpha(ITEMS) == pytest.approx(PSYCH_RAW_ALPHA, abs=1e-12)


def test_feldt_interval_matches_psych() -> None:
    assert cronbach_alpha_ci(ITEMS) == pytest.approx(PSYCH_FELDT_95, abs=1e-12)
    assert cronbach_alpha_ci(ITEMS, confidence=0.90) == pytest.approx(PSYCH_FELDT_90, abs=1e-12)


def test_alpha_from_the_textbook_formula() -> None:
    """k / (k - 1) * (1 - sum of item variances / variance of the total), Cronbach (1951)."""
    matrix = np.asarray(ITEMS, dtype=float)
    k = matrix.shape[1]
    expected = k / (k - 1) * (1 - matrix.var(axis=0, ddof=1).sum() / matrix.sum(axis=1).var(ddof=1))
    assert cronbach_alpha(ITEMS) == pytest.approx(expected, rel=1e-12)


def test_negatively_correlated_items_give_negative_alpha() -> None:
    scores = [[1, 5], [2, 4], [3, 3], [4, 1], [5, 2]]
    assert cronbach_alpha(scores) < 0


def test_batch_with_counts_equals_alpha_of_the_repeated_rows() -> None:
    counts = np.array([[1] * 10, [3, 0, 1, 0, 2, 0, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0, 5, 5]])
    matrix = np.asarray(ITEMS, dtype=float)
    expected = [cronbach_alpha(np.repeat(matrix, row, axis=0)) for row in counts]
    np.testing.assert_allclose(cronbach_alpha_batch(ITEMS, counts), expected, rtol=1e-12)


def test_constant_answers_are_undefined_with_a_reason() -> None:
    """A model answering 5 to every item under every condition has no total-score variance."""
    with pytest.raises(UndefinedStatistic) as caught:
        cronbach_alpha(np.full((8, 5), 5.0))
    assert caught.value.reason == "zero variance of the total score"
    with pytest.raises(UndefinedStatistic):
        cronbach_alpha_ci(np.full((8, 5), 5.0))
    assert np.isnan(cronbach_alpha_batch(np.full((8, 5), 5.0))).all()


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([1.0, 2.0, 3.0], "2-D"),
        ([[1.0, 2.0, 3.0]], "at least 2 rows"),
        ([[1.0], [2.0], [3.0]], "at least 2 columns"),
        ([[1.0, np.nan], [2.0, 3.0]], "NaN"),
    ],
)
def test_bad_scores_raise_value_error(scores: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cronbach_alpha(scores)  # type: ignore[arg-type]


def test_bad_confidence_raises_value_error() -> None:
    with pytest.raises(ValueError, match="confidence"):
        cronbach_alpha_ci(ITEMS, confidence=0.0)
