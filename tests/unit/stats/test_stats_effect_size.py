"""Eta squared per factor against R's sequential (type I) ANOVA and the balanced-design formula."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from snap_bench.stats import RESIDUAL, UndefinedStatistic, eta_squared

# An unbalanced two-factor table written for this test.
SCORES = [1, 2, 2, 3, 5, 4, 4, 5, 5, 3, 2, 3, 4, 1, 5, 4]
FACTOR_A = list("xxxxyyyyyyzzzzzy")
FACTOR_B = list("pqpqqqpqqppqqpqq")

# R 4.2.2:
#
#   options(digits = 15)
#   y <- c(1, 2, 2, 3, 5, 4, 4, 5, 5, 3, 2, 3, 4, 1, 5, 4)
#   a <- factor(c("x","x","x","x","y","y","y","y","y","y","z","z","z","z","z","y"))
#   b <- factor(c("p","q","p","q","q","q","p","q","q","p","p","q","q","p","q","q"))
#   print(anova(lm(y ~ a + b)))
#             Df          Sum Sq        Mean Sq  F value    Pr(>F)
#   a          2 14.008928571429 7.004464285714 12.22772 0.0012721 **
#   b          1  8.554555680540 8.554555680540 14.93373 0.0022505 **
#   Residuals 12  6.874015748031 0.572834645669
#   print(anova(lm(y ~ b + a)))
#             Df          Sum Sq         Mean Sq  F value     Pr(>F)
#   b          1 12.604166666667 12.604166666667 22.00315 0.00052253 ***
#   a          2  9.959317585302  4.979658792651  8.69301 0.00463706 **
#   Residuals 12  6.874015748031  0.572834645669
#
# SS_total = sum((y - mean(y))^2) = 29.4375.
SS_TOTAL = 29.4375
R_A_THEN_B = {"a": 14.008928571429, "b": 8.554555680540, RESIDUAL: 6.874015748031}
R_B_THEN_A = {"b": 12.604166666667, "a": 9.959317585302, RESIDUAL: 6.874015748031}


def test_unbalanced_matches_r_sequential_sums_of_squares() -> None:
    a_then_b = eta_squared(SCORES, {"a": FACTOR_A, "b": FACTOR_B})
    b_then_a = eta_squared(SCORES, {"b": FACTOR_B, "a": FACTOR_A})
    assert list(a_then_b) == ["a", "b", RESIDUAL]
    assert list(b_then_a) == ["b", "a", RESIDUAL]
    for name, sum_of_squares in R_A_THEN_B.items():
        assert a_then_b[name] == pytest.approx(sum_of_squares / SS_TOTAL, abs=1e-11)
    for name, sum_of_squares in R_B_THEN_A.items():
        assert b_then_a[name] == pytest.approx(sum_of_squares / SS_TOTAL, abs=1e-11)


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_parts_and_residual_add_up_to_the_total(order: tuple[str, str]) -> None:
    factors = {"a": FACTOR_A, "b": FACTOR_B}
    shares = eta_squared(SCORES, {name: factors[name] for name in order})
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(share >= 0 for share in shares.values())


def _balanced_design() -> tuple[np.ndarray, dict[str, list[str]]]:
    """3 system prompts x 2 temperatures x 2 paraphrases x 3 runs, fully crossed, seeded noise."""
    rng = np.random.default_rng(2024)
    cells = list(itertools.product(["NEU", "DIR", "PER"], ["0", "1"], ["P1", "P2"], range(3)))
    prompt_effect = {"NEU": 0.0, "DIR": 1.0, "PER": -0.5}
    temperature_effect = {"0": 0.0, "1": 0.3}
    scores = np.array([3 + prompt_effect[p] + temperature_effect[t] for p, t, _, _ in cells])
    scores = scores + rng.normal(0.0, 0.5, size=scores.size)
    factors = {
        "system_prompt": [p for p, _, _, _ in cells],
        "temperature": [t for _, t, _, _ in cells],
        "paraphrase": [q for _, _, q, _ in cells],
    }
    return scores, factors


def test_balanced_design_matches_the_group_means_formula_in_any_order() -> None:
    """Balanced: SS_f = sum over levels of n_level * (level mean - grand mean)^2 (orthogonal factors)."""
    scores, factors = _balanced_design()
    total = np.sum((scores - scores.mean()) ** 2)
    shares = eta_squared(scores, factors)
    reversed_shares = eta_squared(scores, dict(reversed(factors.items())))
    for name, labels in factors.items():
        levels = np.asarray(labels)
        by_hand = sum(
            np.sum(levels == level) * (scores[levels == level].mean() - scores.mean()) ** 2 for level in set(labels)
        )
        assert shares[name] == pytest.approx(by_hand / total, abs=1e-12)
        assert reversed_shares[name] == pytest.approx(shares[name], abs=1e-12)
    assert sum(shares.values()) == pytest.approx(1.0, abs=1e-12)


def test_a_factor_without_effect_gets_zero() -> None:
    """Both levels of "order" see exactly the same scores, so its sum of squares is 0."""
    scores = [1, 2, 4, 5, 1, 2, 4, 5]
    factors = {"item": ["a", "a", "b", "b", "a", "a", "b", "b"], "order": ["u"] * 4 + ["v"] * 4}
    shares = eta_squared(scores, factors)
    assert shares["order"] == pytest.approx(0.0, abs=1e-15)
    assert shares["item"] + shares[RESIDUAL] == pytest.approx(1.0)


def test_a_factor_without_effect_in_noise_gets_almost_nothing() -> None:
    rng = np.random.default_rng(5)
    noise_factor = rng.integers(0, 4, size=2000).tolist()
    signal = rng.integers(0, 3, size=2000)
    scores = signal * 1.0 + rng.normal(0.0, 1.0, size=2000)
    shares = eta_squared(scores, {"signal": signal.tolist(), "noise": noise_factor})
    assert shares["noise"] < 0.005
    assert shares["signal"] > 0.3


def test_one_level_and_aliased_factors_get_zero() -> None:
    shares = eta_squared(SCORES, {"a": FACTOR_A, "constant": ["c"] * 16, "a_again": FACTOR_A})
    assert shares["constant"] == pytest.approx(0.0, abs=1e-12)
    assert shares["a_again"] == pytest.approx(0.0, abs=1e-12)
    assert shares["a"] == pytest.approx(R_A_THEN_B["a"] / SS_TOTAL, abs=1e-11)


def test_constant_scores_are_undefined() -> None:
    with pytest.raises(UndefinedStatistic, match="zero variance") as caught:
        eta_squared([5, 5, 5, 5], {"a": ["x", "x", "y", "y"]})
    assert caught.value.reason == "zero variance: every score is identical"


@pytest.mark.parametrize(
    ("scores", "factors", "message"),
    [
        ([[1, 2], [3, 4]], {"a": ["x", "y"]}, "1-D"),
        ([1], {"a": ["x"]}, "at least 2"),
        ([1, np.nan], {"a": ["x", "y"]}, "NaN"),
        ([1, 2], {}, "at least one factor"),
        ([1, 2], {"a": ["x"]}, "1 labels for 2 scores"),
        ([1, 2], {RESIDUAL: ["x", "y"]}, "may not be called"),
        ([1, 2], {"a": [["x"], ["y"]]}, "unhashable"),
    ],
)
def test_bad_input_raises_value_error(scores: object, factors: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        eta_squared(scores, factors)  # type: ignore[arg-type]
