"""Verdict rules on hand-made metric tables: statuses, PASS/BORDERLINE/FAIL, composite and rank."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import Metric, ModelAnalysis
from snap_bench.design.config import ConfigFiles
from snap_bench.instruments import ProfileInstrument
from snap_bench.judging.verdicts import INSUFFICIENT, Threshold, judge, load_thresholds, rank, to_json
from tests.conftest import SHIPPED

PROFILE_SPECS = {**SHARED_METRICS, **ProfileInstrument.metrics}

CONFIG = SHIPPED


def analysis(model: str, n_valid: int = 100, **values: float | None) -> ModelAnalysis:
    result = ModelAnalysis(model, "profile", n_observations=100, n_valid=n_valid)
    result.metrics = {
        name: Metric(value, ci_low=value, ci_high=value, n=50)
        if value is not None
        else Metric(None, n=50, undefined="x")
        for name, value in values.items()
    }
    return result


GOOD = {
    "dependability[t0]": 0.9,
    "dependability[t0.5]": 0.85,
    "dependability[t1]": 0.82,
    "unscored_rate": 0.0,
    # the original design's figures: reported, never judged
    "test_retest_r": 0.1,
    "icc2_1": 0.1,
    "cv_mean": 50.0,
    "cronbach_alpha_moral": -0.3,
}


def test_threshold_status_in_both_directions() -> None:
    higher = Threshold("higher", minimum=0.6, target=0.7, excellent=0.8)
    assert [higher.status(v) for v in (0.85, 0.75, 0.65, 0.5)] == ["excellent", "target", "acceptable", "below"]
    lower = Threshold("lower", minimum=15.0, target=10.0)
    assert [lower.status(v) for v in (5.0, 12.0, 16.0)] == ["target", "acceptable", "below"]


@pytest.mark.parametrize(
    ("changes", "verdict"),
    [
        ({}, "PASS"),
        ({"dependability[t1]": 0.65}, "BORDERLINE"),
        ({"dependability[t0.5]": 0.5}, "FAIL"),
        ({"unscored_rate": 0.2}, "FAIL"),
        ({"dependability[t1]": None}, "BORDERLINE"),  # a judged figure that cannot be computed
    ],
)
def test_verdict_is_the_worst_temperature(changes: dict[str, float | None], verdict: str) -> None:
    config = load_thresholds(CONFIG, "profile", {}, None, PROFILE_SPECS)
    assert judge(analysis("m", **{**GOOD, **changes}), config).verdict == verdict


def test_every_temperature_is_a_check_of_its_own_and_the_original_figures_are_not_judged() -> None:
    config = load_thresholds(CONFIG, "profile", {}, None, PROFILE_SPECS)
    checks = {check.metric for check in judge(analysis("m", **GOOD), config).checks}
    assert checks == {"dependability[t0]", "dependability[t0.5]", "dependability[t1]", "unscored_rate"}


def test_the_judged_temperatures_come_from_the_config(tmp_path: Path) -> None:
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    text = (CONFIG.packaged / "thresholds.yaml").read_text(encoding="utf-8")
    (config_dir / "thresholds.yaml").write_text(text.replace("temperatures: all", "temperatures: [0.0, 2.0]", 1))
    config = load_thresholds(ConfigFiles(config_dir), "profile", {}, None, PROFILE_SPECS)
    result = judge(analysis("m", **{**GOOD, "dependability[t1]": 0.1}), config)
    statuses = {check.metric: check.status for check in result.checks}
    # t1 is not judged; t2 was asked for but never answered: insufficient data, never a PASS
    assert statuses == {"dependability[t0]": "excellent", "dependability[t2]": INSUFFICIENT, "unscored_rate": "target"}
    assert result.verdict == "FAIL"


def test_a_figure_resting_on_a_minority_of_its_data_is_insufficient_never_pass() -> None:
    config = load_thresholds(CONFIG, "profile", {}, None, PROFILE_SPECS)
    result = analysis("m", **GOOD)
    result.metrics["dependability[t0]"] = Metric(0.95, 0.9, 0.99, n=47, n_left_out=493)
    verdict = judge(result, config)
    check = next(check for check in verdict.checks if check.metric == "dependability[t0]")
    assert check.status == INSUFFICIENT
    assert not check.passed
    assert "47 of 540" in check.message
    assert verdict.verdict == "FAIL"
    assert to_json(verdict, result)["metrics"]["dependability[t0]"]["coverage"] == pytest.approx(47 / 540)


def test_composite_is_scaled_by_the_share_of_scored_answers_and_ranks_models() -> None:
    config = load_thresholds(CONFIG, "profile", {}, None, PROFILE_SPECS)
    answers_everything = judge(analysis("steady", **{**GOOD, "dependability[t0]": 0.7}), config)
    answers_a_quarter = judge(analysis("mute", n_valid=25, **GOOD), config)
    assert answers_a_quarter.composite == pytest.approx(0.25 * judge(analysis("x", **GOOD), config).composite)
    rank([answers_a_quarter, answers_everything])
    assert (answers_everything.rank, answers_a_quarter.rank) == (1, 2)


def test_ranks_whose_composite_intervals_overlap_are_ties() -> None:
    config = load_thresholds(CONFIG, "profile", {}, None, PROFILE_SPECS)
    models = []
    for name, value, half_width in (("a", 0.90, 0.05), ("b", 0.86, 0.05), ("c", 0.60, 0.02)):
        result = analysis(name, **GOOD)
        for level in ("t0", "t0.5", "t1"):
            result.metrics[f"dependability[{level}]"] = Metric(value, value - half_width, value + half_width, n=540)
        models.append(judge(result, config))
    rank(models)
    a, b, c = models
    assert a.composite_ci == pytest.approx((0.85, 0.95))
    assert (a.rank, b.rank, c.rank) == (1, 2, 3)
    assert (a.tied_with, b.tied_with, c.tied_with) == (["b"], ["a"], [])


def test_ci_rule_judges_the_pessimistic_bound() -> None:
    config = load_thresholds(CONFIG, "profile", {}, "ci", PROFILE_SPECS)
    result = analysis("m", **GOOD)
    result.metrics["dependability[t0]"] = Metric(0.8, ci_low=0.55, ci_high=0.9, n=540)
    checks = {check.metric: check for check in judge(result, config).checks}
    assert checks["dependability[t0]"].status == "below"
    assert "judged on the interval bound 0.550" in checks["dependability[t0]"].message


def test_a_model_asked_at_its_providers_default_is_judged_at_that_level(tmp_path: Path) -> None:
    """A model that takes no temperature has one level, tdefault: judged like any other level, whether the
    thresholds judge every temperature or list some."""
    default_only = {"dependability[tdefault]": 0.9, "unscored_rate": 0.0}
    for listed in ("all", "[0.0, 1.0]"):
        config_dir = tmp_path / listed.strip("[]").replace(", ", "-")
        config_dir.mkdir()
        text = (CONFIG.packaged / "thresholds.yaml").read_text(encoding="utf-8")
        (config_dir / "thresholds.yaml").write_text(text.replace("temperatures: all", f"temperatures: {listed}", 1))
        result = judge(
            analysis("m", **default_only), load_thresholds(ConfigFiles(config_dir), "profile", {}, None, PROFILE_SPECS)
        )
        assert {check.metric for check in result.checks} == {"dependability[tdefault]", "unscored_rate"}
        assert result.verdict == "PASS"
