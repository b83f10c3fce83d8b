"""ICC against Shrout & Fleiss (1979) Table 2 and against psych::ICC (R)."""

from __future__ import annotations

import numpy as np
import pytest

from snap_bench.stats import ICC_FORMS, ICCForm, UndefinedStatistic, icc, icc_batch

# Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges.
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]

# A 10 cells x 3 runs Likert matrix written for this test.
LIKERT = [[4, 4, 5], [2, 3, 2], [5, 5, 5], [3, 3, 4], [1, 2, 1], [4, 5, 4], [2, 2, 3], [3, 4, 3], [5, 4, 5], [1, 1, 2]]

FORMS_IN_PSYCH_ORDER: list[ICCForm] = ["1,1", "2,1", "3,1", "1,k", "2,k", "3,k"]


@pytest.mark.parametrize(
    ("form", "published"),
    [("1,1", 0.17), ("2,1", 0.29), ("3,1", 0.71), ("1,k", 0.44), ("2,k", 0.62), ("3,k", 0.91)],
)
def test_shrout_fleiss_table_2(form: ICCForm, published: float) -> None:
    """Shrout & Fleiss (1979), Table 4 values for the Table 2 data (two decimals as printed)."""
    assert round(icc(SHROUT_FLEISS, form).value, 2) == published


# R 4.2.2, psych 2.2.9 (Debian r-cran-psych):
#
#   library(psych); options(digits = 15)
#   sf <- matrix(c(9,2,5,8, 6,1,3,2, 8,4,6,8, 7,1,2,6, 10,5,6,9, 6,2,4,7), ncol = 4, byrow = TRUE)
#   print(ICC(sf, lmer = FALSE)$results[, 2:8])
#
#                                         ICC                 F df1 df2
#   Single_raters_absolute  0.165741768405476  1.79467849223947   5  18
#   Single_random_raters    0.289763779527559 11.02724795640327   5  15
#   Single_fixed_raters     0.714840714840715 11.02724795640327   5  15
#   Average_raters_absolute 0.442797133679269  1.79467849223947   5  18
#   Average_random_raters   0.620050547598989 11.02724795640327   5  15
#   Average_fixed_raters    0.909315542377069 11.02724795640327   5  15
#                                              p         lower bound
#   Single_raters_absolute  0.164768808344639611 -0.1329323248747509
#   Single_random_raters    0.000134566516484337  0.0187865133747120
#   Single_fixed_raters     0.000134566516484337  0.3424647650339254
#   Average_raters_absolute 0.164768808344639611 -0.8844421552381190
#   Average_random_raters   0.000134566516484337  0.0711368153025035
#   Average_fixed_raters    0.000134566516484337  0.6756747138163047
#                                 upper bound
#   Single_raters_absolute  0.722560062328121
#   Single_random_raters    0.761084369648953
#   Single_fixed_raters     0.945858259955360
#   Average_raters_absolute 0.912415420340776
#   Average_random_raters   0.927232040167722
#   Average_fixed_raters    0.985891678169062
PSYCH_SHROUT_FLEISS = {
    "1,1": (0.165741768405476, 1.79467849223947, 5, 18, 0.164768808344639611, -0.1329323248747509, 0.722560062328121),
    "2,1": (0.289763779527559, 11.02724795640327, 5, 15, 0.000134566516484337, 0.0187865133747120, 0.761084369648953),
    "3,1": (0.714840714840715, 11.02724795640327, 5, 15, 0.000134566516484337, 0.3424647650339254, 0.945858259955360),
    "1,k": (0.442797133679269, 1.79467849223947, 5, 18, 0.164768808344639611, -0.8844421552381190, 0.912415420340776),
    "2,k": (0.620050547598989, 11.02724795640327, 5, 15, 0.000134566516484337, 0.0711368153025035, 0.927232040167722),
    "3,k": (0.909315542377069, 11.02724795640327, 5, 15, 0.000134566516484337, 0.6756747138163047, 0.985891678169062),
}

