"""Degenerate answerers (constant, uniformly random, always-agree) fail; a model that answers the items passes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from snap_bench.stats.degenerate import contradiction_rate, follows_questions, raw_item_signal
from snap_bench.stats.errors import UndefinedStatistic
from snap_bench.stats.g_study_design import GStudyDesign

INDEX = list(itertools.product(range(10), range(4), range(3)))  # item x system prompt x run
LABELS = {"item": [i for i, _, _ in INDEX], "prompt": [p for _, p, _ in INDEX], "run": [r for _, _, r in INDEX]}
DESIGN = GStudyDesign("item", ("prompt",), replicate="run")


def _check(raw: np.ndarray) -> bool:
    return follows_questions(raw_item_signal(raw, LABELS, DESIGN)).passed


@pytest.mark.parametrize("constant", [1, 2, 3, 4, 5])
def test_a_constant_answerer_fails(constant: int) -> None:
    signal = raw_item_signal(np.full(len(INDEX), float(constant)), LABELS, DESIGN)
    assert (signal.share, signal.p_value) == (0.0, 1.0)
    assert not follows_questions(signal).passed


def test_random_and_always_agree_answerers_fail_and_an_item_driven_model_passes() -> None:
    rng = np.random.default_rng(11)
    item_position = rng.integers(1, 6, 10)
    for _ in range(8):
        assert not _check(rng.integers(1, 6, len(INDEX)).astype(float))
        assert not _check(rng.integers(4, 6, len(INDEX)).astype(float))
        noisy = np.array([item_position[i] for i, _, _ in INDEX]) + rng.normal(0, 0.8, len(INDEX))
        assert _check(np.clip(np.round(noisy), 1, 5))


def test_contradiction_rate_counts_pairs_on_the_same_side() -> None:
    # Pairs: (5,4) both agree, (1,2) both disagree, (5,1) and (2,4) opposite, (3,5) midpoint, NaN left out.
    result = contradiction_rate([5, 1, 5, 2, 3, np.nan], [4, 2, 1, 4, 5, 3])
    assert (result.rate, result.n_pairs, result.n_left_out) == (0.4, 5, 1)
    assert result.ci_low < 0.4 < result.ci_high
    acquiescent = contradiction_rate(np.full(50, 5.0), np.full(50, 4.0))
    assert acquiescent.rate == 1.0
    signal = raw_item_signal(
        np.array([i % 5 + 1 for i, _, _ in INDEX], dtype=float) + 0.1 * (np.arange(len(INDEX)) % 3), LABELS, DESIGN
    )
    check = follows_questions(signal, acquiescent)
    assert not check.passed
    assert any("reverse" in reason for reason in check.reasons)
    with pytest.raises(UndefinedStatistic):
        contradiction_rate([np.nan], [1])


def test_random_pairs_contradict_about_a_third_of_the_time() -> None:
    """Two independent uniform answers on 1..5 fall on the same side with probability 2 * (2/5)^2 = 0.32."""
    rng = np.random.default_rng(3)
    result = contradiction_rate(rng.integers(1, 6, 4000), rng.integers(1, 6, 4000))
    assert result.ci_low < 0.32 < result.ci_high
