"""How the upgrade gate lines up two models' observations to compare one metric: one record per method,
naming its functions as registered metric functions (snap_bench.analysis.metric_functions), imported on first
use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from snap_bench.analysis.metric_functions import metric_function

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from snap_bench.observations.observation import Observation

    FloatArray = npt.NDArray[np.float64]
    # (data, counts: one row of row multiplicities per resample) -> the statistic of each resample
    Batch = Callable[[FloatArray, FloatArray], FloatArray]
    # The instrument is typed `object` below: the core hands it through without looking at it, and cannot
    # import the instrument's type (the instruments import this module).
    # (the instrument, one model's observations) -> a long pandas table, one row per observation
    TableMaker = Callable[[object, Sequence[Observation]], Any]
    # (the instrument, one level's long table, a warm start or None) -> the figure refitted on it (NaN when
    # undefined) and the warm start for refits of similar data (the jackknife's leave-one-out refits)
    Refit = Callable[[object, Any, Sequence[float] | None], tuple[float, Sequence[float] | None]]
    # (the instrument, one level's long table) -> (value, low, high), NaN when undefined
    Estimate = Callable[[object, Any], tuple[float, float, float]]


@metric_function
def shared_table() -> TableMaker:
    """The shared long table, with an ``unscored`` column (1: the answer has no score) for the rates."""
    from snap_bench.analysis.metric_tables import pairing_table

    return pairing_table


@dataclass(frozen=True, kw_only=True)
class _PairingBase:
    """What every method has. ``table``: the function making the long table of one model's observations
    (default: the shared table; an instrument whose metric needs other columns, a variant or an error
    against the gold, names its own). ``by``: the metric is one figure per level of this field
    (``dependability[t0]``: temperature), each compared on that level's rows alone and named with it."""

    table: TableMaker = shared_table
    by: str | None = None


@dataclass(frozen=True, kw_only=True)
class BootstrapPairing(_PairingBase):
    """The metric computed on a matrix of ``values`` with one row per combination of ``rows`` and one
    column per level of ``columns``; the gate joins both models' matrices on their rows (and columns) and
    resamples the design's random unit, ``cluster`` (a field of the table: every row of one item is drawn
    together, since cells cluster in items), or each row when ``cluster`` is None.

    ``statistic``: the vectorised statistic. ``complete``: only rows without a missing value on either
    side enter (correlations); otherwise NaN is passed to the statistic, which decides. ``aggregate``: how
    several observations of one row and column combine. ``within``: the statistic is computed within each
    level of this row field and the largest kept (the compass's larger axis)."""

    rows: tuple[str, ...]
    columns: str
    values: str
    statistic: Batch
    cluster: str | None = None
    complete: bool = True
    aggregate: Literal["first", "mean"] = "first"
    within: str | None = None

    def describe(self) -> str:
        return f"paired bootstrap over {self.cluster + 's' if self.cluster else ' x '.join(self.rows)}"


@dataclass(frozen=True, kw_only=True)
class ProportionPairing(_PairingBase):
    """A rate, the share of the rows whose ``values`` is 1, compared by Newcombe's interval for a paired
    difference of proportions (``rows``: what makes a pair; a row whose value is missing on either side
    is left out)."""

    rows: tuple[str, ...]
    values: str

    def describe(self) -> str:
        return "Newcombe paired"


@dataclass(frozen=True, kw_only=True)
class JackknifePairing(_PairingBase):
    """A figure refitted on the long table (a G study's coefficient) by ``refit``: both models' figure is
    refitted with one ``cluster`` (item) left out at a time, and the paired difference's jackknife standard
    error gives its interval (``stats.paired.jackknife_ci``). ``values``: the column a scored answer has."""

    values: str
    cluster: str
    refit: Refit

    def describe(self) -> str:
        return f"paired jackknife over {self.cluster}s"


@dataclass(frozen=True, kw_only=True)
class IndependentPairing(_PairingBase):
    """A figure whose interval is conditional on the shipped design (the compass's spread net of run
    noise), so two models' estimates are independent: ``estimate`` gives each side's (value, low, high) and
    the difference's interval is recovered from both (``stats.paired.mover_ci``). ``values``: the column a
    scored answer has. ``method``: what the comparison says its interval is (one that reads the run noise
    of the design both answered starts "fixed design", so an undecided check counts its cure in runs)."""

    values: str
    estimate: Estimate
    method: str = "each side's own interval, combined (MOVER)"

    def describe(self) -> str:
        return self.method


Pairing: TypeAlias = BootstrapPairing | ProportionPairing | JackknifePairing | IndependentPairing
