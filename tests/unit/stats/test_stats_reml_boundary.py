"""A G study whose replications all agree within their cells (a deterministic model at temperature 0): the
residual's REML maximum is the boundary 0, and the other components are those of the cell means.

The data: 4 items x 3 prompts, every cell answered alike in each of its runs, with item x prompt as the
design's interaction (the questionnaires' stability design). Refitted with the first item left out and started
from the full fit (as the upgrade gate's paired jackknife refits), this fit divided by zero in the REML before
the boundary was handled (``math domain error``), and the comparison was ``not compared``."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from snap_bench.stats.d_study import decision_study
from snap_bench.stats.g_study import RESIDUAL_EFFECT, GStudy, g_study
from snap_bench.stats.g_study_design import GStudyDesign
from snap_bench.stats.paired import jackknife_ci

DESIGN = GStudyDesign("item", ("prompt",), interactions=(("item", "prompt"),), replicate="run")
INTERACTION = "item x prompt"
# Rows items, columns prompts: the answer every run of the cell gives.
CELL_MEANS = np.array([[1, 4, 5], [1, 3, 1], [3, 2, 2], [4, 5, 5]], dtype=float)
RUNS = 12


def fit(cell_means: np.ndarray, runs: int, start: list[float] | None = None) -> GStudy:
    """The G study of ``runs`` identical answers per cell."""
    items, prompts = cell_means.shape
    index = list(itertools.product(range(items), range(prompts), range(runs)))
    labels = {"item": [i for i, _, _ in index], "prompt": [p for _, p, _ in index], "run": [r for _, _, r in index]}
    return g_study([cell_means[i, p] for i, p, _ in index], labels, DESIGN, intervals=False, start=start)


def phi(study: GStudy) -> float:
    """The dependability of one answer (one prompt, one run), as ``dependability[t0]`` reports it."""
    return decision_study(study, {"prompt": 1.0, "run": 1.0}).phi.value


def shares(study: GStudy) -> list[float]:
    return [component.share for component in study.components]


def mean_squares(y: np.ndarray) -> tuple[float, float, float]:
    """Two-way ANOVA without replication (a x b): MS rows, MS columns, MS residual."""
    a, b = y.shape
    grand, rows, columns = y.mean(), y.mean(axis=1), y.mean(axis=0)
    ms_rows = b * float(np.sum((rows - grand) ** 2)) / (a - 1)
    ms_columns = a * float(np.sum((columns - grand) ** 2)) / (b - 1)
    ms_residual = float(np.sum((y - rows[:, None] - columns[None, :] + grand) ** 2)) / ((a - 1) * (b - 1))
    return ms_rows, ms_columns, ms_residual


def test_agreeing_runs_give_the_cell_means_anova_solution_with_the_residual_at_zero() -> None:
    """Balanced cell means whose ANOVA estimates are all positive: REML is the EMS solution (Searle, Casella &
    McCulloch 1992, sec. 4.6: E MS_item = s_ip + b s_i, E MS_prompt = s_ip + a s_p, E MS_res = s_ip), the
    residual (run to run) is 0 on its boundary, and none of it depends on how many runs agreed."""
    a, b = CELL_MEANS.shape
    ms_item, ms_prompt, ms_residual = mean_squares(CELL_MEANS)
    expected = {"item": (ms_item - ms_residual) / b, "prompt": (ms_prompt - ms_residual) / a, INTERACTION: ms_residual}
    assert min(expected.values()) > 0
    for runs in (2, 6, RUNS):
        study = fit(CELL_MEANS, runs)
        for effect, value in expected.items():
            assert study.component(effect).variance == pytest.approx(value, rel=1e-6), (runs, effect)
        residual = study.component(RESIDUAL_EFFECT)
        assert (residual.variance, residual.at_boundary) == (0.0, True)


def test_a_refit_with_an_item_left_out_reaches_the_boundary_answer() -> None:
    """Item 1 left out: the prompt's ANOVA estimate is negative, so REML puts it at 0 and pools it with the
    interaction; the model is then one-way (item + error) on the cell means, whose REML is the one-way ANOVA's:
    s_error = the pooled within-item mean square, s_item = (MS_item - s_error) / b, Phi = s_item / (s_item +
    s_error). The refit starts from the full fit, as the gate's jackknife does."""
    start = shares(fit(CELL_MEANS, RUNS))
    left = CELL_MEANS[1:]
    a, b = left.shape
    ms_item, ms_prompt, ms_residual = mean_squares(left)
    assert ms_prompt < ms_residual  # the prompt's ANOVA estimate is negative
    within = float(np.sum((left - left.mean(axis=1, keepdims=True)) ** 2)) / (a * (b - 1))
    item = (ms_item - within) / b
    refit = fit(left, RUNS, start)
    assert refit.component("item").variance == pytest.approx(item, rel=1e-6)
    assert refit.component("prompt").variance == 0.0
    assert refit.component(INTERACTION).variance == pytest.approx(within, rel=1e-6)
    assert refit.component(RESIDUAL_EFFECT).variance == 0.0
    assert phi(refit) == pytest.approx(item / (item + within), rel=1e-6)


def test_the_paired_jackknife_of_agreeing_runs_is_an_interval() -> None:
    """Two models answering alike in every run, one of them differently in two cells: each side refitted with
    one item left out at a time (started from its full fit), the difference's jackknife interval is finite."""
    old = CELL_MEANS
    new = CELL_MEANS.copy()
    new[0, 0], new[2, 1] = 2.0, 4.0
    fits = {name: fit(means, RUNS) for name, means in (("new", new), ("old", old))}
    left_out = [
        phi(fit(np.delete(new, item, axis=0), RUNS, shares(fits["new"])))
        - phi(fit(np.delete(old, item, axis=0), RUNS, shares(fits["old"])))
        for item in range(old.shape[0])
    ]
    interval = jackknife_ci(phi(fits["new"]) - phi(fits["old"]), left_out)
    assert all(math.isfinite(value) for value in (interval.low, interval.high))
    assert interval.low < interval.estimate < interval.high


def test_items_alone_answered_alike_in_every_run_fit_the_items_variance_and_a_phi_of_1() -> None:
    """One system prompt: the cells are the items, so with the residual at 0 the cell means' model has no random
    term left but the items' own, the variance of the item means (REML of one variance: the n - 1 denominator).
    Its empty matrices made LAPACK fail (``unexpected array size``), so `dependability[t0]` was not compared."""
    answers = CELL_MEANS[:, 0]
    index = list(itertools.product(range(answers.size), range(3)))
    labels = {"item": [i for i, _ in index], "run": [r for _, r in index]}
    study = g_study([answers[i] for i, _ in index], labels, GStudyDesign("item", (), replicate="run"), intervals=False)
    assert study.component("item").variance == pytest.approx(float(np.var(answers, ddof=1)), rel=1e-6)
    assert study.component(RESIDUAL_EFFECT).variance == 0.0
    assert decision_study(study, {"run": 1.0}).phi.value == pytest.approx(1.0)
