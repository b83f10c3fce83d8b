"""Generalizability (G) and decision (D) studies by REML on unbalanced data with crossed and nested facets.

A G study splits the variance of the scores into components, one per facet of the design and per
interaction that is estimated; a D study turns the components into coefficients and standard errors
for a chosen number of conditions per facet (Brennan 2001; Shavelson & Webb 1991). Pure numpy/scipy.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize as scipy_optimize
from scipy import stats as scipy_stats
from scipy.linalg import lapack as scipy_lapack

from snap_bench.stats._validation import FloatArray, check_confidence
from snap_bench.stats.errors import UndefinedStatistic

__all__ = [
    "CELL",
    "RESIDUAL_EFFECT",
    "DecisionStudy",
    "GStudy",
    "GStudyDesign",
    "IntervalEstimate",
    "VarianceComponent",
    "decision_study",
    "g_study",
    "smallest_count",
    "spread_interval",
]

#: Name of the component of the cells' remaining interactions (present when the design has a replicate).
CELL: Final = "cell"
#: Name of the residual component: replications within a cell (run to run) when the design names a
#: replicate, else the highest-order interaction confounded with error (Brennan's "pio,e").
RESIDUAL_EFFECT: Final = "residual"

Coefficient = Literal["g", "phi"]
Estimand = Literal["sampled", "shipped"]

# Estimates below this fraction of the score variance are reported as exactly 0 (on the boundary).
_BOUNDARY = 1e-9
# The residual variance is kept above this fraction of the score variance so that V stays invertible
# when the runs of every cell agree (a deterministic model at temperature 0).
_RESIDUAL_FLOOR = 1e-10


@dataclass(frozen=True)
class GStudyDesign:
    """Which facets a G study estimates, which are nested in which, and which interactions it fits.

    Parameters
    ----------
    object_of_measurement : str
        The label column whose levels are measured (the universe score varies over them), e.g. ``"item"``.
    facets : sequence of str
        The random facets of generalization, e.g. ``("paraphrase", "system_prompt", "temperature")``.
        Every facet's main effect is estimated (for a nested facet: its effect within its nest).
    nested : mapping of str to sequence of str
        Facet -> the facets (or object) it is nested in: ``{"paraphrase": ("item",)}`` says that
        paraphrase P1 of one item is not the same condition as P1 of another. Every term that names a
        nested facet includes its nest.
    interactions : sequence of sequence of str
        Further terms to estimate, e.g. ``(("item", "system_prompt"), ("item", "temperature"))``.
    replicate : str, optional
        The label column of replications within a cell (e.g. ``"run"``). When given, a ``"cell"``
        component (every interaction not listed above) is estimated and the residual is pure
        replication noise; without it the residual is confounded with the highest-order interaction.
    """

    object_of_measurement: str
    facets: tuple[str, ...]
    nested: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    interactions: tuple[tuple[str, ...], ...] = ()
    replicate: str | None = None

    def columns(self) -> tuple[str, ...]:
        """The label columns the design reads, object first, replicate last."""
        tail = (self.replicate,) if self.replicate else ()
        return (self.object_of_measurement, *self.facets, *tail)

    def nest_closure(self, name: str) -> frozenset[str]:
        """``name`` and every facet it is nested in, transitively."""
        members = {name}
        pending = [name]
        while pending:
            for outer in self.nested.get(pending.pop(), ()):
                if outer not in members:
                    members.add(outer)
                    pending.append(outer)
        return frozenset(members)

    def terms(self) -> list[frozenset[str]]:
        """The random terms in order: object, facets, interactions (duplicates removed)."""
        known = {self.object_of_measurement, *self.facets}
        if len(known) != 1 + len(self.facets):
            raise ValueError("the object of measurement and the facets must be distinct names")
        if self.replicate in known:
            raise ValueError(f"the replicate {self.replicate!r} cannot also be a facet")
        for facet, nest in self.nested.items():
            unknown = {facet, *nest} - known
            if unknown:
                raise ValueError(f"nesting names unknown facet(s) {sorted(unknown)}; declare them in facets")
            if facet in self.nest_closure(facet) - {facet} or facet in nest:
                raise ValueError(f"facet {facet!r} is nested in itself")
        terms: list[frozenset[str]] = []
        for group in [(self.object_of_measurement,), *((f,) for f in self.facets), *self.interactions]:
            unknown = set(group) - known
            if unknown:
                raise ValueError(f"interaction names unknown facet(s) {sorted(unknown)}")
            term = frozenset().union(*(self.nest_closure(name) for name in group))
            if term not in terms:
                terms.append(term)
        return terms

    def name(self, term: frozenset[str]) -> str:
        """Brennan's notation: crossed members joined by `` x ``, then ``:`` and the nest, e.g. ``p x r:t``."""
        order = self.columns()
        nesting = {outer for member in term for outer in self.nest_closure(member) - {member}}
        primary = [name for name in order if name in term and name not in nesting]
        inner = [name for name in order if name in nesting]
        label = " x ".join(primary)
        return f"{label}:{' x '.join(inner)}" if inner else label


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


