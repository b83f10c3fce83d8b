"""A model's answers beside human norms: the trait score per occasion, its t interval, z and the percentile."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from snap_bench.instruments.questionnaire.design import ItemNorm, Norms, TraitNorm
from snap_bench.instruments.questionnaire.norms import against_norms, norms_lines

NORMS = Norms(
    source="a test's people",
    respondents=100,
    items={"A1": ItemNorm(2.0, 1.0, 100), "A2": ItemNorm(5.0, 1.0, 100)},
    traits={"agreeableness": TraitNorm(4.0, 0.5, 0.7, 100)},
)


def table(keyed_by_run: dict[int, tuple[float, float]]) -> pd.DataFrame:
    """Two items of one construct (A1 reverse-keyed on a 6-point scale), one occasion per run."""
    rows = []
    for run, (a1, a2) in keyed_by_run.items():
        for item, keyed in (("A1", a1), ("A2", a2)):
            score = 7 - keyed if item == "A1" else keyed
            rows.append(
                {
                    "item": item,
                    "construct": "agreeableness",
                    "keyed": keyed,
                    "score": score,
                    "paraphrase": "P1",
                    "system_prompt": "NEU",
                    "temperature": "t0",
                    "context": "C0",
                    "run": run,
                }
            )
    return pd.DataFrame(rows)


def test_the_trait_score_is_the_mean_over_occasions_with_a_t_interval() -> None:
    # occasions' trait scores: 5.0, 4.5, 5.5
    result = against_norms(table({1: (5.0, 5.0), 2: (4.0, 5.0), 3: (6.0, 5.0)}), NORMS, {"agreeableness": 0.4})
    trait = result["traits"]["agreeableness"]
    assert trait["model_mean"] == pytest.approx(5.0)
    half = stats.t.ppf(0.975, 2) * 0.5 / math.sqrt(3)  # the SD of (5.0, 4.5, 5.5) is 0.5
    assert trait["model_ci"] == pytest.approx([5.0 - half, 5.0 + half])
    assert trait["z"] == pytest.approx((5.0 - 4.0) / 0.5)
    assert trait["percentile"] == pytest.approx(100 * stats.norm.cdf(2.0))
    assert (trait["model_alpha"], trait["human_alpha"]) == (0.4, 0.7)
    # items compare raw answers with the people's raw means (A1 answered 7 - keyed)
    assert result["items"]["A1"]["model_mean"] == pytest.approx(2.0)
    assert result["respondents"] == 100
    lines = norms_lines(result)
    assert lines[0] == "against 100 people (a test's people):"
    assert "agreeableness: 5.00 [" in lines[1]
    assert "z +2.00, percentile 98" in lines[1]


def test_norms_without_item_figures_or_alpha_set_the_model_beside_the_trait_figures() -> None:
    trait_only = Norms("a manual", 100, {}, {"agreeableness": TraitNorm(4.0, 0.5, None, 100)})
    result = against_norms(table({1: (5.0, 5.0), 2: (4.0, 5.0), 3: (6.0, 5.0)}), trait_only, {"agreeableness": 0.4})
    assert (result["items"], result["traits"]["agreeableness"]["human_alpha"]) == ({}, None)
    assert result["traits"]["agreeableness"]["z"] == pytest.approx(2.0)
    assert norms_lines(result)[1].endswith("; alpha 0.40 vs not reported")


def test_no_scored_answer_is_no_figure_not_a_zero() -> None:
    empty = table({}).reindex(columns=["item", "construct", "keyed", "score", *("paraphrase", "system_prompt")])
    result = against_norms(empty.iloc[0:0], NORMS, {})
    trait = result["traits"]["agreeableness"]
    assert trait["model_mean"] is None
    assert trait["z"] is None
    assert trait["percentile"] is None
    assert norms_lines(result)[1] == "  agreeableness: no scored answers"
