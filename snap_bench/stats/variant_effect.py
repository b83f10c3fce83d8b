"""How much the rewording itself moves accuracy, net of the noise of which inputs were drawn.

The max-min of 16 variant accuracies on 50 inputs is large even when the wording does nothing: each
accuracy carries the sampling noise of its answers. The figure here is the variance component of the
variant in a two-way mixed model, inputs a random effect and variants the effect of interest, fitted by
the method of moments (two-way ANOVA without replication, as for ICC(2,1)):

    e[u, v] = mu + a_u + b_v + eps,   E[MS_variant] = s2_eps + N tau2,   E[MS_residual] = s2_eps

so ``tau2 = max(0, (MS_variant - MS_residual) / N)`` on the normalised squared errors (error / worst
penalty, so 1 - mean is the custom accuracy and tau is in accuracy units). The noise-corrected spread is
the best minus worst of the variants' shrunken effects (their best linear unbiased predictions): each
observed effect times ``tau2 / (tau2 + MS_residual / N)``, the share of its variance that is the variant's
and not the inputs'. With no variant effect it is near 0 whatever the noise (the observed max-min of 16
variants on 50 inputs is about 0.19 then); with no noise it is the observed spread; with both it still
carries part of the noise of the extreme variants, less than the observed spread. It assumes no shape of
the effects (a normal-range figure, ``d_V x tau``, would overstate two
groups of variants). An unscored answer is replaced by its input's
mean over the variants that scored it (so it carries no variant effect) and costs the residual one
degree of freedom; an input no variant scored is left out.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

from snap_bench.stats._validation import FloatArray


def _filled(matrix: FloatArray) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_]]:
    """(errors with each unscored cell set to its row mean, imputed cells per row, rows with a score)."""
    data = np.asarray(matrix, dtype=np.float64)
    missing = np.isnan(data)
    usable: npt.NDArray[np.bool_] = np.asarray(~missing.all(axis=1), dtype=np.bool_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an input no variant scored: its mean is NaN
        row_means = np.nanmean(data, axis=1)
    filled: FloatArray = np.where(missing, row_means[:, None], data)
    filled[~usable] = 0.0
    imputed: FloatArray = missing.sum(axis=1).astype(np.float64)
    return filled, imputed, usable


def variance_components_batch(
    matrix: FloatArray, counts: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per resample (rows of ``counts``): (MS_variant, MS_residual, N, the variants' observed effects)."""
    filled, imputed, usable = _filled(matrix)
    weights = np.asarray(counts, dtype=np.float64) * usable[None, :]
    n_variants = filled.shape[1]
    total = weights.sum(axis=1)
    centred = filled - filled.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        # weighted mean over units of the row-centred errors = variant effect (column mean - grand mean)
        effects = (weights @ centred) / total[:, None]
        ms_variant = total * np.sum(effects**2, axis=1) / (n_variants - 1)
        ss_residual = np.sum(weights @ centred**2, axis=1) - total * np.sum(effects**2, axis=1)
        df_residual = (total - 1) * (n_variants - 1) - weights @ imputed
        ms_residual = np.where(df_residual > 0, ss_residual / df_residual, np.nan)
    return ms_variant, ms_residual, total, effects


def _tau2(ms_variant: FloatArray, ms_residual: FloatArray, total: FloatArray) -> FloatArray:
    with np.errstate(invalid="ignore", divide="ignore"):
        result: FloatArray = np.where(total >= 2, np.maximum(0.0, (ms_variant - ms_residual) / total), np.nan)
    return result


def variant_sd_batch(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """tau: the SD of the variants' true accuracies, net of input noise; NaN where undefined."""
    ms_variant, ms_residual, total, _ = variance_components_batch(matrix, counts)
    result: FloatArray = np.sqrt(_tau2(ms_variant, ms_residual, total))
    return result


def corrected_spread_batch(matrix: FloatArray, counts: FloatArray) -> FloatArray:
    """The noise-corrected best-minus-worst: the range of the variants' shrunken effects."""
    ms_variant, ms_residual, total, effects = variance_components_batch(matrix, counts)
    tau2 = _tau2(ms_variant, ms_residual, total)
    with np.errstate(invalid="ignore", divide="ignore"):
        noise = np.where(ms_residual > 0, ms_residual / total, 0.0)
        shrink = np.where(tau2 > 0, tau2 / (tau2 + noise), 0.0)
    result: FloatArray = np.where(np.isnan(tau2), np.nan, shrink * np.ptp(effects, axis=1))
    return result


def variant_f_test(matrix: FloatArray) -> tuple[float, float, float, float]:
    """(F, df variant, df residual, p) of "the variants do not differ", inputs as blocks."""
    from scipy.stats import f as f_distribution

    ms_variant, ms_residual, total, _ = variance_components_batch(matrix, np.ones((1, np.asarray(matrix).shape[0])))
    filled, imputed, usable = _filled(matrix)
    df1 = float(filled.shape[1] - 1)
    df2 = float((total[0] - 1) * df1 - imputed[usable].sum())
    if not ms_residual[0] > 0 or df2 <= 0:
        return float("nan"), df1, df2, float("nan")
    statistic = float(ms_variant[0] / ms_residual[0])
    return statistic, df1, df2, float(f_distribution.sf(statistic, df1, df2))