@dataclass(frozen=True, slots=True)
class DecisionStudy:
    """Coefficients and error variances of a measurement averaged over ``counts`` conditions per facet.

    Attributes
    ----------
    counts : dict of str to float
        Conditions per facet (and replications per cell) the measurement averages over.
    universe_variance : float
        sigma^2(tau): the object-of-measurement component.
    relative_error_variance, absolute_error_variance : float
        sigma^2(delta) and sigma^2(Delta).
    g : IntervalEstimate
        Generalizability coefficient E rho^2 = tau / (tau + delta), with its interval.
    phi : IntervalEstimate
        Dependability coefficient Phi = tau / (tau + Delta), with its interval.
    sem_relative, sem_absolute : float
        sqrt(delta) and sqrt(Delta), in scale points.
    """

    counts: dict[str, float]
    universe_variance: float
    relative_error_variance: float
    absolute_error_variance: float
    g: IntervalEstimate
    phi: IntervalEstimate
    sem_relative: float
    sem_absolute: float


def _codes(labels: Sequence[Hashable], name: str, n: int) -> npt.NDArray[np.intp]:
    if len(labels) != n:
        raise ValueError(f"label column {name!r} has {len(labels)} labels for {n} scores; give one per score")
    mapping: dict[Hashable, int] = {}
    try:
        return np.fromiter((mapping.setdefault(label, len(mapping)) for label in labels), dtype=np.intp, count=n)
    except TypeError as error:
        raise ValueError(f"label column {name!r} has an unhashable label: {error}") from None


def _combine(columns: list[npt.NDArray[np.intp]], n: int) -> npt.NDArray[np.intp]:
    """One integer code per distinct combination of the given code columns."""
    if not columns:
        return np.zeros(n, dtype=np.intp)
    stacked = np.column_stack(columns)
    _, inverse = np.unique(stacked, axis=0, return_inverse=True)
    return np.asarray(inverse, dtype=np.intp).reshape(-1)


# The REML objective factorises and solves small matrices a thousand times a fit: LAPACK is called
# directly, as scipy.linalg's cho_factor, cho_solve and solve_triangular call it, without their
# finiteness checks and batching wrappers (about a third of a replay's G-study time). Same routines,
# same results.


def _lapack_result(output: tuple[FloatArray, int], routine: str, failure: str) -> FloatArray:
    """A LAPACK routine's array, raising as scipy.linalg does: LinAlgError for ``failure`` (info > 0),
    ValueError for a bad argument (info < 0)."""
    array, info = output
    if info > 0:
        raise np.linalg.LinAlgError(failure.format(info=info))
    if info < 0:
        raise ValueError(f"illegal value in {-info}-th argument of internal {routine}")
    return array


def _cholesky(matrix: FloatArray) -> FloatArray:
    """The lower Cholesky factor (the upper triangle is left as it was: only the lower one is read)."""
    output = scipy_lapack.dpotrf(matrix, lower=1, clean=0)
    return _lapack_result(output, "potrf", "{info}-th leading minor not positive definite")


def _cho_solve(factor: FloatArray, rhs: FloatArray) -> FloatArray:
    """x with L L' x = rhs, L from :func:`_cholesky`."""
    return _lapack_result(scipy_lapack.dpotrs(factor, rhs, lower=1), "potrs", "")


