"""Pure reliability and sensitivity statistics for snap-bench (numpy/scipy only; no pytest, no pandas).

Every function validates its input, raises :class:`ValueError` on malformed data and
:class:`UndefinedStatistic` (a ValueError with a ``reason``) when the statistic has no value on the
data, and never returns a silent NaN or a rounded number. The ``*_batch`` variants take row
multiplicities (``counts``, one row per bootstrap resample) and compute the statistic for every
resample with one matrix product: pass them to :func:`bootstrap_ci` with ``vectorized=True``.
"""

from __future__ import annotations

from snap_bench.stats._validation import FloatArray
from snap_bench.stats.agreement import all_runs_agree_share, all_runs_agree_share_batch
from snap_bench.stats.bootstrap import (
    BOOTSTRAP_METHODS,
    BootstrapCI,
    BootstrapMethod,
    CountsStatistic,
    Statistic,
    bootstrap_ci,
)
from snap_bench.stats.categorical import (
    category_counts,
    fleiss_kappa,
    interval_squared_errors,
    modal_share,
    mse_accuracy,
)
from snap_bench.stats.correlation import (
    DEFAULT_MAX_ABS_R,
    PairwiseCorrelation,
    mean_pairwise_r,
    mean_pairwise_r_batch,
)
from snap_bench.stats.cronbach import cronbach_alpha, cronbach_alpha_batch, cronbach_alpha_ci
from snap_bench.stats.effect_size import RESIDUAL, eta_squared
from snap_bench.stats.errors import UndefinedStatistic
from snap_bench.stats.icc import ICC_FORMS, ICCForm, ICCResult, icc, icc_batch
from snap_bench.stats.krippendorff import KRIPPENDORFF_LEVELS, KrippendorffLevel, krippendorff_alpha
from snap_bench.stats.position import (
    AXIS_SCALE,
    axis_coordinate,
    axis_coordinate_batch,
    coordinate_spread_batch,
    two_way_bootstrap_ci,
)
from snap_bench.stats.variation import (
    CoefficientOfVariation,
    coefficient_of_variation,
    coefficient_of_variation_batch,
)

__all__ = [
    "AXIS_SCALE",
    "BOOTSTRAP_METHODS",
    "DEFAULT_MAX_ABS_R",
    "ICC_FORMS",
    "KRIPPENDORFF_LEVELS",
    "RESIDUAL",
    "BootstrapCI",
    "BootstrapMethod",
    "CoefficientOfVariation",
    "CountsStatistic",
    "FloatArray",
    "ICCForm",
    "ICCResult",
    "KrippendorffLevel",
    "PairwiseCorrelation",
    "Statistic",
    "UndefinedStatistic",
    "all_runs_agree_share",
    "all_runs_agree_share_batch",
    "axis_coordinate",
    "axis_coordinate_batch",
    "bootstrap_ci",
    "category_counts",
    "coefficient_of_variation",
    "coefficient_of_variation_batch",
    "coordinate_spread_batch",
    "cronbach_alpha",
    "cronbach_alpha_batch",
    "cronbach_alpha_ci",
    "eta_squared",
    "fleiss_kappa",
    "icc",
    "icc_batch",
    "interval_squared_errors",
    "krippendorff_alpha",
    "mean_pairwise_r",
    "mean_pairwise_r_batch",
    "modal_share",
    "mse_accuracy",
    "two_way_bootstrap_ci",
]
