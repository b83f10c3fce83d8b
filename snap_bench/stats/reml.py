"""Restricted maximum likelihood (REML) for a random-effects model reduced to cell means.

The terms' indicator matrix, the objective with its gradient and expected information, and the fit
under non-negativity constraints.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import optimize as scipy_optimize
from scipy.linalg import lapack as scipy_lapack

from snap_bench.stats._validation import FloatArray

__all__ = ["RemlFit", "RemlProblem", "combined_codes", "fit_reml", "term_indicators"]

# Estimates below this fraction of the score variance are reported as exactly 0 (on the boundary).
_BOUNDARY = 1e-9
# The residual variance is kept above this fraction of the score variance so that V stays invertible
# when the runs of every cell agree (a deterministic model at temperature 0).
_RESIDUAL_FLOOR = 1e-10


def combined_codes(columns: list[npt.NDArray[np.intp]], n: int) -> npt.NDArray[np.intp]:
    """One integer code per distinct combination of the given code columns."""
    if not columns:
        return np.zeros(n, dtype=np.intp)
    stacked = np.column_stack(columns)
    _, inverse = np.unique(stacked, axis=0, return_inverse=True)
    return np.asarray(inverse, dtype=np.intp).reshape(-1)


def term_indicators(
    term_columns: Sequence[Sequence[npt.NDArray[np.intp]]], cell: npt.NDArray[np.intp]
) -> tuple[FloatArray, npt.NDArray[np.intp], list[int]]:
    """Z of the cell means: every term's cells x levels indicator matrix side by side, the term of each
    column, and each term's number of levels.

    ``term_columns[k]`` holds the per-score codes of the label columns that make up term k; ``cell``
    the per-score cell code.
    """
    n_cells = int(cell.max()) + 1
    # every score of a cell carries the cell's labels: its first score stands for it
    first_row = np.zeros(n_cells, dtype=np.intp)
    first_row[cell[::-1]] = np.arange(cell.size)[::-1]
    columns: list[FloatArray] = []
    term_of_column: list[int] = []
    term_levels: list[int] = []
    for index, term in enumerate(term_columns):
        level_codes = combined_codes([column[first_row] for column in term], n_cells)
        n_levels = int(level_codes.max()) + 1
        indicator = np.zeros((n_cells, n_levels))
        indicator[np.arange(n_cells), level_codes] = 1.0
        columns.append(indicator)
        term_of_column.extend([index] * n_levels)
        term_levels.append(n_levels)
    return np.hstack(columns), np.asarray(term_of_column, dtype=np.intp), term_levels


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
    """The lower Cholesky factor (the upper triangle is left as it was: only the lower one is read).
    A model with no random term but the residual (the cell means of a design whose only facet spans every
    cell) has 0 x 0 matrices, which LAPACK refuses: there, every solve below is empty."""
    if matrix.size == 0:
        return matrix
    output = scipy_lapack.dpotrf(matrix, lower=1, clean=0)
    return _lapack_result(output, "potrf", "{info}-th leading minor not positive definite")


def _cho_solve(factor: FloatArray, rhs: FloatArray) -> FloatArray:
    """x with L L' x = rhs, L from :func:`_cholesky`."""
    if factor.size == 0:
        return np.zeros_like(rhs)
    return _lapack_result(scipy_lapack.dpotrs(factor, rhs, lower=1), "potrs", "")


def _solve_lower(factor: FloatArray, rhs: FloatArray) -> FloatArray:
    """x with L x = rhs, L lower triangular."""
    if factor.size == 0:
        return np.zeros_like(rhs)
    output = scipy_lapack.dtrtrs(factor, rhs, lower=1)
    return _lapack_result(output, "trtrs", "singular matrix: zero at diagonal {info}")


@dataclass
class RemlProblem:
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


@dataclass(frozen=True)
class RemlFit:
    """The constrained REML maximum of a :class:`RemlProblem`, in the units of its standardised scores.

    Attributes
    ----------
    estimate : numpy.ndarray
        One variance per parameter (terms, cell, residual); those on the boundary exactly 0.
    covariance : numpy.ndarray
        Inverse expected information at the maximum; 0 in the rows and columns of fixed parameters,
        and everywhere when no intervals were asked for.
    log_likelihood : float
        The maximised restricted log-likelihood, without its constant.
    mean : float
        Generalized least-squares grand mean.
    """

    estimate: FloatArray
    covariance: FloatArray
    log_likelihood: float
    mean: float


