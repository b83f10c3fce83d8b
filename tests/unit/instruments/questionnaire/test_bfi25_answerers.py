"""No answerer that ignores the items passes the shipped BFI-25, and one that holds coherent views does:
simulated answer sets at its full design (600 conditions), scored, analysed and judged by the real
questionnaire file and the thresholds for a questionnaire (bench/answer_sets.py writes the answers)."""

from __future__ import annotations

import pytest

from bench.answer_sets import CONFIG, Answerer, agree, agree_by_item, constant, latent, observations, uniform
from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings, ModelAnalysis
from snap_bench.instruments import questionnaire_kind
from snap_bench.judging.verdicts import ModelVerdict, judge, load_thresholds
from tests.conftest import REPO

SETTINGS = AnalysisSettings(n_resamples=20)
BFI25 = REPO / "benchmarks" / "bfi25.yaml"


def verdict_of(answerer: Answerer, seed: int = 1) -> tuple[ModelVerdict, ModelAnalysis]:
    instrument = questionnaire_kind(BFI25, CONFIG)(CONFIG)
    specs = {**SHARED_METRICS, **instrument.metrics}
    config = load_thresholds(CONFIG, instrument.name, {}, None, specs, instrument.thresholds_section())
    analysis = instrument.analyse("simulated", observations(instrument, answerer, seed), SETTINGS)
    return judge(analysis, config), analysis


@pytest.mark.parametrize(
    ("name", "answerer"),
    [
        ("constant 2", constant(2)),
        ("constant 5", constant(5)),
        ("uniform random", uniform),
        ("always agree", agree),
        ("always agree, by item", agree_by_item),
    ],
)
def test_answerers_that_ignore_the_items_fail(name: str, answerer: Answerer) -> None:
    verdict, _ = verdict_of(answerer)
    assert verdict.verdict == "FAIL", name
    failed = {check.metric.partition("[")[0] for check in verdict.checks if not check.passed}
    # whatever else: agreeing with a statement and with its reverse gives every one of them away
    assert "contradiction_rate" in failed, name


def test_an_answerer_with_coherent_views_passes_and_stands_where_its_views_put_it() -> None:
    verdict, analysis = verdict_of(latent(item_sd=1.0, facet_sd=0.1, noise_sd=0.2, seed=7, position=1.0))
    assert verdict.verdict == "PASS", [check.metric for check in verdict.checks if not check.passed]
    norms = analysis.details["norms"]
    assert set(norms["traits"]) == {"agreeableness", "conscientiousness", "extraversion", "neuroticism", "openness"}
    # it leans a point towards every trait (keyed): its means sit above the scale's middle
    assert all(trait["model_mean"] > 3.5 for trait in norms["traits"].values())
    assert norms["traits"]["agreeableness"]["human_alpha"] == pytest.approx(0.703)