# Same R session:
#
#   likert <- matrix(c(4,4,5, 2,3,2, 5,5,5, 3,3,4, 1,2,1, 4,5,4, 2,2,3, 3,4,3, 5,4,5, 1,1,2),
#                    ncol = 3, byrow = TRUE)
#   print(ICC(likert, lmer = FALSE)$results[, 2:8])
#
#                                         ICC                F df1 df2
#   Single_raters_absolute  0.852099817407182 18.2839506172839   9  20
#   Single_random_raters    0.852459016393443 19.2337662337662   9  18
#   Single_fixed_raters     0.858715596330275 19.2337662337662   9  18
#   Average_raters_absolute 0.945307224848076 18.2839506172839   9  20
#   Average_random_raters   0.945454545454545 19.2337662337662   9  18
#   Average_fixed_raters    0.948008102633356 19.2337662337662   9  18
#                                              p       lower bound
#   Single_raters_absolute  8.50415634198662e-08 0.644795965299759
#   Single_random_raters    1.73489701138593e-07 0.645684352188106
#   Single_fixed_raters     1.73489701138593e-07 0.649795131748602
#   Average_raters_absolute 8.50415634198662e-08 0.844861422704598
#   Average_random_raters   1.73489701138593e-07 0.845369430447750
#   Average_fixed_raters    1.73489701138593e-07 0.847709883882180
#                                 upper bound
#   Single_raters_absolute  0.956550402731197
#   Single_random_raters    0.956635878381845
#   Single_fixed_raters     0.959012708191307
#   Average_raters_absolute 0.985084760133487
#   Average_random_raters   0.985114975450719
#   Average_fixed_raters    0.985953757777921
PSYCH_LIKERT = {
    "1,1": (0.852099817407182, 18.2839506172839, 9, 20, 8.50415634198662e-08, 0.644795965299759, 0.956550402731197),
    "2,1": (0.852459016393443, 19.2337662337662, 9, 18, 1.73489701138593e-07, 0.645684352188106, 0.956635878381845),
    "3,1": (0.858715596330275, 19.2337662337662, 9, 18, 1.73489701138593e-07, 0.649795131748602, 0.959012708191307),
    "1,k": (0.945307224848076, 18.2839506172839, 9, 20, 8.50415634198662e-08, 0.844861422704598, 0.985084760133487),
    "2,k": (0.945454545454545, 19.2337662337662, 9, 18, 1.73489701138593e-07, 0.845369430447750, 0.985114975450719),
    "3,k": (0.948008102633356, 19.2337662337662, 9, 18, 1.73489701138593e-07, 0.847709883882180, 0.985953757777921),
}

# Same R session, 90% intervals:
#
#   print(ICC(likert, alpha = 0.10, lmer = FALSE)$results[, 7:8])
#
#                                 lower bound       upper bound
#   Single_raters_absolute  0.688835137523412 0.946130369722140
#   Single_random_raters    0.689546799271335 0.946235105023994
#   Single_fixed_raters     0.694825511974363 0.949093868121422
#   Average_raters_absolute 0.869130355986614 0.981374559512152
#   Average_random_raters   0.869507781905329 0.981412117992007
#   Average_fixed_raters    0.872293282589289 0.982435184842590
PSYCH_LIKERT_90 = {
    "1,1": (0.688835137523412, 0.946130369722140),
    "2,1": (0.689546799271335, 0.946235105023994),
    "3,1": (0.694825511974363, 0.949093868121422),
    "1,k": (0.869130355986614, 0.981374559512152),
    "2,k": (0.869507781905329, 0.981412117992007),
    "3,k": (0.872293282589289, 0.982435184842590),
}


@pytest.mark.parametrize(("ratings", "reference"), [(SHROUT_FLEISS, PSYCH_SHROUT_FLEISS), (LIKERT, PSYCH_LIKERT)])
@pytest.mark.parametrize("form", FORMS_IN_PSYCH_ORDER)
def test_matches_psych_icc(
    ratings: list[list[int]],
    reference: dict[str, tuple[float, float, int, int, float, float, float]],
    form: ICCForm,
) -> None:
    """psych::ICC (R), values printed in the comments above; point values to 1e-9, CIs to 1e-9."""
    value, f_ratio, df1, df2, p, low, high = reference[form]
    result = icc(ratings, form)
    assert result.form == form
    assert result.value == pytest.approx(value, abs=1e-9)
    f_statistic = result.F
    assert f_statistic == pytest.approx(f_ratio, rel=1e-9)
    assert (result.df1, result.df2) == (df1, df2)
    assert result.p == pytest.approx(p, rel=1e-6)
    assert result.ci_low == pytest.approx(low, abs=1e-9)
    assert result.ci_high == pytest.approx(high, abs=1e-9)
    assert result.confidence == 0.95
    assert (result.n_targets, result.n_raters) == (len(ratings), len(ratings[0]))


