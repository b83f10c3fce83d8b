"""The methods of the pairings that compare a matrix or a rate of both models' answers (the bootstrap and
proportion pairings of snap_bench.analysis.pairings): each model's answers redrawn within the cells of the
design both answered, or, where no cell was asked twice, the pairing's own method."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from snap_bench.analysis.pairings import BootstrapPairing, ProportionPairing
from snap_bench.judging.paired_result import FIXED_DESIGN, FIXED_DESIGN_RATE, NO_REPEATED_CELL, NotCompared, Result
from snap_bench.stats.within_cell import CellDraws, fixed_design_ci

if TYPE_CHECKING:
    import numpy.typing as npt

    from snap_bench.analysis.metric_tables import AnalysisSettings, FloatArray
    from snap_bench.analysis.pairings import Batch


def _cell_key(key: list[str], columns: Any) -> list[str] | None:
    """The fields naming a row's cell of the design (its key without the run), None when the rows are not
    repetitions of anything (no run among them)."""
    if "run" in key:
        return [field for field in key if field != "run"]
    if "condition_id" in key and "cell" in set(columns):
        return ["cell" if field == "condition_id" else field for field in key]
    return None


def paired_proportion(
    pairing: ProportionPairing, new: Any, old: Any, designed: int, settings: AnalysisSettings
) -> Result:
    """A rate on the rows both were asked, its interval from each model's run-to-run variance within the
    design's cells (a stratified variance); Newcombe's paired interval where no cell was asked twice."""
    from snap_bench.stats.within_cell import mean_variance

    key = list(pairing.rows)
    joined = (
        new.set_index(key)[pairing.values]
        .to_frame("new")
        .join(old.set_index(key)[pairing.values].to_frame("old"), how="inner")
    )
    # A row without a value on either side (a pair with an unscored answer) is left out of the pairs.
    joined = joined.dropna()
    if joined.empty:
        raise NotCompared("no condition was answered by both models", 0, designed)
    a, b = joined["new"].to_numpy(float) > 0.5, joined["old"].to_numpy(float) > 0.5
    n = len(joined)
    estimate = float(a.mean() - b.mean())
    cells = _row_cells(new, key, joined.index)
    try:
        if cells is None:
            raise ValueError(NO_REPEATED_CELL)
        variance = mean_variance(a.astype(float), cells)[0] + mean_variance(b.astype(float), cells)[0]
    except ValueError:
        return _newcombe(pairing, a, b, designed, settings)
    from scipy.stats import norm

    half = float(norm.ppf(0.5 + settings.confidence / 2)) * math.sqrt(variance)
    return Result(
        new_value=float(a.mean()),
        old_value=float(b.mean()),
        difference=(estimate, max(-1.0, estimate - half), min(1.0, estimate + half)),
        method=FIXED_DESIGN_RATE,
        n=n,
        compared=n,
        designed=designed,
        unit="conditions",
    )


def _row_cells(table: Any, key: list[str], rows: Any) -> npt.NDArray[np.intp] | None:
    """The design cell (a code) of each row of ``rows`` (an index on ``key``), read off ``table``."""
    fields = _cell_key(key, table.columns)
    if fields is None:
        return None
    labels = table[fields].astype(str).agg("\x1f".join, axis=1)
    labels.index = table.set_index(key).index
    return level_codes(labels.loc[rows])


def _newcombe(pairing: ProportionPairing, a: Any, b: Any, designed: int, settings: AnalysisSettings) -> Result:
    """Newcombe's (1998, method 10) interval of the paired difference of the rates, the conditions a sample."""
    from snap_bench.stats.paired import newcombe_paired_ci

    counts = (int((a & b).sum()), int((a & ~b).sum()), int((~a & b).sum()), int((~a & ~b).sum()))
    estimate, low, high = newcombe_paired_ci(*counts, confidence=settings.confidence)
    n = len(a)
    return Result(
        new_value=float(a.mean()),
        old_value=float(b.mean()),
        difference=(estimate, low, high),
        method=f"{pairing.describe()} ({NO_REPEATED_CELL})",
        n=n,
        compared=n,
        designed=designed,
        unit="conditions",
    )


def _wide(table: Any, index: list[str], pairing: BootstrapPairing) -> Any:
    grouped = table.groupby([*index, pairing.columns], sort=True)[pairing.values]
    return (grouped.mean() if pairing.aggregate == "mean" else grouped.first()).unstack(pairing.columns)