def _solve_lower(factor: FloatArray, rhs: FloatArray) -> FloatArray:
    """x with L x = rhs, L lower triangular."""
    output = scipy_lapack.dtrtrs(factor, rhs, lower=1)
    return _lapack_result(output, "trtrs", "singular matrix: zero at diagonal {info}")


@dataclass
class _Problem:
    """The cell-level sufficient statistics of a REML fit (scores standardised)."""

    z: FloatArray  # cells x q indicator matrix of the random terms
    term_of_column: npt.NDArray[np.intp]
    n_terms: int
    has_cell: bool
    counts: FloatArray  # scores per cell
    cell_means: FloatArray
    ss_within: float
    df_within: float
    free: npt.NDArray[np.bool_]  # parameters that are estimated (others fixed at 0)

    @property
    def n_parameters(self) -> int:
        return self.n_terms + int(self.has_cell) + 1

    def split(self, params: FloatArray) -> tuple[FloatArray, float, float]:
        terms = params[: self.n_terms]
        cell = float(params[self.n_terms]) if self.has_cell else 0.0
        return terms, cell, float(params[-1])

    def pieces(self, params: FloatArray) -> dict[str, FloatArray | float]:
        terms, cell, residual = self.split(params)
        r = cell + residual / self.counts
        w = 1.0 / r
        t = np.sqrt(terms[self.term_of_column])
        zw = self.z * w[:, None]
        a = self.z.T @ zw
        m = np.eye(len(t)) + t[:, None] * a * t[None, :]
        chol = _cholesky(m)
        ones = np.ones_like(self.cell_means)
        u = np.column_stack([ones, self.cell_means])
        s = t[:, None] * (zw.T @ u)
        uvu = u.T @ (w[:, None] * u) - s.T @ _cho_solve(chol, s)
        s1 = float(uvu[0, 0])
        mean = float(uvu[0, 1] / s1)
        ypy = float(uvu[1, 1] - uvu[0, 1] ** 2 / s1)
        logdet = float(np.sum(np.log(r)) + 2.0 * np.sum(np.log(np.diag(chol))))
        return {"r": r, "w": w, "t": t, "zw": zw, "a": a, "chol_l": chol, "s1": s1, "mean": mean, "ypy": ypy,
                "logdet": logdet}  # fmt: skip

    def objective(self, params: FloatArray) -> tuple[float, FloatArray]:
        """Negative restricted log-likelihood (constant dropped) and its gradient."""
        p = self.pieces(params)
        w, t, zw, a = (np.asarray(p[k]) for k in ("w", "t", "zw", "a"))
        s1 = float(p["s1"])
        chol = np.asarray(p["chol_l"])
        _, _, residual = self.split(params)
        value = 0.5 * (float(p["logdet"]) + math.log(s1) + float(p["ypy"]))
        if self.df_within > 0:
            value += 0.5 * (self.df_within * math.log(residual) + self.ss_within / residual)

        def v_inverse(x: FloatArray) -> FloatArray:
            result: FloatArray = w * x - zw @ (t * _cho_solve(chol, t * (zw.T @ x)))
            return result

        py = v_inverse(self.cell_means - float(p["mean"]))
        v1 = v_inverse(np.ones_like(self.cell_means))
        zpy = self.z.T @ py
        at = a * t[None, :]
        h = _cho_solve(chol, t[:, None] * a)
        zv1 = self.z.T @ v1
        q_diag = np.diag(a) - np.einsum("ij,ji->i", at, h) - zv1**2 / s1
        gradient = np.zeros(self.n_parameters)
        gradient[: self.n_terms] = 0.5 * (
            np.bincount(self.term_of_column, q_diag, self.n_terms)
            - np.bincount(self.term_of_column, zpy**2, self.n_terms)
        )
        g = _solve_lower(chol, t[:, None] * self.z.T)
        p_diag = w - w**2 * np.sum(g**2, axis=0) - v1**2 / s1
        if self.has_cell:
            gradient[self.n_terms] = 0.5 * (float(np.sum(p_diag)) - float(np.sum(py**2)))
        gradient[-1] = 0.5 * float(np.sum((p_diag - py**2) / self.counts))
        if self.df_within > 0:
            gradient[-1] += 0.5 * (self.df_within / residual - self.ss_within / residual**2)
        gradient[~self.free] = 0.0
        return value, gradient

    def information(self, params: FloatArray) -> FloatArray:
        """Expected restricted information matrix 1/2 tr(P V_j P V_l) of the parameters."""
        p = self.pieces(params)
        w, t = np.asarray(p["w"]), np.asarray(p["t"])
        g = _solve_lower(np.asarray(p["chol_l"]), t[:, None] * self.z.T) * w[None, :]
        v_inverse = np.diag(w) - g.T @ g
        v1 = v_inverse.sum(axis=1)
        projection = v_inverse - np.outer(v1, v1) / float(p["s1"])
        pz = projection @ self.z
        q = self.z.T @ pz
        blocks = [self.term_of_column == k for k in range(self.n_terms)]
        inverse_counts = 1.0 / self.counts
        squared = projection**2
        info = np.zeros((self.n_parameters, self.n_parameters))
        for j in range(self.n_terms):
            for k in range(j, self.n_terms):
                info[j, k] = info[k, j] = 0.5 * float(np.sum(q[np.ix_(blocks[j], blocks[k])] ** 2))
            row_norms = np.sum(pz[:, blocks[j]] ** 2, axis=1)
            if self.has_cell:
                info[j, self.n_terms] = info[self.n_terms, j] = 0.5 * float(np.sum(row_norms))
            info[j, -1] = info[-1, j] = 0.5 * float(np.sum(row_norms * inverse_counts))
        if self.has_cell:
            c = self.n_terms
            info[c, c] = 0.5 * float(np.sum(squared))
            info[c, -1] = info[-1, c] = 0.5 * float(np.sum(squared @ inverse_counts))
        _, _, residual = self.split(params)
        info[-1, -1] = 0.5 * float(inverse_counts @ squared @ inverse_counts)
        if self.df_within > 0:
            info[-1, -1] += 0.5 * self.df_within / residual**2
        return info


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
    n = y.size
    if n < 2:
        raise ValueError(f"a G study needs at least 2 scores, got {n}")
    centre, spread = float(np.mean(y)), float(np.std(y))
    if spread <= 1e-12 * max(1.0, abs(centre)):
        raise UndefinedStatistic("G study", "zero variance of the scores")
    standard = (y - centre) / spread

    cell_columns = [codes[name] for name in (design.object_of_measurement, *design.facets)]
    cell = _combine(cell_columns, n)
    n_cells = int(cell.max()) + 1
    counts = np.bincount(cell, minlength=n_cells).astype(np.float64)
    cell_means = np.bincount(cell, standard, n_cells) / counts
    ss_within = float(np.sum((standard - cell_means[cell]) ** 2))
    df_within = float(n - n_cells)
    has_cell = design.replicate is not None
    if has_cell and df_within <= 0:
        raise ValueError(f"no cell has two {design.replicate!r} replications: the cell component is not identified")

    first_row = np.zeros(n_cells, dtype=np.intp)
    first_row[cell[::-1]] = np.arange(n)[::-1]
    columns: list[FloatArray] = []
    term_of_column: list[int] = []
    term_levels: list[int] = []
    for index, term in enumerate(terms):
        level_codes = _combine([codes[name][first_row] for name in design.columns() if name in term], n_cells)
        n_levels = int(level_codes.max()) + 1
        indicator = np.zeros((n_cells, n_levels))
        indicator[np.arange(n_cells), level_codes] = 1.0
        columns.append(indicator)
        term_of_column.extend([index] * n_levels)
        term_levels.append(n_levels)
    names = [design.name(term) for term in terms]
    # A term that already spans every cell (a paraphrase nested in its item when no other facet varies)
    # is the cell component under its own name: no second one is estimated.
    has_cell = has_cell and n_cells not in term_levels
    all_names = [*names, *([CELL] if has_cell else []), RESIDUAL_EFFECT]
    unknown = set(without) - set(all_names)
    if unknown:
        raise ValueError(f"without names unknown component(s) {sorted(unknown)}; the study has {all_names}")
    free = np.array([name not in without for name in all_names])
    problem = _Problem(
        z=np.hstack(columns),
        term_of_column=np.asarray(term_of_column, dtype=np.intp),
        n_terms=len(terms),
        has_cell=has_cell,
        counts=counts,
        cell_means=cell_means,
        ss_within=ss_within,
        df_within=df_within,
        free=free,
    )
    n_parameters = problem.n_parameters
    if start is not None and len(start) == n_parameters:
        # Shares of the total are the components of the standardised scores (total variance about 1);
        # a share at 0 starts slightly inside the bound so that the optimiser can move it.
        start_values = np.where(free, np.maximum(np.asarray(start, dtype=np.float64), 1e-4), 0.0)
    else:
        start_values = np.where(free, 1.0 / n_parameters, 0.0)
    bounds = [(0.0, 0.0) if not keep else (0.0, None) for keep in free]
    bounds[-1] = (_RESIDUAL_FLOOR, None)
    with _single_threaded_blas():
        fit = scipy_optimize.minimize(
            problem.objective,
            start_values,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-10},
        )
    estimate = np.where(fit.x < _BOUNDARY, 0.0, fit.x)
    log_likelihood = -float(problem.objective(np.maximum(fit.x, np.array([b[0] for b in bounds])))[0])
    if intervals:
        with _single_threaded_blas():
            covariance_standard = np.linalg.pinv(problem.information(np.maximum(fit.x, _RESIDUAL_FLOOR * free)))
    else:
        covariance_standard = np.zeros((n_parameters, n_parameters))
    covariance_standard[~free, :] = 0.0
    covariance_standard[:, ~free] = 0.0
    scale = spread**2
    variances = estimate * scale
    covariance: FloatArray = np.asarray(covariance_standard * scale**2, dtype=np.float64)
    total = float(np.sum(variances))
    z_value = float(scipy_stats.norm.ppf(0.5 + level / 2))
    levels = [*term_levels, *([n_cells] if has_cell else []), n]
    members = [*terms, *([frozenset(cell_columns_names(design))] if has_cell else []), frozenset(design.columns())]
    components = []
    for index, name in enumerate(all_names):
        variance = float(variances[index])
        sampling = max(float(covariance[index, index]), 0.0)
        if not intervals:
            df, low, high = 0.0, math.nan, math.nan
        elif variance > 0 and sampling > 0:
            df = 2.0 * variance**2 / sampling
            upper_quantile = float(scipy_stats.chi2.ppf(0.5 + level / 2, df))
            # df near 0 (an estimate far smaller than its standard error): the bound is 0
            low = df * variance / upper_quantile if upper_quantile > 0 else 0.0
            lower_quantile = float(scipy_stats.chi2.ppf(0.5 - level / 2, df))
            high = df * variance / lower_quantile if lower_quantile > 0 else math.inf
        else:
            df, low, high = 0.0, 0.0, (variance if variance > 0 else z_value * math.sqrt(sampling))
        components.append(
            VarianceComponent(
                effect=name,
                members=members[index],
                variance=variance,
                ci_low=low,
                ci_high=high,
                df=df,
                share=variance / total if total > 0 else 0.0,
                n_levels=levels[index],
                at_boundary=bool(estimate[index] == 0.0 and free[index]),
            )
        )
    return GStudy(
        design=design,
        components=tuple(components),
        covariance=covariance,
        sample_sizes=_sample_sizes(design, codes, cell, counts),
        mean=centre + spread * float(problem.pieces(np.maximum(fit.x, _RESIDUAL_FLOOR * free))["mean"]),
        n_observations=n,
        n_missing=int(missing.sum()),
        confidence=level,
        log_likelihood=log_likelihood,
        fixed_at_zero=tuple(without),
    )