@pytest.mark.parametrize("form", FORMS_IN_PSYCH_ORDER)
def test_confidence_level_matches_psych_alpha_argument(form: ICCForm) -> None:
    """psych::ICC(alpha = 0.10) is confidence = 0.90 (two-sided, alpha / 2 in each tail)."""
    low, high = PSYCH_LIKERT_90[form]
    result = icc(LIKERT, form, confidence=0.90)
    assert (result.ci_low, result.ci_high) == pytest.approx((low, high), abs=1e-9)


@pytest.mark.parametrize("form", ICC_FORMS)
def test_batch_with_counts_equals_icc_of_the_repeated_rows(form: ICCForm) -> None:
    counts = np.array([[1, 1, 1, 1, 1, 1], [2, 0, 1, 0, 3, 0], [0, 1, 1, 1, 1, 2]])
    batch = icc_batch(SHROUT_FLEISS, counts, form)
    matrix = np.asarray(SHROUT_FLEISS, dtype=float)
    expected = [icc(np.repeat(matrix, row, axis=0), form).value for row in counts]
    np.testing.assert_allclose(batch, expected, rtol=1e-12, atol=1e-12)
    assert icc_batch(SHROUT_FLEISS, form=form)[0] == pytest.approx(icc(SHROUT_FLEISS, form).value, abs=1e-14)


@pytest.mark.parametrize("form", ["1,1", "2,1", "3,1", "2,k", "3,k"])
def test_identical_runs_are_perfectly_reliable(form: ICCForm) -> None:
    """A temperature-0 model answering the same in every run: MSE = 0, F = inf, ICC and CI = 1."""
    runs = np.repeat(np.array([[1.0], [3.0], [4.0], [5.0], [2.0]]), 3, axis=1)
    result = icc(runs, form)
    assert result.value == pytest.approx(1.0, abs=1e-12)
    f_statistic = result.F
    assert f_statistic == float("inf")
    assert result.p == 0.0
    assert (result.ci_low, result.ci_high) == pytest.approx((1.0, 1.0), abs=1e-12)


def test_a_constant_shift_between_runs_lowers_absolute_but_not_consistency_agreement() -> None:
    runs = np.column_stack([np.arange(1.0, 6.0), np.arange(1.0, 6.0) + 1.0])
    assert icc(runs, "3,1").value == pytest.approx(1.0)
    assert icc(runs, "2,1").value < 0.9


def test_constant_ratings_are_undefined_with_a_reason() -> None:
    with pytest.raises(UndefinedStatistic, match="zero variance") as caught:
        icc(np.full((10, 3), 5.0), "2,1")
    assert caught.value.reason == "zero variance: every rating is identical"
    assert np.isnan(icc_batch(np.full((10, 3), 5.0))).all()


def test_each_run_constant_is_undefined() -> None:
    """Every cell answered the same within a run, runs differ: nothing distinguishes the targets."""
    runs = np.tile([2.0, 3.0, 4.0], (6, 1))
    with pytest.raises(UndefinedStatistic, match="each rater gives every target the same rating"):
        icc(runs, "2,1")


def test_average_forms_need_variance_between_targets() -> None:
    no_target_variance = [[1.0, 2.0], [2.0, 1.0], [1.0, 2.0], [2.0, 1.0]]
    assert icc(no_target_variance, "1,1").value == pytest.approx(-1.0)
    with pytest.raises(UndefinedStatistic, match="between targets"):
        icc(no_target_variance, "1,k")


@pytest.mark.parametrize(
    ("ratings", "message"),
    [
        ([1.0, 2.0, 3.0], "2-D"),
        ([[1.0, 2.0]], "at least 2 rows"),
        ([[1.0], [2.0]], "at least 2 columns"),
        ([[1.0, np.nan], [2.0, 3.0]], "NaN"),
        ([[1.0, np.inf], [2.0, 3.0]], "infinite"),
        ([["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_bad_ratings_raise_value_error(ratings: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        icc(ratings, "2,1")  # type: ignore[arg-type]


def test_bad_form_and_confidence_raise_value_error() -> None:
    with pytest.raises(ValueError, match="unknown ICC form"):
        icc(SHROUT_FLEISS, "2,4")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="confidence"):
        icc(SHROUT_FLEISS, confidence=1.0)
    with pytest.raises(ValueError, match="counts must have shape"):
        icc_batch(SHROUT_FLEISS, np.ones((2, 5)))
    with pytest.raises(ValueError, match="non-negative"):
        icc_batch(SHROUT_FLEISS, -np.ones((1, 6)))