def fit_reml(problem: RemlProblem, start: Sequence[float] | None, *, intervals: bool) -> RemlFit:
    """Maximise the restricted likelihood over non-negative variances by L-BFGS-B.

    ``start`` holds starting shares of the components (ignored unless there is one per parameter);
    ``intervals=False`` skips the information matrix. Where every cell's replications agree, the residual's
    maximum is the boundary, 0, and the rest is the fit of the cell means (:func:`_cell_means`).
    """
    reduced = _cell_means(problem)
    if reduced is None:
        return _maximum(problem, start, intervals=intervals)
    cell_means, kept = reduced
    fit = _maximum(
        cell_means,
        [start[index] for index in kept] if start is not None and len(start) == problem.n_parameters else None,
        intervals=intervals,
    )
    estimate = np.zeros(problem.n_parameters)
    estimate[kept] = fit.estimate
    covariance = np.zeros((problem.n_parameters, problem.n_parameters))
    covariance[np.ix_(kept, kept)] = fit.covariance
    return RemlFit(estimate=estimate, covariance=covariance, log_likelihood=fit.log_likelihood, mean=fit.mean)


def _cell_means(problem: RemlProblem) -> tuple[RemlProblem, list[int]] | None:
    """Where some cell holds replications and none differ within their cell (a deterministic model at
    temperature 0): the fit of the cell means alone, one score a cell, and the parameters of ``problem`` it
    estimates, in its order (the residual, left out, is 0); None otherwise.

    The within-cell part of the restricted likelihood, df log(s) + 0 / s, rises without bound as the residual s
    falls to 0, whatever the other components, so the residual's maximum is the boundary 0 (a singular fit, as
    lme4 reports one). At s = 0 the cell means' covariance is Z D Z' + the cells' own variance x I, whose diagonal
    part is the cell component, or the term that spans every cell (item x prompt: its indicator is the identity):
    the model of the cell means with that component as their residual. Fitting it so, rather than holding s at a
    floor near 0, keeps V well conditioned: at the floor V^-1 weighs each cell 10^10 times, the objective loses
    its digits to cancellation, and the search stops short of the maximum or steps to a V that is numerically
    singular (a division by zero, or a Cholesky factor that fails).
    """
    n_cells = problem.counts.size
    if problem.df_within <= 0 or problem.ss_within > _BOUNDARY * float(np.sum(problem.counts)):
        return None
    levels = np.bincount(problem.term_of_column, minlength=problem.n_terms)
    spanning = [k for k in range(problem.n_terms) if levels[k] == n_cells]
    diagonal = problem.n_terms if problem.has_cell else spanning[0] if spanning else None
    if diagonal is None or not problem.free[diagonal]:
        return None
    terms = [k for k in range(problem.n_terms) if k != diagonal]
    columns = np.isin(problem.term_of_column, terms)
    renumbered = np.searchsorted(np.asarray(terms), problem.term_of_column[columns])
    kept = [*terms, diagonal]
    reduced = RemlProblem(
        z=problem.z[:, columns],
        term_of_column=np.asarray(renumbered, dtype=np.intp),
        n_terms=len(terms),
        has_cell=False,
        counts=np.ones(n_cells),
        cell_means=problem.cell_means,
        ss_within=0.0,
        df_within=0.0,
        free=problem.free[kept],
    )
    return reduced, kept


def _maximum(problem: RemlProblem, start: Sequence[float] | None, *, intervals: bool) -> RemlFit:
    """:func:`fit_reml`'s search, on the problem as given."""
    free = problem.free
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
    log_likelihood = -float(problem.objective(np.maximum(fit.x, np.array([b[0] for b in bounds])))[0])
    if intervals:
        with _single_threaded_blas():
            covariance = np.linalg.pinv(problem.information(np.maximum(fit.x, _RESIDUAL_FLOOR * free)))
    else:
        covariance = np.zeros((n_parameters, n_parameters))
    covariance[~free, :] = 0.0
    covariance[:, ~free] = 0.0
    return RemlFit(
        estimate=np.where(fit.x < _BOUNDARY, 0.0, fit.x),
        covariance=np.asarray(covariance, dtype=np.float64),
        log_likelihood=log_likelihood,
        mean=float(problem.pieces(np.maximum(fit.x, _RESIDUAL_FLOOR * free))["mean"]),
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