def _single_threaded_blas() -> contextlib.AbstractContextManager[object]:
    """One BLAS thread while fitting: the matrices are small, and threads only contend (10-50x slower
    on a loaded machine). threadpoolctl comes with pingouin's scikit-learn; without it, nothing changes."""
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
    except ImportError:
        return contextlib.nullcontext()
    limits: contextlib.AbstractContextManager[object] = threadpool_limits(limits=1, user_api="blas")
    return limits


def cell_columns_names(design: GStudyDesign) -> tuple[str, ...]:
    """The label columns that define a cell: the object and every facet (not the replicate)."""
    return (design.object_of_measurement, *design.facets)


def _sample_sizes(
    design: GStudyDesign,
    codes: Mapping[str, npt.NDArray[np.intp]],
    cell: npt.NDArray[np.intp],
    counts: FloatArray,
) -> dict[str, float]:
    """Conditions per facet in the data: levels per nest for a nested facet, mean replications per cell."""
    n = cell.size
    sizes: dict[str, float] = {}
    for facet in design.facets:
        nest = sorted(design.nest_closure(facet) - {facet})
        with_facet = _combine([codes[name] for name in [*nest, facet]], n)
        nests = _combine([codes[name] for name in nest], n)
        sizes[facet] = (int(with_facet.max()) + 1) / (int(nests.max()) + 1)
    if design.replicate:
        sizes[design.replicate] = float(np.mean(counts))
    return sizes


