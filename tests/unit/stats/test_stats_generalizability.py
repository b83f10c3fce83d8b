"""G and D studies against Brennan (2001), Shrout & Fleiss (1979) / psych::ICC, the ANOVA solution and simulation."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest

from snap_bench.stats.d_study import decision_study, smallest_count
from snap_bench.stats.errors import UndefinedStatistic
from snap_bench.stats.g_study import CELL, RESIDUAL_EFFECT, g_study
from snap_bench.stats.g_study_design import GStudyDesign

# Brennan (2001), *Generalizability Theory*, Table 3.2 (p. 73): Synthetic Data Set No. 4, a p x (r:t)
# design, 10 persons x 3 tasks x 4 raters per task (raters 1-4 rate task 1, 5-8 task 2, 9-12 task 3).
# Columns are raters, rows persons. Transcribed as tabulated in the GeneralizIT project's test fixtures.
SYNTHETIC_4 = {
    1: [5, 9, 3, 7, 9, 3, 7, 5, 9, 4],
    2: [6, 3, 4, 5, 2, 4, 3, 8, 9, 4],
    3: [5, 7, 3, 5, 9, 3, 7, 5, 8, 4],
    4: [5, 7, 3, 3, 7, 5, 7, 7, 8, 3],
    5: [5, 7, 5, 3, 7, 3, 7, 7, 6, 3],
    6: [3, 5, 3, 1, 7, 3, 5, 5, 6, 5],
    7: [4, 5, 3, 4, 3, 6, 5, 5, 6, 6],
    8: [5, 5, 5, 3, 7, 3, 7, 4, 5, 5],
    9: [6, 7, 6, 5, 2, 4, 5, 3, 5, 5],
    10: [7, 7, 5, 3, 7, 5, 5, 2, 8, 7],
    11: [3, 5, 1, 3, 5, 1, 5, 1, 1, 1],
    12: [3, 2, 6, 5, 3, 2, 4, 1, 1, 1],
}
# Brennan (2001), Table 3.4 (G study of Synthetic Data Set No. 4, four decimals as printed), and the
# coefficients for the G study's own sample sizes (n'_t = 3, n'_r = 4): E rho^2 = .55, Phi = .46.
SYNTHETIC_4_COMPONENTS = {"p": 0.4731, "t": 0.3252, "r:t": 0.6475, "p x t": 0.5596, RESIDUAL_EFFECT: 2.3802}

# Brennan (2001), Synthetic Data Set No. 3: a p x i x o design, 10 persons x 4 items x 2 occasions.
# Key (occasion, item); rows persons. Same transcription.
SYNTHETIC_3 = {
    (1, 1): [2, 4, 5, 5, 4, 4, 2, 3, 0, 6],
    (1, 2): [6, 5, 5, 9, 3, 4, 6, 4, 5, 8],
    (1, 3): [7, 6, 4, 8, 5, 4, 6, 4, 4, 7],
    (1, 4): [5, 7, 6, 6, 6, 7, 5, 5, 5, 6],
    (2, 1): [2, 6, 5, 5, 4, 6, 2, 6, 5, 6],
    (2, 2): [5, 7, 4, 7, 5, 4, 7, 6, 5, 8],
    (2, 3): [5, 5, 5, 7, 6, 7, 7, 6, 5, 8],
    (2, 4): [5, 7, 5, 6, 4, 8, 5, 4, 3, 6],
}
# Brennan (2001), G study of Synthetic Data Set No. 3 (pio,e is the residual); E rho^2 = .64, Phi = .55
# for n'_i = 4, n'_o = 2.
SYNTHETIC_3_COMPONENTS = {
    "p": 0.5528,
    "i": 0.4417,
    "o": 0.0074,
    "p x i": 0.5750,
    "p x o": 0.1009,
    "i x o": 0.1565,
    RESIDUAL_EFFECT: 0.9352,
}

# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges (as in test_stats_icc.py).
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def _synthetic_4() -> tuple[list[float], dict[str, list[object]]]:
    scores: list[float] = []
    labels: dict[str, list[object]] = {"p": [], "t": [], "r": []}
    for rater, column in SYNTHETIC_4.items():
        for person, score in enumerate(column):
            scores.append(score)
            labels["p"].append(person)
            labels["t"].append((rater - 1) // 4)
            labels["r"].append(rater)
    return scores, labels


SYNTHETIC_4_DESIGN = GStudyDesign("p", ("t", "r"), nested={"r": ("t",)}, interactions=(("p", "t"),))


def test_brennan_synthetic_data_set_4_p_by_r_within_t() -> None:
    scores, labels = _synthetic_4()
    study = g_study(scores, labels, SYNTHETIC_4_DESIGN)
    for effect, published in SYNTHETIC_4_COMPONENTS.items():
        assert study.component(effect).variance == pytest.approx(published, abs=5e-5), effect
    assert study.sample_sizes == {"t": 3.0, "r": 4.0}
    result = decision_study(study)
    assert round(result.g.value, 2) == 0.55
    assert round(result.phi.value, 2) == 0.46
    assert result.g.ci_low < result.g.value < result.g.ci_high
    assert study.component(RESIDUAL_EFFECT).df == pytest.approx(81)  # the ANOVA df of pr:t


def test_brennan_synthetic_data_set_3_p_by_i_by_o() -> None:
    scores: list[float] = []
    labels: dict[str, list[object]] = {"p": [], "i": [], "o": []}
    for (occasion, item), column in SYNTHETIC_3.items():
        for person, score in enumerate(column):
            scores.append(score)
            labels["p"].append(person)
            labels["i"].append(item)
            labels["o"].append(occasion)
    design = GStudyDesign("p", ("i", "o"), interactions=(("p", "i"), ("p", "o"), ("i", "o")))
    study = g_study(scores, labels, design)
    for effect, published in SYNTHETIC_3_COMPONENTS.items():
        assert study.component(effect).variance == pytest.approx(published, abs=5e-5), effect
    result = decision_study(study)
    assert round(result.g.value, 2) == 0.64
    assert round(result.phi.value, 2) == 0.55


def _targets_by_raters(matrix: list[list[int]]) -> tuple[list[float], dict[str, list[object]]]:
    scores = [float(v) for row in matrix for v in row]
    targets = [i for i, row in enumerate(matrix) for _ in row]
    raters = [j for row in matrix for j, _ in enumerate(row)]
    return scores, {"target": targets, "rater": raters}


def test_shrout_fleiss_components_and_icc_as_d_studies() -> None:
    """p x r: components from Shrout & Fleiss's (1979) Table 3 mean squares, coefficients = psych::ICC.

    Table 3: BMS = 11.24, JMS = 32.49, EMS = 1.02 (two decimals), so sigma^2(target) = (BMS - EMS) / 4,
    sigma^2(rater) = (JMS - EMS) / 6, sigma^2(e) = EMS. A D study with n'_r raters is ICC(3, n'_r) as
    E rho^2 and ICC(2, n'_r) as Phi; the values are R psych::ICC's, quoted in test_stats_icc.py.
    """
    scores, labels = _targets_by_raters(SHROUT_FLEISS)
    study = g_study(scores, labels, GStudyDesign("target", ("rater",)))
    assert study.component("target").variance == pytest.approx((11.24 - 1.02) / 4, abs=0.005)
    assert study.component("rater").variance == pytest.approx((32.49 - 1.02) / 6, abs=0.005)
    assert study.component(RESIDUAL_EFFECT).variance == pytest.approx(1.02, abs=0.005)
    single = decision_study(study, {"rater": 1})
    assert single.g.value == pytest.approx(0.714840714840715, abs=1e-8)
    assert single.phi.value == pytest.approx(0.289763779527559, abs=1e-8)
    average = decision_study(study)
    assert average.g.value == pytest.approx(0.909315542377069, abs=1e-8)
    assert average.phi.value == pytest.approx(0.620050547598989, abs=1e-8)


def test_balanced_data_give_the_anova_expected_mean_square_solution() -> None:
    """Two-way random model with replication (a x b x n): REML = ANOVA when all ANOVA estimates are positive.

    EMS (Searle, Casella & McCulloch 1992, sec. 4.6): E MSA = s_e + n s_ab + b n s_a,
    E MSB = s_e + n s_ab + a n s_b, E MSAB = s_e + n s_ab, E MSE = s_e.
    """
    rng = np.random.default_rng(7)
    a, b, n = 8, 5, 3
    effect_a, effect_b = rng.normal(0, 1.0, a), rng.normal(0, 0.6, b)
    effect_ab = rng.normal(0, 0.5, (a, b))
    y = 3 + effect_a[:, None, None] + effect_b[None, :, None] + effect_ab[:, :, None] + rng.normal(0, 0.7, (a, b, n))
    grand = y.mean()
    mean_a, mean_b, mean_ab = y.mean(axis=(1, 2)), y.mean(axis=(0, 2)), y.mean(axis=2)
    msa = b * n * np.sum((mean_a - grand) ** 2) / (a - 1)
    msb = a * n * np.sum((mean_b - grand) ** 2) / (b - 1)
    msab = n * np.sum((mean_ab - mean_a[:, None] - mean_b[None, :] + grand) ** 2) / ((a - 1) * (b - 1))
    mse = np.sum((y - mean_ab[:, :, None]) ** 2) / (a * b * (n - 1))
    anova = {"A": (msa - msab) / (b * n), "B": (msb - msab) / (a * n), CELL: (msab - mse) / n, RESIDUAL_EFFECT: mse}
    assert min(anova.values()) > 0
    index = list(itertools.product(range(a), range(b), range(n)))
    labels = {"A": [i for i, _, _ in index], "B": [j for _, j, _ in index], "rep": [k for _, _, k in index]}
    study = g_study(y.reshape(-1), labels, GStudyDesign("A", ("B",), replicate="rep"))
    for effect, expected in anova.items():
        assert study.component(effect).variance == pytest.approx(expected, rel=1e-5), effect
    assert study.component(RESIDUAL_EFFECT).df == pytest.approx(a * b * (n - 1), rel=1e-4)


def test_missing_scores_are_left_out_and_counted() -> None:
    scores, labels = _synthetic_4()
    holed = np.array(scores, dtype=float)
    holed[[3, 17, 50]] = np.nan
    kept = [i for i in range(len(scores)) if i not in (3, 17, 50)]
    with_nan = g_study(holed, labels, SYNTHETIC_4_DESIGN)
    dropped = g_study(
        [scores[i] for i in kept], {k: [v[i] for i in kept] for k, v in labels.items()}, SYNTHETIC_4_DESIGN
    )
    assert (with_nan.n_observations, with_nan.n_missing) == (117, 3)
    for left, right in zip(with_nan.components, dropped.components, strict=True):
        assert left.variance == pytest.approx(right.variance, rel=1e-6, abs=1e-9)


def test_components_are_recovered_in_simulation() -> None:
    """Seeded p x i design with replicates and 10 % missing scores: the mean estimate is near the truth."""
    rng = np.random.default_rng(20261123)
    truth = {"p": 0.8, "i": 0.3, CELL: 0.2, RESIDUAL_EFFECT: 0.5}
    persons, items, runs = 12, 6, 3
    index = list(itertools.product(range(persons), range(items), range(runs)))
    labels = {"p": [p for p, _, _ in index], "i": [i for _, i, _ in index], "run": [r for _, _, r in index]}
    design = GStudyDesign("p", ("i",), replicate="run")
    estimates: dict[str, list[float]] = {name: [] for name in truth}
    covered = 0
    for _ in range(40):
        p = rng.normal(0, math.sqrt(truth["p"]), persons)
        i = rng.normal(0, math.sqrt(truth["i"]), items)
        cell = rng.normal(0, math.sqrt(truth[CELL]), (persons, items))
        y = np.array([p[a] + i[b] + cell[a, b] for a, b, _ in index])
        y = y + rng.normal(0, math.sqrt(truth[RESIDUAL_EFFECT]), y.size)
        y[rng.random(y.size) < 0.1] = np.nan
        study = g_study(y, labels, design)
        for name in truth:
            estimates[name].append(study.component(name).variance)
        residual = study.component(RESIDUAL_EFFECT)
        covered += residual.ci_low <= truth[RESIDUAL_EFFECT] <= residual.ci_high
    for name, value in truth.items():
        values = np.array(estimates[name])
        standard_error = values.std(ddof=1) / math.sqrt(values.size)
        assert abs(values.mean() - value) < 3.5 * standard_error + 0.02, name
    assert covered >= 34  # 95 % nominal; 34 of 40 is the binomial 1 % lower tail


def test_decision_study_planner() -> None:
    scores, labels = _synthetic_4()
    study = g_study(scores, labels, SYNTHETIC_4_DESIGN)
    phis = [decision_study(study, {"r": r}).phi.value for r in (1, 2, 4, 8, 16)]
    assert phis == sorted(phis)
    needed = smallest_count(study, "r", 0.5)
    assert needed is not None
    assert decision_study(study, {"r": needed}).phi.value >= 0.5
    assert decision_study(study, {"r": needed - 1}).phi.value < 0.5
    # Phi with infinitely many raters per task is capped by the task components: 3 tasks never reach 0.9.
    assert smallest_count(study, "r", 0.9, max_count=200) is None
    with pytest.raises(ValueError, match="unknown facet"):
        decision_study(study, {"paraphrase": 2})


def test_zero_variance_and_bad_designs_raise() -> None:
    labels = {"p": [0, 0, 1, 1], "i": [0, 1, 0, 1]}
    with pytest.raises(UndefinedStatistic, match="zero variance"):
        g_study([3, 3, 3, 3], labels, GStudyDesign("p", ("i",)))
    with pytest.raises(ValueError, match="no column"):
        g_study([1, 2, 3, 4], labels, GStudyDesign("p", ("o",)))
    with pytest.raises(ValueError, match="replications"):
        g_study([1, 2, 3, 4], {**labels, "run": [0, 0, 0, 0]}, GStudyDesign("p", ("i",), replicate="run"))


def test_no_sampling_variance_for_a_positive_universe_variance_gives_no_interval() -> None:
    """A fit whose information gives the object's component no sampling variance (singular at a boundary)
    has no interval for its coefficients: NaN (reported as "no interval"), never a zero-width interval
    that would claim the coefficient exactly, nor one a comparison could read as certain."""
    scores, labels = _synthetic_4()
    study = g_study(scores, labels, SYNTHETIC_4_DESIGN)
    universe = next(index for index, c in enumerate(study.components) if c.effect == "p")
    assert study.components[universe].variance > 0
    covariance = study.covariance.copy()
    covariance[universe, :] = covariance[:, universe] = 0.0
    result = decision_study(dataclasses.replace(study, covariance=covariance))
    for coefficient in (result.g, result.phi):
        assert 0 < coefficient.value < 1
        assert math.isnan(coefficient.ci_low)
        assert math.isnan(coefficient.ci_high)
    # The same with no information at all (NaN), as a singular matrix's inverse may give.
    covariance[universe, universe] = math.nan
    result = decision_study(dataclasses.replace(study, covariance=covariance))
    assert math.isnan(result.phi.ci_low)
    assert math.isnan(result.phi.ci_high)
