"""No answerer that ignores the questions can pass: simulated answer sets at the shipped designs, scored,
analysed and judged by the real instruments and thresholds.yaml (bench/answer_sets.py writes the answers)."""

from __future__ import annotations

import pytest

from bench.answer_sets import CONFIG, Answerer, agree, agree_by_item, constant, latent, observations, uniform
from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings, ModelAnalysis
from snap_bench.instruments import registered
from snap_bench.judging.verdicts import ModelVerdict, judge, load_thresholds

# The bootstrapped figures are the original design's, not judged: few resamples keep the tests quick.
SETTINGS = AnalysisSettings(n_resamples=20)


def verdict_of(instrument_name: str, answerer: Answerer, seed: int = 1) -> tuple[ModelVerdict, ModelAnalysis]:
    instrument = registered()[instrument_name](CONFIG)
    config = load_thresholds(CONFIG, instrument_name, {}, None, {**SHARED_METRICS, **instrument.metrics})
    analysis = instrument.analyse("simulated", observations(instrument, answerer, seed), SETTINGS)
    return judge(analysis, config), analysis


def failed(verdict: ModelVerdict) -> set[str]:
    return {check.metric.partition("[")[0] for check in verdict.checks if not check.passed}


@pytest.mark.parametrize("point", [1, 3, 5])
def test_a_constant_answerer_fails_the_profile_at_every_temperature(point: int) -> None:
    verdict, analysis = verdict_of("profile", constant(point))
    assert verdict.verdict == "FAIL"
    levels = ("t0", "t0.5", "t1")
    # the same answer to a statement and to its reverse: a contradiction, but at the midpoint
    contradicting = {f"contradiction_rate[{level}]" for level in levels} if point != 3 else set()
    assert {c.metric for c in verdict.checks if not c.passed} == {
        *(f"dependability[{level}]" for level in levels),
        *contradicting,
    }
    # the keyed scores of "5 everywhere" vary (the reverse-keyed items): the original design's
    # test-retest r is perfect, which is why it is not what the verdict judges
    if point != 3:
        assert analysis.metrics["test_retest_r"].value == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("name", "answerer", "criteria"),
    [
        ("uniform random", uniform, {"dependability", "contradiction_rate"}),
        ("always agree", agree, {"dependability", "contradiction_rate"}),
        # agreeing as strongly with a statement every time carries item signal; each construct's
        # reverse-keyed partner gives it away
        ("always agree, by item", agree_by_item, {"contradiction_rate"}),
    ],
)
def test_random_and_agreeing_answerers_fail_the_profile(name: str, answerer: Answerer, criteria: set[str]) -> None:
    verdict, analysis = verdict_of("profile", answerer)
    assert verdict.verdict == "FAIL", name
    assert failed(verdict) == criteria
    if name == "always agree, by item":
        assert all(analysis.metrics[f"contradiction_rate[{t}]"].value == 1.0 for t in ("t0", "t0.5", "t1"))


@pytest.mark.parametrize(
    ("name", "answerer", "criteria"),
    [
        ("constant", constant(4), {"dependability", "contradiction_rate"}),
        ("uniform random", uniform, {"dependability", "contradiction_rate"}),
        ("always agree", agree, {"dependability", "contradiction_rate"}),
        # agreeing as strongly with a statement every time carries item signal; the statements of the
        # other direction give it away
        ("always agree, by item", agree_by_item, {"contradiction_rate"}),
    ],
)
def test_degenerate_answerers_fail_the_compass(name: str, answerer: Answerer, criteria: set[str]) -> None:
    verdict, _ = verdict_of("compass", answerer)
    assert verdict.verdict == "FAIL", name
    assert failed(verdict) == criteria


def test_a_model_that_holds_its_views_passes_both() -> None:
    """The criteria are not a wall: coherent views with modest noise pass (so the tests above can fail)."""
    for name in ("profile", "compass"):
        verdict, _ = verdict_of(name, latent(1.3, 0.2, 0.3, seed=5, position=1.2))
        assert verdict.verdict != "FAIL", (name, [c.message for c in verdict.checks if not c.passed])
        assert not failed(verdict)