def _sizes(study: GStudy, counts: Mapping[str, float] | None) -> dict[str, float]:
    """The G study's sample sizes with ``counts`` put in (checked: known facets, at least 1 each)."""
    sizes = dict(study.sample_sizes)
    for name, value in (counts or {}).items():
        if name not in sizes:
            raise ValueError(f"unknown facet {name!r} in counts; the study's facets are {sorted(sizes)}")
        if not value >= 1:
            raise ValueError(f"counts must be at least 1, got {name}={value!r}")
        sizes[name] = float(value)
    return sizes


def _weights(study: GStudy, counts: Mapping[str, float]) -> tuple[FloatArray, FloatArray, int]:
    """Per component: its weight in the relative error, in the absolute error; the object's index."""
    design = study.design
    relative = np.zeros(len(study.components))
    absolute = np.zeros(len(study.components))
    universe = -1
    for index, component in enumerate(study.components):
        facets = [name for name in component.members if name != design.object_of_measurement]
        if not facets:
            universe = index
            continue
        divisor = 1.0
        for name in facets:
            divisor *= counts[name]
        absolute[index] = 1.0 / divisor
        if design.object_of_measurement in component.members:
            relative[index] = 1.0 / divisor
    return relative, absolute, universe


def _coefficient(universe: float, error: float) -> float:
    """tau / (tau + E): 1 without error (0 when there is no universe variance either)."""
    if error <= 0:
        return 1.0 if universe > 0 else 0.0
    return universe / (universe + error)


