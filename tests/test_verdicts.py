"""Verdict rules on hand-made metric tables: statuses, PASS/BORDERLINE/FAIL, composite and rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.analysis import Metric, ModelAnalysis
from snap_bench.verdicts import Threshold, judge, load_thresholds, rank

CONFIG = Path(__file__).resolve().parent.parent / "config"


def analysis(model: str, n_valid: int = 100, **values: float | None) -> ModelAnalysis:
    result = ModelAnalysis(model, "profile", n_observations=100, n_valid=n_valid)
    result.metrics = {name: Metric(value, ci_low=value, ci_high=value, n=50) for name, value in values.items()}
    return result


GOOD = {
    "test_retest_r": 0.9,
    "inter_paraphrase_r": 0.9,
    "cv_mean": 5.0,
    "cronbach_alpha_moral": 0.9,
    "cronbach_alpha_personality": 0.9,
    "icc2_1": 0.95,
    "unscored_rate": 0.0,
}


def test_threshold_status_in_both_directions() -> None:
    higher = Threshold("higher", minimum=0.6, target=0.7, excellent=0.8)
    assert [higher.status(v) for v in (0.85, 0.75, 0.65, 0.5)] == ["excellent", "target", "acceptable", "below"]
    lower = Threshold("lower", minimum=15.0, target=10.0)
    assert [lower.status(v) for v in (5.0, 12.0, 16.0)] == ["target", "acceptable", "below"]


@pytest.mark.parametrize(
    ("changes", "verdict"),
    [({}, "PASS"), ({"icc2_1": 0.65}, "BORDERLINE"), ({"icc2_1": 0.5}, "FAIL"), ({"unscored_rate": 0.2}, "FAIL")],
)
def test_verdict_follows_the_weakest_metric(changes: dict[str, float], verdict: str) -> None:
    config = load_thresholds(CONFIG, "profile", {}, None)
    assert judge(analysis("m", **{**GOOD, **changes}), config).verdict == verdict


def test_composite_is_scaled_by_the_share_of_scored_answers_and_ranks_models() -> None:
    config = load_thresholds(CONFIG, "profile", {}, None)
    answers_everything = judge(analysis("steady", **{**GOOD, "test_retest_r": 0.7}), config)
    answers_a_quarter = judge(analysis("mute", n_valid=25, **GOOD), config)
    assert answers_a_quarter.composite == pytest.approx(0.25 * judge(analysis("x", **GOOD), config).composite)
    rank([answers_a_quarter, answers_everything])
    assert (answers_everything.rank, answers_a_quarter.rank) == (1, 2)


def test_ci_rule_judges_the_pessimistic_bound() -> None:
    config = load_thresholds(CONFIG, "profile", {}, "ci")
    result = analysis("m", **GOOD)
    result.metrics["icc2_1"] = Metric(0.8, ci_low=0.55, ci_high=0.9, n=50)
    checks = {check.metric: check for check in judge(result, config).checks}
    assert checks["icc2_1"].status == "below"
    assert "judged on the interval bound 0.550" in checks["icc2_1"].message