def paired_bootstrap(
    pairing: BootstrapPairing, new: Any, old: Any, everything: Any, settings: AnalysisSettings, *, identical: bool
) -> Result:
    """The statistic of both models on the rows both have; the difference's interval from each model's
    answers resampled within the design's cells, or (no cell asked twice) from resampling the clusters."""
    from snap_bench.stats import UndefinedStatistic

    index = list(pairing.rows)
    for extra in (pairing.cluster, pairing.within):
        if extra is not None and extra not in index:
            index.append(extra)
    new_wide, old_wide = _wide(new, index, pairing), _wide(old, index, pairing)
    columns = [column for column in old_wide.columns if column in set(new_wide.columns)]
    unit = f"{pairing.rows[0]}s" if len(pairing.rows) == 1 else "rows"
    designed = int(_wide(everything, index, pairing).shape[0])
    joined = new_wide[columns].add_suffix("_new").join(old_wide[columns].add_suffix("_old"), how="inner")
    matrix = joined.to_numpy(dtype=float)
    if pairing.complete:
        keep = ~np.isnan(matrix).any(axis=1)
        joined, matrix = joined[keep], matrix[keep]
    rows = int(matrix.shape[0])
    k = len(columns)
    if rows == 0 or k == 0:
        raise NotCompared(f"no {unit[:-1]} answered by both models", rows, designed, unit)
    clusters = level_codes(joined.index.get_level_values(pairing.cluster)) if pairing.cluster else np.arange(rows)
    groups = level_codes(joined.index.get_level_values(pairing.within)) if pairing.within else np.zeros(rows, np.intp)
    statistic = _grouped(pairing.statistic, groups)

    def difference(data: FloatArray, counts: FloatArray) -> FloatArray:
        result: FloatArray = statistic(data[:, :k], counts) - statistic(data[:, k:], counts)
        return result

    n_clusters = int(clusters.max()) + 1
    try:
        new_value = float(statistic(matrix[:, :k], np.ones((1, rows)))[0])
        old_value = float(statistic(matrix[:, k:], np.ones((1, rows)))[0])
    except (UndefinedStatistic, ValueError) as error:
        raise NotCompared(f"no interval on the {unit} both answered: {error}", rows, designed, unit) from None
    if math.isnan(new_value) or math.isnan(old_value):
        side = "the new model" if math.isnan(new_value) else "the baseline"
        raise NotCompared(f"undefined for {side} on the {unit} both answered", rows, designed, unit)
    estimate = new_value - old_value

    def result(difference: tuple[float, float, float], method: str, n: int) -> Result:
        return Result(new_value, old_value, difference, method, n, rows, designed, unit)

    if identical:
        # Every designed condition answered alike (a replay of the baseline's own answers): NEW - OLD is 0.
        return result((0.0, 0.0, 0.0), "identical answers", n_clusters)
    try:
        redrawn = _redrawn(joined, pairing, k, matrix, new, old, index, columns)
        if redrawn is None or min(side.draws.smallest for side in redrawn) < 2:
            interval = _cluster_interval(difference, matrix, clusters, settings)
            return result(
                (estimate, interval.low, interval.high), f"{pairing.describe()} ({NO_REPEATED_CELL})", n_clusters
            )
        rng = np.random.default_rng(settings.seed)
        ones = np.ones((1, rows))
        resampled = np.empty(settings.n_resamples)
        for draw in range(settings.n_resamples):
            data = np.hstack([side.draw(rng).reshape(rows, k) for side in redrawn])
            resampled[draw] = difference(data, ones)[0]
        runs = min(side.draws.smallest for side in redrawn)
        fixed = fixed_design_ci(estimate, resampled, runs, settings.confidence)
    except (UndefinedStatistic, ValueError) as error:
        raise NotCompared(f"no interval on the {unit} both answered: {error}", rows, designed, unit) from None
    return result((estimate, fixed.low, fixed.high), FIXED_DESIGN, redrawn[0].cells)


