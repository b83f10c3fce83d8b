"""The gate's intervals carry the models' run-to-run noise on the design both answered (a fixed design), not a
resampling of items; a design whose cells were asked once falls back on its pairing's own method, and says so.

Run on bench.fixed_design's 12-item YAML questionnaire (4 constructs of 3 items, 4 prompts, temperatures 0
and 1, 3 runs), through ``compare_with_baseline`` with the questionnaire kind's thresholds."""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import numpy as np

from bench.drift_items import ITEMS, answerer
from bench.fixed_design import ANSWERER_SEED, NAME, load, recording
from snap_bench.analysis.metric_specs import RUN_SD_PAIRING, SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.instruments import Instrument
from snap_bench.judging.baseline import BaselineSpec
from snap_bench.judging.comparison import Comparison, compare_with_baseline
from snap_bench.judging.pairing_methods import FIXED_DESIGN, FIXED_DESIGN_RATE, NO_REPEATED_CELL
from snap_bench.judging.verdicts import ThresholdConfig, load_thresholds
from tests.conftest import SHIPPED

SETTINGS = AnalysisSettings(n_resamples=200)


@cache
def thresholds(instrument: str) -> ThresholdConfig:
    # the questionnaire kind's thresholds: the same for every 12-item design loaded below
    kind = _instruments[instrument]
    return load_thresholds(SHIPPED, instrument, {}, None, {**SHARED_METRICS, **kind.metrics}, kind.thresholds_section())


_instruments: dict[str, Instrument] = {}


def only(config: ThresholdConfig, metrics: tuple[str, ...] | None) -> ThresholdConfig:
    """``config`` judging just ``metrics`` (None: all): each metric's comparison is computed on its own, so a test
    that reads a few figures need not pay for the refits of the others."""
    if metrics is None:
        return config
    return dataclasses.replace(
        config,
        metrics={name: t for name, t in config.metrics.items() if name in metrics},
        non_inferiority={name: m for name, m in config.non_inferiority.items() if name in metrics},
    )


def gate(
    folder: Path, noise: float, moved: bool = False, runs: int | None = None, metrics: tuple[str, ...] | None = None
) -> dict[str, Comparison]:
    """Two recordings of the 12-item answerer (the new one with its first two items moved a point, if
    ``moved``), compared as ``--baseline`` does (on ``metrics`` only, if given)."""
    _instruments.update(load(folder, runs))
    instrument = _instruments[NAME]
    truth = answerer(ANSWERER_SEED, noise)
    rng = np.random.default_rng(5)
    old = recording("old", truth, rng, instrument)
    new = recording("new", truth.moved(ITEMS[:2]) if moved else truth, rng, instrument)
    judged = lambda instrument: only(thresholds(instrument), metrics)  # noqa: E731
    comparisons = compare_with_baseline([*new, *old], BaselineSpec("old"), _instruments, SETTINGS, judged)
    return {c.metric: c for c in comparisons}


def test_an_unchanged_models_intervals_are_read_off_its_run_noise(tmp_path: Path) -> None:
    comparisons = gate(tmp_path, noise=1.0)
    assert set(comparisons) >= {"dependability[t1]", "contradiction_rate[t1]", "cv_mean", "test_retest_r"}
    for name, comparison in comparisons.items():
        assert comparison.method.startswith((FIXED_DESIGN, FIXED_DESIGN_RATE, RUN_SD_PAIRING.method)), name
    # at temperature 0 the answerer gives one answer per cell in every run of both recordings: no noise
    # (Newcombe's interval, the conditions taken as a sample, had a width there)
    for name in ("contradiction_rate[t0]", "dependability[t0]"):
        assert (comparisons[name].ci_low, comparisons[name].ci_high) == (0.0, 0.0), comparisons[name].message
    # at temperature 1 the noise is there, and the interval holds the estimate
    noisy = comparisons["dependability[t1]"]
    assert noisy.ci_low is not None
    assert noisy.ci_high is not None
    assert noisy.difference is not None
    assert noisy.ci_low < noisy.difference < noisy.ci_high


