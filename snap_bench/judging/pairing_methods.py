"""The difference NEW - OLD of one metric with its interval, or unpaired against a saved analysis.

Both models answered the same design, so the interval's noise is their run-to-run noise on it (the gate asks
"did the model change on this design?", not "would it on other items?"): each model's answers are redrawn
within the cells of the design (a condition without its run), each recording on its own, and the metric
recomputed on both (:mod:`snap_bench.stats.within_cell`). A design with no repeated cell has no run noise to
read off: the metric's pairing then names the method (items resampled, Newcombe's interval, items left out)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from snap_bench.analysis.pairings import BootstrapPairing, JackknifePairing, ProportionPairing
from snap_bench.observations.observation import Observation
from snap_bench.stats.within_cell import CellDraws, fixed_design_ci

if TYPE_CHECKING:
    from typing import Protocol

    import numpy.typing as npt

    from snap_bench.analysis.metric_specs import MetricSpec
    from snap_bench.analysis.metric_tables import Analyser, AnalysisSettings, FloatArray, ModelAnalysis
    from snap_bench.analysis.pairings import Batch, Estimate, Pairing, Refit

    class Compared(Analyser, Protocol):
        """What comparing with a baseline asks of an instrument: its analysis and its metrics' specs (how two
        models pair for each); the pairings' table makers and refits are handed it as it is."""

        @property
        def metrics(self) -> Mapping[str, MetricSpec]: ...

# pandas is imported by the table makers only, on the controller at session end.


@dataclass(frozen=True)
class Result:
    """What a method found: both values, the difference with its interval, and what it rests on.
    ``noise``: what the interval's width comes from, and so what more of would narrow it: ``runs`` (the
    models' run-to-run noise on the design both answered) or ``items`` (a resampling of the design's units)."""

    new_value: float
    old_value: float
    difference: tuple[float, float, float]
    method: str
    n: int
    compared: int
    designed: int
    unit: str

    @property
    def noise(self) -> str:
        """``runs`` where the interval reads the models' run-to-run noise on the fixed design (more runs narrow
        it), ``items`` where it resamples the design's units (more of those narrow it)."""
        return "runs" if self.method.startswith("fixed design") else "items"


class NotCompared(Exception):
    """Why a metric could not be compared; carries the coverage reached so far."""

    def __init__(self, reason: str, compared: int = 0, designed: int = 0, unit: str = "conditions") -> None:
        super().__init__(reason)
        self.reason, self.compared, self.designed, self.unit = reason, compared, designed, unit


class Sides:
    """Both models' observations of one instrument, restricted to the conditions both were asked: each
    metric is computed for each model on those, so that the difference is a paired one."""

    def __init__(self, instrument: Compared, new_rows: list[Observation], old_rows: list[Observation]) -> None:
        self.instrument = instrument
        old_ids = {o.condition_id for o in old_rows}
        shared = old_ids & {o.condition_id for o in new_rows}
        self.designed = len(old_ids)
        self.shared = len(shared)
        self.new = [o for o in new_rows if o.condition_id in shared]
        self.old = [o for o in old_rows if o.condition_id in shared]
        self.all_old = old_rows
        answers = {o.condition_id: (o.score, o.keyed_score, o.code) for o in self.old}
        self.identical = (
            bool(old_rows)
            and self.shared == self.designed
            and all(answers[o.condition_id] == (o.score, o.keyed_score, o.code) for o in self.new)
        )
        # table maker ("module:function") -> (new table, old table, baseline's whole table)
        self._tables: dict[str, tuple[Any, Any, Any]] = {}

    def tables(self, pairing: Pairing) -> tuple[Any, Any, Any]:
        """(new table, old table, baseline's whole table), made once per table maker."""
        if pairing.table not in self._tables:
            maker = pairing.load_table()
            # What is designed is what the baseline was asked: a narrowed run covers part of it.
            self._tables[pairing.table] = (
                maker(self.instrument, self.new),
                maker(self.instrument, self.old),
                maker(self.instrument, self.all_old),
            )
        return self._tables[pairing.table]

    def compare(self, pairing: Pairing, settings: AnalysisSettings, level: str | None = None) -> Result:
        if not self.shared:
            raise NotCompared(
                "no condition was asked of both models" if self.designed else "the baseline has no observations here",
                0,
                self.designed,
            )
        new, old, everything = self.tables(pairing)
        missing = sorted(_needed_columns(pairing) - (set(new.columns) & set(old.columns)))
        if missing:
            # A design narrowed to one level of a factor (one paraphrase, one run) has nothing to pair on.
            raise NotCompared(
                f"this run's design has no {', '.join(missing)} to pair on (a subset with one level of it?)",
                0,
                self.designed,
            )
        if level is not None and pairing.by is not None:
            new, old, everything = (table[table[pairing.by] == level] for table in (new, old, everything))
            if everything.empty:
                raise NotCompared(f"the baseline was not asked at {level}", 0, 0)
        if isinstance(pairing, BootstrapPairing):
            return _paired_bootstrap(pairing, new, old, everything, settings, identical=self.identical)
        if isinstance(pairing, ProportionPairing):
            result = _paired_proportion(pairing, new, old, len(everything), settings)
            if self.identical:
                # Every designed condition answered alike (a replay of the baseline's own answers): the rate
                # is the same, as the bootstrap of any other metric finds it (its interval is [0, 0]);
                # Newcombe's interval would still allow for discordant pairs no data hint at.
                return dataclasses.replace(result, difference=(0.0, 0.0, 0.0), method="identical answers")
            return result
        refitted = _Refitted(
            instrument=self.instrument,
            values=pairing.values,
            method=pairing.describe(),
            new=new,
            old=old,
            designed=len(everything),
            identical=self.identical,
        )
        if isinstance(pairing, JackknifePairing):
            return refitted.within_cells(pairing.load_refit(), pairing.cluster, settings)
        return refitted.independent(pairing.load_estimate())


