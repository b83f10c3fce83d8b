"""Generalizability (G) studies by REML on unbalanced data with crossed and nested facets.

A G study splits the variance of the scores into components, one per facet of the design and per
interaction that is estimated (Brennan 2001; Shavelson & Webb 1991). Pure numpy/scipy.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

from snap_bench.stats._validation import FloatArray, check_confidence
from snap_bench.stats.errors import UndefinedStatistic
from snap_bench.stats.g_study_design import GStudyDesign
from snap_bench.stats.reml import RemlProblem, combined_codes, fit_reml, term_indicators

__all__ = [
    "CELL",
    "RESIDUAL_EFFECT",
    "GStudy",
    "IntervalEstimate",
    "VarianceComponent",
    "g_study",
]

#: Name of the component of the cells' remaining interactions (present when the design has a replicate).
CELL: Final = "cell"
#: Name of the residual component: replications within a cell (run to run) when the design names a
#: replicate, else the highest-order interaction confounded with error (Brennan's "pio,e").
RESIDUAL_EFFECT: Final = "residual"


@dataclass(frozen=True, slots=True)
class IntervalEstimate:
    """A point estimate with its confidence interval."""

    value: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, slots=True)
class VarianceComponent:
    """One estimated variance component.

    Attributes
    ----------
    effect : str
        The term in Brennan's notation (``"item"``, ``"paraphrase:item"``, ``"item x system_prompt"``),
        ``"cell"`` or ``"residual"``.
    members : frozenset of str
        The label columns the term is made of (the residual: every column, replicate included).
    variance : float
        The REML estimate, in squared score units; never negative (see :func:`g_study`).
    ci_low, ci_high : float
        Satterthwaite interval at the study's confidence (see :func:`g_study`, Notes).
    df : float
        Satterthwaite degrees of freedom ``2 v^2 / Var(v)``; 0 on the boundary.
    share : float
        ``variance`` over the sum of all components (0 when every component is 0).
    n_levels : int
        Levels of the term present in the data (the residual: scored observations).
    at_boundary : bool
        The unconstrained REML maximum lies at or below 0, so the estimate is 0.
    """

    effect: str
    members: frozenset[str]
    variance: float
    ci_low: float
    ci_high: float
    df: float
    share: float
    n_levels: int
    at_boundary: bool


@dataclass(frozen=True)
class GStudy:
    """The result of :func:`g_study`.

    Attributes
    ----------
    design : GStudyDesign
    components : tuple of VarianceComponent
        Object, facets, interactions, ``"cell"`` (with a replicate), ``"residual"``.
    covariance : numpy.ndarray
        Asymptotic covariance of the component estimates (inverse expected REML information), in
        the order of ``components``.
    sample_sizes : dict of str to float
        The G study's own number of conditions per facet (per nest for a nested facet; mean
        replications per cell for the replicate): the default counts of a D study.
    mean : float
        Generalized least-squares grand mean.
    n_observations, n_missing : int
        Scores used, and NaN scores left out.
    confidence : float
    log_likelihood : float
        Maximised restricted log-likelihood (without its constant) of the standardised scores, for
        likelihood-ratio tests between designs fitted to the same scores.
    fixed_at_zero : tuple of str
        Components constrained to 0 by ``without`` (for such tests).
    """

    design: GStudyDesign
    components: tuple[VarianceComponent, ...]
    covariance: FloatArray
    sample_sizes: dict[str, float]
    mean: float
    n_observations: int
    n_missing: int
    confidence: float
    log_likelihood: float
    fixed_at_zero: tuple[str, ...] = ()

    def component(self, effect: str) -> VarianceComponent:
        """The component named ``effect``; ValueError naming the legal names if there is none."""
        for candidate in self.components:
            if candidate.effect == effect:
                return candidate
        raise ValueError(f"no component {effect!r}; the study has {[c.effect for c in self.components]}")

    @property
    def run_to_run_sd(self) -> IntervalEstimate:
        """Square root of the residual component, in scale points, with the square roots of its bounds.

        With a replicate in the design this is the standard deviation of one answer around the mean
        of its cell: the run-to-run standard error of a single answer.
        """
        residual = self.component(RESIDUAL_EFFECT)
        return IntervalEstimate(math.sqrt(residual.variance), math.sqrt(residual.ci_low), math.sqrt(residual.ci_high))


def g_study(
    scores: npt.ArrayLike,
    labels: Mapping[str, Sequence[Hashable]],
    design: GStudyDesign,
    *,
    confidence: float = 0.95,
    without: Sequence[str] = (),
    intervals: bool = True,
    start: Sequence[float] | None = None,
) -> GStudy:
    r"""Variance components of a random-effects G study by restricted maximum likelihood (REML).

    The model is :math:`X = \mu + \sum_k \nu_k + e`, one random effect :math:`\nu_k \sim N(0,
    \sigma^2_k)` per term of ``design`` (independent across levels and terms), and the components
    :math:`\sigma^2_k` maximise the restricted likelihood (Patterson & Thompson 1971) of the scores
    that are present, so unbalanced designs and missing cells need no imputation. On balanced data
    whose ANOVA estimates are all non-negative, REML equals the expected-mean-square (ANOVA)
    solution (Searle, Casella & McCulloch 1992, ch. 6); Brennan (2001, ch. 3) tabulates that
    solution for the classic designs.

    Parameters
    ----------
    scores : array_like, shape (n,)
        One score per observation; NaN marks a missing (unscored) answer, left out and counted.
    labels : mapping of str to sequence of hashable
        Every column named by ``design`` -> one label per score.
    design : GStudyDesign
        Object of measurement, facets, nesting, interactions and replicate.
    confidence : float
        Level of the components' intervals.
    without : sequence of str
        Component names held at 0 (for likelihood-ratio tests against the full design).
    intervals : bool
        False: point estimates only (no information matrix; every component's interval is NaN and the
        covariance 0), for refits whose intervals are not read (the upgrade gate's jackknife).
    start : sequence of float, optional
        Starting shares of the components (as ``VarianceComponent.share`` of an earlier fit of similar
        data, in the order of ``components``): a refit with one item left out then converges in a few
        steps. The maximum found is the same up to the optimiser's tolerance.

    Returns
    -------
    GStudy

    Raises
    ------
    ValueError
        Scores not 1-D numeric, infinite, fewer than two present; a label column missing or of the
        wrong length; a design naming unknown facets; a replicate that never repeats within a cell.
    UndefinedStatistic
        The present scores have zero variance (every component would be 0 and no share exists).

    Notes
    -----
    **Estimation.** Scores are reduced to cell means (a cell is a combination of the object and the
    facets) and the within-cell sum of squares; the restricted likelihood factorises exactly into a
    within-cell part (replicate variance only) and a part for the cell means with covariance
    :math:`V = Z D Z' + \mathrm{diag}(\sigma^2_{cell} + \sigma^2_e / n_c)`, evaluated with the
    Woodbury identity. L-BFGS-B with the analytic gradient
    :math:`\partial \ell / \partial \sigma^2_k = -\tfrac12[\mathrm{tr}(P V_k) - y'P V_k P y]` maximises it.

    **Negative estimates.** The maximum is taken over :math:`\sigma^2_k \ge 0` (constrained REML),
    so a component whose unconstrained estimate would be negative is 0 (``at_boundary``) and the
    other components are re-estimated with it at 0 (unlike ANOVA's "set negatives to zero", which
    leaves the others unchanged; Brennan 2001, sec. 3.4).

    **Intervals.** Satterthwaite (1946) chi-square intervals
    :math:`[\nu \hat\sigma^2 / \chi^2_{1-\alpha/2,\nu},\ \nu \hat\sigma^2 / \chi^2_{\alpha/2,\nu}]`
    with :math:`\nu = 2\hat\sigma^4 / \widehat{\mathrm{Var}}(\hat\sigma^2)` and the variance from the
    inverse expected REML information (Searle et al. 1992, sec. 6.3). A component at 0 gets
    :math:`[0, z_{1-\alpha/2} \mathrm{SE}]`. Their coverage at the profile's design size is measured
    by ``python -m bench.validity``.

    References
    ----------
    Brennan, R. L. (2001). *Generalizability Theory*. Springer.
    Patterson, H. D., & Thompson, R. (1971). Recovery of inter-block information when block sizes
    are unequal. *Biometrika*, 58, 545-554.
    Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance components.
    *Biometrics Bulletin*, 2, 110-114.
    Searle, S. R., Casella, G., & McCulloch, C. E. (1992). *Variance Components*. Wiley.
    """
    level = check_confidence(confidence)
    terms = design.terms()
    y, codes, n_missing = _present_scores(scores, labels, design)
    centre, spread = float(np.mean(y)), float(np.std(y))
    if spread <= 1e-12 * max(1.0, abs(centre)):
        raise UndefinedStatistic("G study", "zero variance of the scores")
    problem, names, n_levels = _reml_problem((y - centre) / spread, codes, design, terms, without)
    fit = fit_reml(problem, start, intervals=intervals)
    scale = spread**2
    covariance: FloatArray = np.asarray(fit.covariance * scale**2, dtype=np.float64)
    cell_members = [frozenset(design.cell_columns())] if problem.has_cell else []
    components = _components(
        names,
        [*terms, *cell_members, frozenset(design.columns())],
        n_levels,
        fit.estimate * scale,
        covariance,
        at_boundary=(fit.estimate == 0.0) & problem.free,
        level=level,
        intervals=intervals,
    )
    return GStudy(
        design=design,
        components=components,
        covariance=covariance,
        sample_sizes=_sample_sizes(design, codes, y.size, problem.counts),
        mean=centre + spread * fit.mean,
        n_observations=y.size,
        n_missing=n_missing,
        confidence=level,
        log_likelihood=fit.log_likelihood,
        fixed_at_zero=tuple(without),
    )


def _present_scores(
    scores: npt.ArrayLike, labels: Mapping[str, Sequence[Hashable]], design: GStudyDesign
) -> tuple[FloatArray, dict[str, npt.NDArray[np.intp]], int]:
    """The scores that are present, the codes of every design column's labels for them, and how many are NaN."""
    try:
        values = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"scores must be numeric: {error}") from None
    if values.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {values.shape}")
    if np.isinf(values).any():
        raise ValueError("scores contain infinite values")
    n_total = values.size
    missing = np.isnan(values)
    for name in design.columns():
        if name not in labels:
            raise ValueError(f"labels have no column {name!r}; the design needs {list(design.columns())}")
    codes = {name: _codes(labels[name], name, n_total)[~missing] for name in design.columns()}
    y = values[~missing]
    if y.size < 2:
        raise ValueError(f"a G study needs at least 2 scores, got {y.size}")
    return y, codes, int(missing.sum())