def _coefficient_interval(
    universe: float, error: float, var_universe: float, var_error: float, confidence: float
) -> IntervalEstimate:
    """tau / (tau + E) with an F interval on tau / E using Satterthwaite degrees of freedom."""
    value = _coefficient(universe, error)
    if error <= 0:
        return IntervalEstimate(value, value, value)
    df_error = 2.0 * error**2 / var_error if var_error > 0 else math.inf
    if universe > 0 and not var_universe > 0:
        # The information gave no sampling variance for a positive universe variance (singular at a
        # boundary fit): no interval (NaN), rather than one of zero width that would claim an exact value.
        return IntervalEstimate(value, math.nan, math.nan)
    if universe <= 0:
        z_value = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
        upper = z_value * math.sqrt(max(var_universe, 0.0))
        return IntervalEstimate(value, 0.0, upper / (upper + error))
    df_universe = 2.0 * universe**2 / var_universe
    ratio = universe / error
    low = ratio / float(scipy_stats.f.ppf(0.5 + confidence / 2, df_universe, df_error))
    high = ratio / float(scipy_stats.f.ppf(0.5 - confidence / 2, df_universe, df_error))
    return IntervalEstimate(value, low / (1 + low), high / (1 + high))


def decision_study(
    study: GStudy, counts: Mapping[str, float] | None = None, *, object_levels: Estimand = "sampled"
) -> DecisionStudy:
    r"""Generalizability and dependability of the object's mean over ``counts`` conditions per facet.

    Parameters
    ----------
    study : GStudy
        Components from :func:`g_study`.
    counts : mapping of str to float, optional
        Conditions per facet (per nest for a nested facet) and replications per cell; facets not
        given keep the G study's own sample sizes. ``{name: 1 for every facet}`` describes a single
        answer.
    object_levels : {"sampled", "shipped"}
        The estimand of the coefficients' intervals. ``"sampled"``: the objects (items) are a random
        sample of a universe of items, and the interval covers that universe's coefficient.
        ``"shipped"``: conditional on the objects in the data (the items a questionnaire ships), whose
        universe scores are fixed; the universe variance is then the variance of *these* objects'
        universe scores, and its sampling variance loses the part that comes from drawing the objects
        (see Notes). The point values are the same.

    Returns
    -------
    DecisionStudy

    Raises
    ------
    ValueError
        A count for an unknown facet, or a count below 1.

    Notes
    -----
    With :math:`\tau` the object's component, each other component :math:`\sigma^2(\alpha)` is
    divided by the product of the counts of the facets in :math:`\alpha` (Brennan 2001, eqs.
    4.14-4.17); it enters the relative error :math:`\sigma^2(\delta)` when :math:`\alpha` contains
    the object, and the absolute error :math:`\sigma^2(\Delta)` always.
    :math:`E\rho^2 = \tau / (\tau + \sigma^2(\delta))`, :math:`\Phi = \tau / (\tau + \sigma^2(\Delta))`.
    The interval of each coefficient treats :math:`\hat\tau / \hat E` as
    :math:`(\tau / E) F(\nu_\tau, \nu_E)` with Satterthwaite degrees of freedom
    :math:`\nu = 2 \hat v^2 / \widehat{\mathrm{Var}}(\hat v)` from the G study's covariance
    (the covariance between :math:`\hat\tau` and :math:`\hat E` is ignored), as the F interval of
    an intraclass correlation does (Shrout & Fleiss 1979); its coverage is measured by the
    validity bench.

    With ``object_levels="shipped"``, :math:`\mathrm{Var}(\hat\tau)` is reduced by
    :math:`2\hat\tau^2 / (n_p - 1)`, the part of a balanced design's
    :math:`\mathrm{Var}(\hat\tau) = 2(\tau + E/k)^2 / (n_p - 1) + \ldots` that comes from drawing
    the :math:`n_p` objects: given their universe scores, the mean square of the objects is a
    non-central chi-square whose variance is :math:`2(E^2 + 2 E k s^2) / (n_p - 1)` (Searle, Casella
    & McCulloch 1992, ch. 4), i.e. the random-objects variance without :math:`2 k^2 s^4 / (n_p - 1)`.
    """
    sizes = _sizes(study, counts)
    relative, absolute, universe_index = _weights(study, sizes)
    variances = np.array([component.variance for component in study.components])
    universe = float(variances[universe_index])
    var_universe = float(study.covariance[universe_index, universe_index])
    if object_levels == "shipped":
        n_objects = study.components[universe_index].n_levels
        drawing = 2.0 * universe**2 / (n_objects - 1) if n_objects > 1 else 0.0
        # kept above a tenth of the random-objects variance: the balanced-design identity is approximate
        # on unbalanced data, and a zero variance would claim an exact coefficient
        var_universe = max(var_universe - drawing, 0.1 * var_universe)
    elif object_levels != "sampled":
        raise ValueError(f"object_levels must be 'sampled' or 'shipped', got {object_levels!r}")
    relative_error = float(relative @ variances)
    absolute_error = float(absolute @ variances)
    return DecisionStudy(
        counts=sizes,
        universe_variance=universe,
        relative_error_variance=relative_error,
        absolute_error_variance=absolute_error,
        g=_coefficient_interval(
            universe, relative_error, var_universe, float(relative @ study.covariance @ relative), study.confidence
        ),
        phi=_coefficient_interval(
            universe, absolute_error, var_universe, float(absolute @ study.covariance @ absolute), study.confidence
        ),
        sem_relative=math.sqrt(relative_error),
        sem_absolute=math.sqrt(absolute_error),
    )


