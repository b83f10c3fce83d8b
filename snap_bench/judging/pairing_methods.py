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
from snap_bench.judging.paired_matrices import level_codes, paired_bootstrap, paired_proportion
from snap_bench.judging.paired_result import (
    FIXED_DESIGN,
    FIXED_DESIGN_RATE,
    NO_REPEATED_CELL,
    REFITS,
    NotCompared,
    Result,
)
from snap_bench.observations.observation import Observation
from snap_bench.stats.within_cell import CellDraws, fixed_design_ci

__all__ = [
    "FIXED_DESIGN",
    "FIXED_DESIGN_RATE",
    "NO_REPEATED_CELL",
    "REFITS",
    "NotCompared",
    "Result",
    "Sides",
    "against_saved",
]

if TYPE_CHECKING:
    from typing import Protocol

    from snap_bench.analysis.metric_specs import MetricSpec
    from snap_bench.analysis.metric_tables import Analyser, AnalysisSettings, ModelAnalysis
    from snap_bench.analysis.pairings import Estimate, Pairing, Refit, TableMaker

    class Compared(Analyser, Protocol):
        """What comparing with a baseline asks of an instrument: its analysis and its metrics' specs (how two
        models pair for each); the pairings' table makers and refits are handed it as it is."""

        @property
        def metrics(self) -> Mapping[str, MetricSpec]: ...

# pandas is imported by the table makers only, on the controller at session end.


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
        # table maker -> (new table, old table, baseline's whole table)
        self._tables: dict[TableMaker, tuple[Any, Any, Any]] = {}

    def tables(self, pairing: Pairing) -> tuple[Any, Any, Any]:
        """(new table, old table, baseline's whole table), made once per table maker."""
        if pairing.table not in self._tables:
            maker = pairing.table
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
            return paired_bootstrap(pairing, new, old, everything, settings, identical=self.identical)
        if isinstance(pairing, ProportionPairing):
            result = paired_proportion(pairing, new, old, len(everything), settings)
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
            return refitted.within_cells(pairing.refit, pairing.cluster, settings)
        return refitted.independent(pairing.estimate)


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
            (table, CellDraws(level_codes(table["cell"])), start)
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