def _reml_problem(
    standard: FloatArray,
    codes: Mapping[str, npt.NDArray[np.intp]],
    design: GStudyDesign,
    terms: Sequence[frozenset[str]],
    without: Sequence[str],
) -> tuple[RemlProblem, list[str], list[int]]:
    """The REML problem of the standardised scores reduced to their cells, with the name of every
    component and its number of levels in the data."""
    n = standard.size
    cell = combined_codes([codes[name] for name in design.cell_columns()], n)
    n_cells = int(cell.max()) + 1
    counts = np.bincount(cell, minlength=n_cells).astype(np.float64)
    cell_means = np.bincount(cell, standard, n_cells) / counts
    ss_within = float(np.sum((standard - cell_means[cell]) ** 2))
    df_within = float(n - n_cells)
    has_cell = design.replicate is not None
    if has_cell and df_within <= 0:
        raise ValueError(f"no cell has two {design.replicate!r} replications: the cell component is not identified")
    term_columns = [[codes[name] for name in design.columns() if name in term] for term in terms]
    z, term_of_column, term_levels = term_indicators(term_columns, cell)
    # A term that already spans every cell (a paraphrase nested in its item when no other facet varies)
    # is the cell component under its own name: no second one is estimated.
    has_cell = has_cell and n_cells not in term_levels
    names = [*(design.name(term) for term in terms), *([CELL] if has_cell else []), RESIDUAL_EFFECT]
    unknown = set(without) - set(names)
    if unknown:
        raise ValueError(f"without names unknown component(s) {sorted(unknown)}; the study has {names}")
    problem = RemlProblem(
        z=z,
        term_of_column=term_of_column,
        n_terms=len(terms),
        has_cell=has_cell,
        counts=counts,
        cell_means=cell_means,
        ss_within=ss_within,
        df_within=df_within,
        free=np.array([name not in without for name in names]),
    )
    return problem, names, [*term_levels, *([n_cells] if has_cell else []), n]


