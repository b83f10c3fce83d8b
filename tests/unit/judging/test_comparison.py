"""The upgrade gate's comparisons, on the committed baseline files and on small hand-made cases (the whole shipped
designs judged against each other with every refit: tests/session/test_gate_simulations.py)."""

from __future__ import annotations

import dataclasses
import json
from functools import cache

import numpy as np
import pytest

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.judging.baseline import BaselineSpec, read_baseline_file
from snap_bench.judging.comparison import NOT_COMPARED, Comparison, compare_with_baseline
from snap_bench.judging.exit_status import BenchExit, ExitFindings, decide
from snap_bench.judging.verdicts import ThresholdConfig, load_thresholds
from snap_bench.observations.observation import Observation
from snap_bench.stats.paired import cluster_bootstrap_ci, newcombe_paired_ci
from snap_bench.stats.variant_effect import corrected_spread_batch, variant_sd_batch
from tests.conftest import REPO, SHIPPED, shipped_instruments

SETTINGS = AnalysisSettings(n_resamples=300)


@cache
def thresholds(instrument: str) -> ThresholdConfig:
    kind = shipped_instruments()[instrument]
    specs = {**SHARED_METRICS, **kind.metrics}
    return load_thresholds(SHIPPED, instrument, {}, None, specs, kind.thresholds_section())


@cache
def shipped(model: str) -> tuple[Observation, ...]:
    path = REPO / "baselines" / f"{model}.json"
    return read_baseline_file(path, json.loads(path.read_text(encoding="utf-8"))).observations


def renamed(observations: tuple[Observation, ...] | list[Observation], model: str) -> list[Observation]:
    return [dataclasses.replace(o, model=model) for o in observations]


def gate(
    new: list[Observation],
    old: list[Observation],
    only: dict[str, tuple[str, ...]] | None = None,
    at: tuple[float, ...] | None = None,
) -> dict[str, Comparison]:
    """Every judged metric compared; with ``only``, just the named metrics of the named instruments (each metric's
    comparison is computed on its own, so a test that reads two figures need not pay for the refits of all), and
    with ``at``, a per-temperature metric at those temperatures only."""

    def judged(instrument: str) -> ThresholdConfig:
        config = thresholds(instrument)
        if at is not None:
            config = dataclasses.replace(config, temperatures=at)
        if only is None:
            return config
        kept = only.get(instrument, ())
        return dataclasses.replace(
            config,
            metrics={name: t for name, t in config.metrics.items() if name in kept},
            non_inferiority={name: m for name, m in config.non_inferiority.items() if name in kept},
        )

    comparisons = compare_with_baseline([*new, *old], BaselineSpec("old"), shipped_instruments(), SETTINGS, judged)
    return {f"{c.instrument}.{c.metric}": c for c in comparisons}


def test_newcombe_paired_interval_narrows_with_agreeing_pairs() -> None:
    # 44 pairs, 21 events on the first side and 14 on the second: the difference is 7/44 either way
    estimate, low, high = newcombe_paired_ci(12, 9, 2, 21)
    assert estimate == pytest.approx(7 / 44)
    assert low < estimate < high
    # the same margins with no pair having the event on both sides: negatively correlated, wider
    _, wide_low, wide_high = newcombe_paired_ci(0, 21, 14, 9)
    assert high - low < wide_high - wide_low
    # a mirror image: the interval of (second - first) is the negated interval
    mirrored = newcombe_paired_ci(12, 2, 9, 21)
    assert mirrored == pytest.approx((-estimate, -high, -low))


def test_newcombe_interval_of_identical_sides_is_tight_around_zero() -> None:
    estimate, low, high = newcombe_paired_ci(30, 0, 0, 470)
    assert estimate == 0.0
    assert -0.01 < low <= 0.0 <= high < 0.01


def test_the_cluster_bootstrap_resamples_items_not_cells() -> None:
    # Ten items of 20 identical cells each: only the ten items are independent, so the interval of the
    # mean must be as wide as with ten rows, not two hundred.
    rng = np.random.default_rng(3)
    item_values = rng.normal(size=10)
    matrix = np.repeat(item_values, 20)[:, None]
    clusters = np.repeat(np.arange(10), 20)

    def mean(data: np.ndarray, counts: np.ndarray) -> np.ndarray:
        result: np.ndarray = counts @ data[:, 0] / counts.sum(axis=1)
        return result

    by_item = cluster_bootstrap_ci(mean, matrix, clusters, n_resamples=500, seed=1)
    by_cell = cluster_bootstrap_ci(mean, matrix, np.arange(200), n_resamples=500, seed=1)
    assert (by_item.high - by_item.low) > 3 * (by_cell.high - by_cell.low)


def test_the_noise_corrected_spread_sees_through_input_noise() -> None:
    rng = np.random.default_rng(5)
    ones = np.ones((1, 50))
    flat, moved, observed = [], [], []
    for _ in range(40):
        inputs = rng.uniform(0, 0.4, size=(50, 1))
        flat.append(corrected_spread_batch((rng.random((50, 16)) < inputs).astype(float), ones)[0])
        effects = np.where(np.arange(16) < 8, 0.0, 0.2)[None, :]
        errors = (rng.random((50, 16)) < inputs + effects).astype(float)
        moved.append(corrected_spread_batch(errors, ones)[0])
        observed.append(np.ptp(errors.mean(axis=0)))
    # no variant effect: the observed max-min of 16 accuracies on 50 inputs is about 0.19; net of noise ~0
    assert np.mean(flat) < 0.05
    # two groups of variants 0.2 apart: found, with less of the noise than the observed max-min carries
    assert 0.15 < np.mean(moved) < np.mean(observed)
    assert variant_sd_batch(np.zeros((5, 4)), np.ones((1, 5)))[0] == 0.0