@dataclass(frozen=True)
class _Redrawn:
    """How one side's (rows x k) matrix, flattened, is redrawn: ``values`` (the matrix's entries, or the
    long table's answers that ``groups`` averages into them) drawn within their design cells."""

    values: FloatArray
    draws: CellDraws
    cells: int
    groups: npt.NDArray[np.intp] | None = None
    size: int = 0

    def draw(self, rng: np.random.Generator) -> FloatArray:
        drawn: FloatArray = self.values[self.draws.draw(rng)]
        if self.groups is None:
            return drawn
        present = ~np.isnan(drawn)
        sums = np.bincount(self.groups, weights=np.where(present, drawn, 0.0), minlength=self.size)
        counts = np.bincount(self.groups, weights=present.astype(float), minlength=self.size)
        with np.errstate(invalid="ignore", divide="ignore"):
            means: FloatArray = sums / counts  # NaN for an entry without an answer, as pandas' mean gives
        return means


def _redrawn(
    joined: Any,
    pairing: BootstrapPairing,
    k: int,
    matrix: FloatArray,
    new: Any,
    old: Any,
    index: list[str],
    columns: list[Any],
) -> tuple[_Redrawn, _Redrawn] | None:
    """Each side's redrawing: with runs as the columns, a row's entries are its cell's answers; with the run
    among the rows, an entry's cell is its row without the run and its column; where the runs are averaged
    into an entry (``aggregate="mean"``), each answer of the long table is redrawn within its cell and the
    entry averaged again. None when nothing repeats (no run noise to resample)."""
    rows = len(joined)
    if pairing.columns == "run":
        codes = np.repeat(np.arange(rows), k)
    elif "run" in joined.index.names:
        without_run = joined.index.droplevel("run")
        row_cells = level_codes(
            ["\x1f".join(map(str, label)) if isinstance(label, tuple) else str(label) for label in without_run]
        )
        codes = (row_cells[:, None] * k + np.arange(k)[None, :]).ravel()
    elif pairing.aggregate == "mean" and "cell" in new.columns and "cell" in old.columns:
        return _averaged(joined, pairing, new, k, index, columns), _averaged(joined, pairing, old, k, index, columns)
    else:
        return None
    _, compact = np.unique(codes, return_inverse=True)
    draws, cells = CellDraws(compact), int(compact.max()) + 1
    return _Redrawn(matrix[:, :k].ravel(), draws, cells), _Redrawn(matrix[:, k:].ravel(), draws, cells)


def _averaged(
    joined: Any, pairing: BootstrapPairing, table: Any, k: int, index: list[str], columns: list[Any]
) -> _Redrawn:
    """One side's answers that average into the matrix's entries, each with its entry and its design cell."""
    import pandas as pd

    keys = table.set_index(index).index if len(index) > 1 else pd.Index(table[index[0]])
    row = np.asarray(joined.index.get_indexer(keys), dtype=np.intp)
    column = np.asarray(pd.Index(columns).get_indexer(table[pairing.columns]), dtype=np.intp)
    keep = (row >= 0) & (column >= 0)
    cells = level_codes(table["cell"].to_numpy()[keep])
    return _Redrawn(
        table[pairing.values].to_numpy(dtype=float)[keep],
        CellDraws(cells),
        int(cells.max()) + 1,
        (row * k + column)[keep],
        len(joined) * k,
    )


def _cluster_interval(
    difference: Batch, matrix: FloatArray, clusters: npt.NDArray[np.intp], settings: AnalysisSettings
) -> Any:
    """The percentile interval resampling whole clusters (items): the units a sample of their own."""
    from snap_bench.stats.paired import cluster_bootstrap_ci

    return cluster_bootstrap_ci(
        difference,
        matrix,
        clusters,
        n_resamples=settings.n_resamples,
        confidence=settings.confidence,
        seed=settings.seed,
    )


def level_codes(labels: Any) -> npt.NDArray[np.intp]:
    _, codes = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    return codes.astype(np.intp)


def _grouped(batch: Batch, groups: npt.NDArray[np.intp]) -> Batch:
    """The statistic within each group of rows, the largest kept (one group: the statistic itself)."""
    masks = [groups == group for group in np.unique(groups)]
    if len(masks) == 1:
        return batch

    def largest(data: FloatArray, counts: FloatArray) -> FloatArray:
        values = np.stack([batch(data[mask], counts[:, mask]) for mask in masks])
        with np.errstate(invalid="ignore"):
            result: FloatArray = np.fmax.reduce(values, axis=0)
        return result

    return largest