def smallest_count(
    study: GStudy,
    facet: str,
    target: float,
    *,
    coefficient: Coefficient = "phi",
    counts: Mapping[str, float] | None = None,
    max_count: int = 1000,
) -> int | None:
    """The fewest conditions of ``facet`` whose D study reaches ``target`` on the coefficient's point value.

    Parameters
    ----------
    study : GStudy
    facet : str
        The facet (or replicate) to vary, e.g. ``"run"`` or ``"paraphrase"``.
    target : float
        The coefficient to reach, in (0, 1).
    coefficient : {"phi", "g"}
        Dependability (absolute) or generalizability (relative) coefficient.
    counts : mapping of str to float, optional
        The other facets' counts (default: the G study's own).
    max_count : int
        The largest count tried.

    Returns
    -------
    int or None
        The smallest count in 1..``max_count`` that reaches ``target``; None when none does (the
        components that do not shrink with ``facet`` cap the coefficient below it).

    Raises
    ------
    ValueError
        Unknown facet or coefficient, target outside (0, 1), max_count below 1.
    """
    if coefficient not in ("phi", "g"):
        raise ValueError(f"coefficient must be 'phi' or 'g', got {coefficient!r}")
    if not 0 < target < 1:
        raise ValueError(f"target must lie strictly between 0 and 1, got {target!r}")
    if facet not in study.sample_sizes:
        raise ValueError(f"unknown facet {facet!r}; the study's facets are {sorted(study.sample_sizes)}")
    if max_count < 1:
        raise ValueError(f"max_count must be at least 1, got {max_count}")
    fixed = dict(counts or {})
    variances = np.array([component.variance for component in study.components])
    for count in range(1, max_count + 1):
        fixed[facet] = count
        # decision_study's point value, without its interval (two F quantiles per count, unused here)
        relative, absolute, universe_index = _weights(study, _sizes(study, fixed))
        universe = float(variances[universe_index])
        error = float((absolute if coefficient == "phi" else relative) @ variances)
        if _coefficient(universe, error) >= target:
            return count
    return None