def _needed_columns(pairing: Pairing) -> set[str]:
    """The table columns a pairing reads: its rows, cluster, levels, columns and values."""
    named = [
        *getattr(pairing, "rows", ()),
        getattr(pairing, "cluster", None),
        getattr(pairing, "within", None),
        getattr(pairing, "columns", None),
        getattr(pairing, "by", None),
        getattr(pairing, "values", None),
    ]
    return {name for name in named if isinstance(name, str)}


# What a fixed-design interval says it is (printed with every comparison).
FIXED_DESIGN = "fixed design: answers resampled within cells"
FIXED_DESIGN_RATE = "fixed design: run-to-run variance within cells"
# Why a metric fell back on its pairing's own method (said after that method's name).
NO_REPEATED_CELL = "no cell asked twice: no run noise to resample"
# Refits of a G study on within-cell resamples: each costs one REML fit, so few, with a t quantile on
# REFITS - 1 degrees of freedom for the SE's own uncertainty (docs/gate.md; measured in docs/measured.md).
REFITS = 15


def _cell_key(key: list[str], columns: Any) -> list[str] | None:
    """The fields naming a row's cell of the design (its key without the run), None when the rows are not
    repetitions of anything (no run among them)."""
    if "run" in key:
        return [field for field in key if field != "run"]
    if "condition_id" in key and "cell" in set(columns):
        return ["cell" if field == "condition_id" else field for field in key]
    return None