def test_an_unchanged_model_passes_every_check_of_every_instrument() -> None:
    model = shipped("qwen2.5-coder-1.5b")
    comparisons = gate(renamed(model, "new"), renamed(model, "old"))
    assert {name.split(".")[0] for name in comparisons} == {"profile", "compass", "perturbation", "bfi25"}
    # every judged metric of every instrument is compared; a per-temperature one at each temperature
    temperatures = {"profile": 3, "compass": 2, "perturbation": 1, "bfi25": 2}
    for instrument in temperatures:
        for metric in thresholds(instrument).metrics:
            members = [name for name in comparisons if name.startswith(f"{instrument}.{metric}[")]
            assert f"{instrument}.{metric}" in comparisons or len(members) == temperatures[instrument], metric
    for name, comparison in comparisons.items():
        assert comparison.outcome == "non-inferior", comparison.message
        assert comparison.difference == 0.0, name
        # every designed unit is compared, but for rows an unscored answer leaves incomplete (one in the compass)
        assert 0.99 * comparison.designed <= comparison.compared <= comparison.designed, name
        if comparison.metric == "unscored_rate":
            assert comparison.compared == comparison.designed


def test_a_narrowed_run_says_what_it_did_not_cover() -> None:
    model = shipped("qwen2.5-coder-1.5b")
    narrowed = [o for o in model if o.instrument != "profile" or o.item in {"M01", "M02", "P01", "P03"}]
    only = {"profile": ("unscored_rate",), "compass": ("unscored_rate",)}
    comparisons = gate(renamed(narrowed, "new"), renamed(model, "old"), only)
    unscored = comparisons["profile.unscored_rate"]
    # 2 moral items (216 conditions each) and 2 personality items (108 each) of the 2,268
    assert (unscored.compared, unscored.designed) == (648, 2268)
    assert "coverage 648/2268 conditions" in unscored.message
    assert comparisons["compass.unscored_rate"].compared == comparisons["compass.unscored_rate"].designed


def test_a_metric_without_a_margin_or_a_shared_condition_is_not_compared() -> None:
    model = shipped("qwen2.5-coder-1.5b")
    profile_only = [o for o in model if o.instrument == "profile"]
    compass_only = [o for o in model if o.instrument == "compass"]
    comparisons = gate(renamed(profile_only, "new"), renamed(compass_only, "old"))
    missing = comparisons["profile.test_retest_r"]
    assert missing.outcome == NOT_COMPARED
    assert not missing.regressed
    assert missing.message.startswith("not compared: the baseline has no observations here")

    def no_margin(instrument: str) -> ThresholdConfig:
        config = thresholds(instrument)
        return dataclasses.replace(config, non_inferiority={})

    other = [o for o in shipped("smollm2-135m") if o.instrument == "profile"]
    comparisons_without = compare_with_baseline(
        [*renamed(profile_only, "new"), *renamed(other, "old")],
        BaselineSpec("old"),
        shipped_instruments(),
        SETTINGS,
        no_margin,
    )
    assert all(c.outcome == NOT_COMPARED for c in comparisons_without)
    assert "add profile.non_inferiority.dependability to thresholds.yaml" in next(
        c.reason for c in comparisons_without if c.metric == "dependability[t0]"
    )


def test_a_gate_with_a_check_not_compared_is_incomplete_unless_a_check_failed() -> None:
    incomplete = decide(ExitFindings(not_compared=["a-vs-b-profile-icc2_1"]))
    assert incomplete.code == BenchExit.NOT_MEASURED
    assert "incomplete: 1 comparison(s) not compared" in incomplete.reason
    failed = decide(ExitFindings(not_compared=["x"], failed_comparisons=["y"]))
    assert failed.code == BenchExit.CHECKS_FAILED
    assert "1 baseline comparison(s) failed" in failed.reason
    assert "incomplete" in failed.reason


def test_identical_answers_pass_even_a_metric_undefined_on_both_sides() -> None:
    # smollm2 leaves no occasion complete for the alphas: against its own baseline file they are undefined
    # on both sides, yet nothing changed, so `make gate` passes; a changed answer makes them not compared.
    model = shipped("smollm2-135m")
    same = gate(renamed(model, "new"), renamed(model, "old"))
    alpha = same["profile.cronbach_alpha_moral"]
    assert alpha.outcome == "non-inferior"
    assert alpha.message.startswith("non-inferior: identical answers to all 2268 conditions")
    assert all(c.outcome == "non-inferior" for c in same.values())
    changed = renamed(model, "new")
    first = next(index for index, o in enumerate(changed) if o.instrument == "profile" and o.score is not None)
    changed[first] = dataclasses.replace(changed[first], score=None, keyed_score=None, code=-2)
    only = {"profile": ("cronbach_alpha_moral",)}
    assert gate(changed, renamed(model, "old"), only)["profile.cronbach_alpha_moral"].outcome == NOT_COMPARED