def spread_interval(means: npt.ArrayLike, error_variance: float, *, confidence: float = 0.95) -> IntervalEstimate:
    r"""The variance of the true object means behind observed ``means``, given the levels observed.

    Parameters
    ----------
    means : array_like, shape (n,)
        The observed mean of each object (e.g. of each condition of a compass placement), n >= 2.
    error_variance : float
        The variance of one observed mean around its true mean: the relative error variance of a
        :func:`decision_study` at the design's own counts (what is common to every object, such as the
        items' effects, cancels in the spread).
    confidence : float

    Returns
    -------
    IntervalEstimate
        The sample variance (ddof 1) of the true means: ``value`` the moment estimate
        :math:`\max(0, s^2_m - E)`, and the interval from inverting the non-central chi-square.

    Notes
    -----
    The estimand is conditional on the objects observed (the shipped conditions, not a universe of
    them). With the observed means independent and normal around the true ones with variance
    :math:`E`, :math:`SS / E \sim \chi'^2_{n-1}(\lambda)` with :math:`\lambda = (n-1) s^2_\mu / E`
    (Searle, Casella & McCulloch 1992, sec. 4.7); the bounds are the :math:`\lambda` at which the
    observed statistic sits at the upper and lower tail quantile, and 0 where even
    :math:`\lambda = 0` leaves it in the tail. :math:`E` is treated as known (it rests on many more
    degrees of freedom than the n - 1 of the objects). Its coverage is measured by the validity bench.
    """
    level = check_confidence(confidence)
    values = np.asarray(means, dtype=np.float64).reshape(-1)
    if values.size < 2 or np.isnan(values).any():
        raise ValueError(f"spread_interval needs at least 2 means without NaN, got {values.size}")
    if not error_variance > 0:
        raise ValueError(f"error_variance must be positive, got {error_variance!r}")
    df = values.size - 1
    statistic = float(np.sum((values - values.mean()) ** 2)) / error_variance
    scale = error_variance / df

    def noncentrality(tail: float) -> float:
        """The lambda with P(chi'^2 <= statistic) = tail; 0 when lambda = 0 already gives less."""
        if float(scipy_stats.chi2.cdf(statistic, df)) <= tail:
            return 0.0
        high = max(1.0, 2.0 * statistic)
        while float(scipy_stats.ncx2.cdf(statistic, df, high)) > tail:
            high *= 2.0
        return float(scipy_optimize.brentq(lambda lam: scipy_stats.ncx2.cdf(statistic, df, lam) - tail, 0.0, high))

    low = noncentrality(0.5 + level / 2)
    high = noncentrality(0.5 - level / 2)
    point = max(0.0, statistic - df)
    return IntervalEstimate(point * scale, low * scale, high * scale)