def _paired_proportion(
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
    return _codes(labels.loc[rows])


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


def _paired_bootstrap(
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
    clusters = _codes(joined.index.get_level_values(pairing.cluster)) if pairing.cluster else np.arange(rows)
    groups = _codes(joined.index.get_level_values(pairing.within)) if pairing.within else np.zeros(rows, np.intp)
    statistic = _grouped(pairing.load_statistic(), groups)

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
        row_cells = _codes(
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
    cells = _codes(table["cell"].to_numpy()[keep])
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


@dataclass(frozen=True)
class _Refitted:
    """Both models' long tables of one level, for a figure refitted on each side rather than computed
    from a matrix: ``compared`` counts the conditions both answered with a score (a ``values`` that is not
    NaN), ``designed`` the baseline's conditions at that level; ``method`` names the pairing's method."""

    instrument: Compared
    values: str
    method: str
    new: Any
    old: Any
    designed: int
    identical: bool
    unit: str = "answers"

    @property
    def compared(self) -> int:
        """The conditions both models answered with a score (what both refits rest on)."""
        scored = [set(table.loc[table[self.values].notna(), "condition_id"]) for table in (self.new, self.old)]
        return len(scored[0] & scored[1])

    def not_compared(self, reason: str) -> NotCompared:
        return NotCompared(reason, self.compared, self.designed, self.unit)

    def result(self, new_value: float, old_value: float, difference: tuple[float, float, float], n: int) -> Result:
        return Result(
            new_value=new_value,
            old_value=old_value,
            difference=difference,
            method="identical answers" if self.identical else self.method,
            n=n,
            compared=self.compared,
            designed=self.designed,
            unit=self.unit,
        )

    def within_cells(self, refit: Refit, clustered_by: str, settings: AnalysisSettings) -> Result:
        """A refitted figure (a G study's coefficient) of both models on the answers both gave; the
        difference's interval from refits on :data:`REFITS` within-cell resamples of each model's answers
        (each started from its side's full fit), or, where no cell was asked twice, from refits with one
        ``clustered_by`` (item) left out at a time."""
        from snap_bench.stats import UndefinedStatistic

        new_value, new_start = refit(self.instrument, self.new, None)
        if math.isnan(new_value):
            raise self.not_compared("undefined for the new model on the answers both gave")
        if self.identical:
            # Every designed condition answered alike: the difference is 0 without refitting anything.
            return self.result(new_value, new_value, (0.0, 0.0, 0.0), 0)
        old_value, old_start = refit(self.instrument, self.old, None)
        if math.isnan(old_value):
            raise self.not_compared("undefined for the baseline on the answers both gave")
        fits = (new_value, new_start), (old_value, old_start)
        if "cell" not in self.new.columns or "cell" not in self.old.columns:
            return self.jackknife(refit, clustered_by, settings, *fits)
        sides = [
            (table, CellDraws(_codes(table["cell"])), start)
            for table, start in ((self.new, new_start), (self.old, old_start))
        ]
        runs = min(draws.smallest for _, draws, _ in sides)
        if runs < 2:
            return self.jackknife(refit, clustered_by, settings, *fits)
        rng = np.random.default_rng(settings.seed)
        resampled = []
        for _ in range(REFITS):
            figures = []
            for table, draws, start in sides:
                redrawn = table.copy()
                redrawn[self.values] = table[self.values].to_numpy()[draws.draw(rng)]
                figures.append(refit(self.instrument, redrawn, start)[0])
            resampled.append(figures[0] - figures[1])
        try:
            interval = fixed_design_ci(
                new_value - old_value, resampled, runs, settings.confidence, degrees_of_freedom=REFITS - 1
            )
        except (UndefinedStatistic, ValueError) as error:
            raise self.not_compared(f"no interval on the answers both gave: {error}") from None
        return dataclasses.replace(
            self.result(new_value, old_value, (interval.estimate, interval.low, interval.high), REFITS),
            method=f"{FIXED_DESIGN} ({REFITS} refits a model)",
        )

    def jackknife(
        self,
        refit: Refit,
        clustered_by: str,
        settings: AnalysisSettings,
        new_fit: tuple[float, Sequence[float] | None],
        old_fit: tuple[float, Sequence[float] | None],
    ) -> Result:
        """The difference's interval from refits with one cluster (``clustered_by``: item) left out at a time."""
        from snap_bench.stats import UndefinedStatistic
        from snap_bench.stats.paired import jackknife_ci

        (new_value, new_start), (old_value, old_start) = new_fit, old_fit
        clusters = sorted(set(self.old[clustered_by]) & set(self.new[clustered_by]))
        # Each leave-one-out refit starts from its side's full fit: it lies close, so it converges quickly.
        left_out = [
            refit(self.instrument, self.new[self.new[clustered_by] != cluster], new_start)[0]
            - refit(self.instrument, self.old[self.old[clustered_by] != cluster], old_start)[0]
            for cluster in clusters
        ]
        try:
            interval = jackknife_ci(new_value - old_value, left_out, settings.confidence)
        except (UndefinedStatistic, ValueError) as error:
            raise self.not_compared(f"no interval on the answers both gave: {error}") from None
        return dataclasses.replace(
            self.result(new_value, old_value, (interval.estimate, interval.low, interval.high), len(clusters)),
            method=f"{self.method} ({NO_REPEATED_CELL})",
        )

    def independent(self, estimate: Estimate) -> Result:
        """Each model's figure with its own interval on the answers both gave, combined (MOVER)."""
        from snap_bench.stats.paired import mover_ci

        first = estimate(self.instrument, self.new)
        if math.isnan(first[0]):
            raise self.not_compared("undefined for the new model on the answers both gave")
        if self.identical:
            return self.result(first[0], first[0], (0.0, 0.0, 0.0), 0)
        second = estimate(self.instrument, self.old)
        if math.isnan(second[0]):
            raise self.not_compared("undefined for the baseline on the answers both gave")
        return self.result(first[0], second[0], mover_ci(first, second), self.compared)


def _codes(labels: Any) -> npt.NDArray[np.intp]:
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


def against_saved(metric: str, analysis: ModelAnalysis, saved: Mapping[str, Any]) -> Result:
    """Against a saved analysis.json (no per-condition results): unpaired and conservative. The interval
    of the difference joins both intervals end to end (new low - old high, new high - old low), wider than
    any paired or independent interval; a saved value without an interval is taken as wide as the new one's."""
    new = analysis.metrics.get(metric)
    old = saved.get("metrics", {}).get(metric, {})
    if new is None or new.value is None or new.ci_low is None or new.ci_high is None:
        raise NotCompared(f"the new model's {metric} has no value with an interval")
    if old.get("value") is None:
        raise NotCompared(f"the saved baseline has no value of {metric}")
    value = float(old["value"])
    half = (new.ci_high - new.ci_low) / 2
    old_low = float(old["ci_low"]) if old.get("ci_low") is not None else value - half
    old_high = float(old["ci_high"]) if old.get("ci_high") is not None else value + half
    method = "unpaired, conservative (saved analysis: intervals joined end to end)"
    if old.get("ci_low") is None:
        method = "unpaired, conservative (saved point value, its interval taken as wide as the new one's)"
    return Result(
        new_value=new.value,
        old_value=value,
        difference=(new.value - value, new.ci_low - old_high, new.ci_high - old_low),
        method=method,
        n=new.n,
        compared=new.n,
        designed=int(old.get("n") or new.n),
        unit="units",
    )
