"""The G study against pingouin as an oracle.

For a balanced persons x raters design with one score per cell, the single-rating dependability Phi is
ICC(2,1) (two-way random, absolute agreement) and the single-rating generalizability coefficient is
ICC(3,1) (consistency) (Brennan 2001, sec. 2.3; Shrout & Fleiss 1979); pingouin computes both from the
ANOVA mean squares, an independent route from the REML fit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pingouin
import pytest

from snap_bench.stats.d_study import decision_study
from snap_bench.stats.g_study import g_study
from snap_bench.stats.g_study_design import GStudyDesign
from snap_bench.stats.spread import spread_interval


def two_way(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    persons, raters = 12, 4
    scores = (
        rng.normal(0, 1.0, persons)[:, None]
        + rng.normal(0, 0.4, raters)[None, :]
        + rng.normal(0, 0.6, (persons, raters))
    )
    return pd.DataFrame(
        {
            "person": np.repeat(np.arange(persons), raters),
            "rater": np.tile(np.arange(raters), persons),
            "score": scores.ravel(),
        }
    )


# pingouin 0.7 calls DataFrame.dropna(inplace=True), deprecated by the installed pandas
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.dropna")
@pytest.mark.parametrize("seed", [1, 2, 4, 5])
def test_single_answer_coefficients_are_pingouins_absolute_and_consistency_icc(seed: int) -> None:
    data = two_way(seed)
    study = g_study(data["score"], {"person": data["person"].tolist(), "rater": data["rater"].tolist()},
                    GStudyDesign("person", ("rater",)))  # fmt: skip
    # the ANOVA estimates are REML's only inside the parameter space (seeds 3 and 7 put the rater
    # component at 0, where pingouin keeps the negative ANOVA estimate)
    assert not any(component.at_boundary for component in study.components)
    single = decision_study(study, {"rater": 1})
    oracle = pingouin.intraclass_corr(data, targets="person", raters="rater", ratings="score").set_index("Type")
    assert single.phi.value == pytest.approx(oracle.loc["ICC(A,1)", "ICC"], abs=1e-6)
    assert single.g.value == pytest.approx(oracle.loc["ICC(C,1)", "ICC"], abs=1e-6)


def test_conditional_intervals_are_narrower_and_share_the_point() -> None:
    data = two_way(4)
    labels = {"person": data["person"].tolist(), "rater": data["rater"].tolist()}
    study = g_study(data["score"], labels, GStudyDesign("person", ("rater",)))
    sampled = decision_study(study, {"rater": 1})
    shipped = decision_study(study, {"rater": 1}, object_levels="shipped")
    assert shipped.phi.value == sampled.phi.value
    assert sampled.phi.ci_low < shipped.phi.ci_low < shipped.phi.value < shipped.phi.ci_high < sampled.phi.ci_high
    with pytest.raises(ValueError, match="object_levels"):
        decision_study(study, {"rater": 1}, object_levels="fixed")  # type: ignore[arg-type]


def test_spread_interval_inverts_the_noncentral_chi_square() -> None:
    from scipy import stats

    means = np.array([0.1, 0.5, -0.3, 0.9, 0.2, -0.6, 0.4, 0.0])
    error = 0.02
    result = spread_interval(means, error)
    df, statistic = 7, float(np.sum((means - means.mean()) ** 2)) / error
    assert result.value == pytest.approx(np.var(means, ddof=1) - error)
    # the bounds are where the observed statistic sits at the 97.5 % and 2.5 % quantiles
    assert stats.ncx2.cdf(statistic, df, result.ci_low * df / error) == pytest.approx(0.975, abs=1e-6)
    assert stats.ncx2.cdf(statistic, df, result.ci_high * df / error) == pytest.approx(0.025, abs=1e-6)
    assert result.ci_low < result.value < result.ci_high


def test_spread_interval_starts_at_zero_when_the_means_differ_no_more_than_their_noise() -> None:
    result = spread_interval(np.array([0.1, -0.1, 0.05, 0.2]), error_variance=0.05)
    assert (result.value, result.ci_low) == (0.0, 0.0)
    assert result.ci_high > 0
    # means closer together than noise allows even at no spread: the interval is [0, 0]
    assert spread_interval(np.array([0.01, -0.01, 0.0, 0.02]), error_variance=0.5).ci_high == 0.0
    with pytest.raises(ValueError, match="at least 2 means"):
        spread_interval(np.array([1.0]), 0.1)
    with pytest.raises(ValueError, match="error_variance"):
        spread_interval(np.array([1.0, 2.0]), 0.0)
