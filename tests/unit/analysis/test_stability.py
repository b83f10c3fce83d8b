"""The judged stability figures: a G study per temperature, coverage, constant answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from snap_bench.analysis.stability import StabilityDesign, fit_level, level_metrics
from snap_bench.stats.g_study_design import GStudyDesign

DESIGN = StabilityDesign(
    GStudyDesign("item", ("paraphrase",), nested={"paraphrase": ("item",)}, replicate="run"), by="temperature"
)


def answers(noise: dict[str, float], seed: int = 7) -> pd.DataFrame:
    """Six items x two paraphrases x three runs per temperature; run noise SD per temperature."""
    rng = np.random.default_rng(seed)
    views = rng.normal(3, 1.0, 6)
    rows = []
    for temperature, sd in noise.items():
        for item in range(6):
            for paraphrase in range(2):
                for run in range(3):
                    rows.append((temperature, f"I{item}", f"P{paraphrase}", run, views[item] + rng.normal(0, sd)))
    return pd.DataFrame(rows, columns=["temperature", "item", "paraphrase", "run", "score"])


def test_each_temperature_is_studied_apart_and_noise_lowers_only_its_own_figure() -> None:
    table = answers({"t0": 0.05, "t1": 1.5})
    metrics, details = level_metrics(table, DESIGN)
    assert set(details) == {"t0", "t1"}
    steady, noisy = metrics["dependability[t0]"], metrics["dependability[t1]"]
    assert steady.value is not None
    assert noisy.value is not None
    assert steady.value > 0.95 > 0.6 > noisy.value
    assert metrics["run_sd[t0]"].value == pytest.approx(0.05, rel=0.3)
    assert metrics["run_sd[t1]"].value == pytest.approx(1.5, rel=0.3)
    # studied alone, the steady temperature gives the same figure: nothing of t1 leaks into it
    alone, _ = level_metrics(table[table["temperature"] == "t0"], DESIGN)
    assert alone["dependability[t0]"].value == pytest.approx(steady.value)


def test_unscored_answers_count_in_the_coverage_and_constant_answers_score_zero() -> None:
    table = answers({"t0": 0.3})
    table.loc[table.index[: len(table) * 2 // 3], "score"] = np.nan
    metrics, _, _ = fit_level(table, DESIGN, test_signal=False)
    assert metrics["dependability"].coverage == pytest.approx(1 / 3, abs=0.01)
    constant = answers({"t0": 0.3}).assign(score=5.0)
    zero, details, study = fit_level(constant, DESIGN)
    assert study is None
    assert details["constant"]
    assert zero["dependability"].value == 0.0
    assert "no item signal" in zero["dependability"].note