def _components(
    names: Sequence[str],
    members: Sequence[frozenset[str]],
    n_levels: Sequence[int],
    variances: FloatArray,
    covariance: FloatArray,
    *,
    at_boundary: npt.NDArray[np.bool_],
    level: float,
    intervals: bool,
) -> tuple[VarianceComponent, ...]:
    """The estimated components, each with its Satterthwaite interval (NaN without intervals)."""
    total = float(np.sum(variances))
    z_value = float(scipy_stats.norm.ppf(0.5 + level / 2))
    components = []
    for index, name in enumerate(names):
        variance = float(variances[index])
        sampling = max(float(covariance[index, index]), 0.0)
        df, low, high = _satterthwaite(variance, sampling, level, z_value) if intervals else (0.0, math.nan, math.nan)
        components.append(
            VarianceComponent(
                effect=name,
                members=members[index],
                variance=variance,
                ci_low=low,
                ci_high=high,
                df=df,
                share=variance / total if total > 0 else 0.0,
                n_levels=n_levels[index],
                at_boundary=bool(at_boundary[index]),
            )
        )
    return tuple(components)


def _satterthwaite(variance: float, sampling: float, level: float, z_value: float) -> tuple[float, float, float]:
    """Degrees of freedom and chi-square interval of a variance estimate with sampling variance ``sampling``."""
    if variance > 0 and sampling > 0:
        df = 2.0 * variance**2 / sampling
        upper_quantile = float(scipy_stats.chi2.ppf(0.5 + level / 2, df))
        # df near 0 (an estimate far smaller than its standard error): the bound is 0
        low = df * variance / upper_quantile if upper_quantile > 0 else 0.0
        lower_quantile = float(scipy_stats.chi2.ppf(0.5 - level / 2, df))
        high = df * variance / lower_quantile if lower_quantile > 0 else math.inf
        return df, low, high
    return 0.0, 0.0, (variance if variance > 0 else z_value * math.sqrt(sampling))


def _codes(labels: Sequence[Hashable], name: str, n: int) -> npt.NDArray[np.intp]:
    if len(labels) != n:
        raise ValueError(f"label column {name!r} has {len(labels)} labels for {n} scores; give one per score")
    mapping: dict[Hashable, int] = {}
    try:
        return np.fromiter((mapping.setdefault(label, len(mapping)) for label in labels), dtype=np.intp, count=n)
    except TypeError as error:
        raise ValueError(f"label column {name!r} has an unhashable label: {error}") from None


def _sample_sizes(
    design: GStudyDesign, codes: Mapping[str, npt.NDArray[np.intp]], n_scores: int, counts: FloatArray
) -> dict[str, float]:
    """Conditions per facet in the data: levels per nest for a nested facet, mean replications per cell."""
    sizes: dict[str, float] = {}
    for facet in design.facets:
        nest = sorted(design.nest_closure(facet) - {facet})
        with_facet = combined_codes([codes[name] for name in [*nest, facet]], n_scores)
        nests = combined_codes([codes[name] for name in nest], n_scores)
        sizes[facet] = (int(with_facet.max()) + 1) / (int(nests.max()) + 1)
    if design.replicate:
        sizes[design.replicate] = float(np.mean(counts))
    return sizes