def test_items_changed_without_run_noise_are_a_difference_without_noise(tmp_path: Path) -> None:
    """No run noise (every run of a cell alike), two items moved a point: the difference is what it is on
    this design, so every interval has zero width; resampling items read the items' unequal moves as noise."""
    comparisons = gate(tmp_path, noise=0.0, moved=True)
    moved = comparisons["dependability[t1]"]
    assert moved.difference is not None
    assert moved.difference != 0.0
    for name, comparison in comparisons.items():
        assert comparison.ci_low == comparison.difference == comparison.ci_high, (name, comparison.message)


def test_a_design_asked_once_falls_back_on_its_pairings_method_and_says_so(tmp_path: Path) -> None:
    comparisons = gate(tmp_path, noise=1.0, runs=1, metrics=("dependability", "contradiction_rate", "test_retest_r"))
    dependability = comparisons["dependability[t1]"]
    assert dependability.method == f"paired jackknife over items ({NO_REPEATED_CELL})"
    assert dependability.ci_low is not None
    assert dependability.ci_high is not None
    assert dependability.ci_low < dependability.ci_high
    assert comparisons["contradiction_rate[t1]"].method == f"Newcombe paired ({NO_REPEATED_CELL})"
    # a run-to-run figure has no runs to pair on at all
    assert comparisons["test_retest_r"].outcome == "not compared"


def test_a_level_answered_alike_in_every_run_with_a_cell_asked_once_is_compared() -> None:
    """bench.gate_decides' answerer at 12 runs, temperature 0 only (every cell answered alike in every run), the
    new model's first cell asked once: the pairing falls back on the jackknife over items, whose refit with the
    first item left out divided by zero in the REML (the residual then fits at its boundary, 0), so the check was
    `not compared` and the gate exited 6. It is compared now: both models gave the same answers, the difference
    is 0 and so is its interval."""
    from bench import gate_decides as simulated

    design = dataclasses.replace(simulated.DESIGNS["runs = 2"], runs=12, temperatures=(0.0,))
    kind = simulated.instrument(design.items)
    truth = simulated.answerer(20261127, design.items, 1.0)
    old = simulated.recording("old", truth, design, np.random.default_rng(1))
    new = simulated.recording("new", truth, design, np.random.default_rng(2))
    once = new[0].cell
    new = [row for row in new if row.cell != once or row.run == 1]
    comparisons = compare_with_baseline(
        [*new, *old], BaselineSpec("old"), {kind.name: kind}, SETTINGS, lambda _: simulated.thresholds_of(design.items)
    )
    dependability = next(c for c in comparisons if c.metric == "dependability[t0]")
    assert dependability.method == f"paired jackknife over items ({NO_REPEATED_CELL})", dependability.message
    assert dependability.outcome == "non-inferior", dependability.message
    assert (dependability.difference, dependability.ci_low, dependability.ci_high) == (0.0, 0.0, 0.0)


def test_a_noisier_model_s_run_sd_is_shown_worse_and_an_unchanged_one_s_passes() -> None:
    """bench.gate_decides' answerer at 6 runs: the run-to-run SD at temperature 1 (each recording's own, pooled
    within its cells, combined) passes an unchanged model and shows one whose run noise tripled (SD 1.7 against
    0.85 once rounded and clipped to the scale) as a regression; at temperature 0 both answer alike in every
    run, so the difference is 0 with no width."""
    from bench import gate_decides as simulated

    design = dataclasses.replace(simulated.DESIGNS["12 items"], runs=6)
    kind = simulated.instrument(design.items)
    truth = simulated.answerer(20261127, design.items, 1.0)
    old = simulated.recording("old", truth, design, np.random.default_rng(1))
    run_sd_only = only(simulated.thresholds_of(12), ("run_sd",))  # the figure read below
    outcomes = {}
    for name, noise in (("same", 1.0), ("noisier", 3.0)):
        new = simulated.recording(name, dataclasses.replace(truth, noise=noise), design, np.random.default_rng(2))
        comparisons = compare_with_baseline(
            [*new, *old], BaselineSpec("old"), {kind.name: kind}, SETTINGS, lambda _: run_sd_only
        )
        found = {c.metric: c for c in comparisons}
        outcomes[name] = found["run_sd[t1]"].outcome
        assert found["run_sd[t1]"].method == RUN_SD_PAIRING.method
        assert (found["run_sd[t0]"].difference, found["run_sd[t0]"].ci_low, found["run_sd[t0]"].ci_high) == (0, 0, 0)
    assert outcomes == {"same": "non-inferior", "noisier": "REGRESSION"}
