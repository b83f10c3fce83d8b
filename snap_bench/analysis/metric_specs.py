"""What a metric is, in one place: its label, unit, good direction, place in the composite, and pairing.

Each instrument declares a :class:`MetricSpec` for every metric it judges or shows under a name of its
own; the metrics every instrument computes with the shared analysis helpers (answer rates, run-to-run
agreement) are declared here once. thresholds.yaml says how good a metric must be; the spec says what
the metric is, so the verdict, the composite, the gate and the report read direction, scale, pairing and
label from the same entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from snap_bench.observations.observation import Observation

    FloatArray = npt.NDArray[np.float64]
    Batch = Callable[[FloatArray, FloatArray], FloatArray]
    # (the instrument, one model's observations) -> a long pandas table, one row per observation
    TableMaker = Callable[[Any, Sequence[Observation]], Any]
    # (the instrument, one level's long table, a warm start or None) -> the figure refitted on it (NaN when
    # undefined) and the warm start for refits of similar data (the jackknife's leave-one-out refits)
    Refit = Callable[[Any, Any, Any], tuple[float, Any]]
    # (the instrument, one level's long table) -> (value, low, high), NaN when undefined
    Estimate = Callable[[Any, Any], tuple[float, float, float]]

Better = Literal["higher", "lower"]
Unit = Literal["coefficient", "share", "percent", "points"]
ALPHA = "\N{GREEK SMALL LETTER ALPHA}"
PHI = "\N{GREEK CAPITAL LETTER PHI}"
RHO = "\N{GREEK SMALL LETTER RHO}"


PairingMethod = Literal["bootstrap", "proportion", "jackknife", "independent"]


@dataclass(frozen=True)
class Pairing:
    """How two models' observations are lined up for a paired comparison of this metric.

    ``method="bootstrap"``: the metric is computed on a matrix of ``values`` with one row per combination
    of ``rows`` and one column per level of ``columns``; the gate joins both models' matrices on their rows
    (and columns) and resamples the design's random unit, ``cluster`` (a field of the table: every row of
    one item is drawn together, since cells cluster in items), or each row when ``cluster`` is None.
    ``statistic`` returns the vectorised statistic (imported on use: numpy and the stats are loaded at
    session end on the controller only). ``complete``: only rows without a missing value on either side
    enter (correlations); otherwise NaN is passed to the statistic, which decides. ``aggregate``: how
    several observations of one row and column combine ("first", or "mean"). ``within``: the statistic is
    computed within each level of this row field and the largest kept (the compass's larger axis).

    ``method="proportion"``: a rate, the share of the rows whose ``values`` is 1, compared by Newcombe's
    interval for a paired difference of proportions (rows: the conditions both models were asked; a row
    whose value is missing on either side is left out).

    ``method="jackknife"``: a figure refitted on the long table (a G study's coefficient), ``refit``
    returning it; both models' figure is refitted with one ``cluster`` (item) left out at a time, and the
    paired difference's jackknife standard error gives its interval (``stats.paired.jackknife_ci``).

    ``method="independent"``: a figure whose interval is conditional on the shipped design (the compass's
    spread net of run noise), so two models' estimates are independent: ``estimate`` returns each side's
    (value, low, high) and the difference's interval is recovered from both (``stats.paired.mover_ci``).

    ``by``: the metric is one figure per level of this field (``dependability[t0]``: temperature), each
    compared on that level's rows alone and named with its level.

    ``table`` returns the function making the long table of one model's observations (default:
    ``analysis.pairing_table``, the shared table with an ``unscored`` column); an instrument whose metric
    needs other columns (a variant, an error against the gold) gives its own.
    """

    rows: tuple[str, ...]
    columns: str
    values: str
    statistic: Callable[[], Batch]
    cluster: str | None = None
    method: PairingMethod = "bootstrap"
    complete: bool = True
    aggregate: Literal["first", "mean"] = "first"
    within: str | None = None
    table: Callable[[], TableMaker] | None = None
    refit: Callable[[], Refit] | None = None
    estimate: Callable[[], Estimate] | None = None
    by: str | None = None

    def describe(self) -> str:
        if self.method == "proportion":
            return "Newcombe paired"
        if self.method == "jackknife":
            return f"paired jackknife over {self.cluster}s"
        if self.method == "independent":
            return "each side's own interval, combined (MOVER)"
        return f"paired bootstrap over {self.cluster + 's' if self.cluster else ' x '.join(self.rows)}"


@dataclass(frozen=True)
class MetricSpec:
    """One metric's meaning. ``composite_scale``: the value that maps to 0 (lower is better) or 1 (higher
    is better) in the composite, None when the metric does not enter it on a [0, 1] reading."""

    label: str
    unit: Unit = "coefficient"
    better: Better = "higher"
    composite_scale: float | None = 1.0
    pairing: Pairing | None = None
    description: str = ""

    def composite_score(self, value: float) -> float:
        """The value on [0, 1], 1 the best; clipped at both ends."""
        scale = self.composite_scale or 1.0
        clipped = min(max(value, 0.0), scale) / scale
        return clipped if self.better == "higher" else 1 - clipped


def mean_pairwise_r() -> Batch:
    """The vectorised mean pairwise Pearson r (Fisher z), the statistic of every correlation pairing."""
    from snap_bench.stats import mean_pairwise_r_batch

    return mean_pairwise_r_batch


def _icc21() -> Batch:
    from snap_bench.stats import icc_batch

    return partial(icc_batch, form="2,1")


def no_statistic() -> Batch:
    """The ``statistic`` of a pairing compared by its own method (a rate, a refit)."""
    raise TypeError("this metric is compared by its own method (a rate, a refit), not by a batch statistic")


def run_pairing(statistic: Callable[[], Batch], values: str = "keyed") -> Pairing:
    """Cells as rows, runs as columns: the matrix of every run-to-run figure, resampled by item."""
    return Pairing(("cell",), "run", values, statistic, cluster="item")


# Each condition asked of both models is a pair; the rate is the share of them without a score.
RATE_PAIRING = Pairing(("condition_id",), "", "unscored", no_statistic, method="proportion")


def rate(label: str, description: str, pairing: Pairing | None = None) -> MetricSpec:
    return MetricSpec(
        label, unit="share", better="lower", composite_scale=None, pairing=pairing, description=description
    )


def _dependability() -> Refit:
    from snap_bench.analysis.stability import single_answer_phi

    return lambda instrument, table, start: single_answer_phi(table, instrument.stability, start)


# Per temperature, the single-answer dependability refitted with one item left out at a time: the
# gate's interval treats the items as a sample (the verdict's is conditional on them), so it is the
# wider of the two readings; an unchanged model's refits move together, which is what pairing buys.
DEPENDABILITY_PAIRING = Pairing(
    ("condition_id",),
    "",
    "score",
    no_statistic,
    cluster="item",
    method="jackknife",
    refit=_dependability,
    by="temperature",
)


def contradiction_pairing(condition: Sequence[str], table: Callable[[], TableMaker]) -> Pairing:
    """Each (statement, reverse) pair under one condition that both models answered is a pair: Newcombe's
    paired interval of the contradiction rates, per temperature (``table``: the instrument's pair table)."""
    return Pairing(
        ("pair", "temperature", *condition),
        "",
        "contradiction",
        no_statistic,
        method="proportion",
        table=table,
        by="temperature",
    )


def _all_runs_agree() -> Batch:
    from snap_bench.stats import all_runs_agree_share_batch

    return all_runs_agree_share_batch


# The metrics of the shared analysis helpers (snap_bench.analysis.metric_tables): answer rates and run-to-run agreement.
SHARED_METRICS: Mapping[str, MetricSpec] = {
    "unscored_rate": rate(
        "unscored answers", "share of answers without a score (refused, invalid or API error)", RATE_PAIRING
    ),
    "refusal_rate": rate("refusals", "share of answers that refuse to answer"),
    "invalid_rate": rate("invalid answers", "share of answers no score could be read from"),
    "api_error_rate": rate("API errors", "share of conditions whose request failed after every retry"),
    # The judged stability figures, one per temperature (``dependability[t0.5]``): a generalizability
    # study of the raw answers (snap_bench.analysis.stability).
    "dependability": MetricSpec(
        f"dependability {PHI} of one answer, {{level}}",
        pairing=DEPENDABILITY_PAIRING,
        description="share of a single raw answer's variance that is the item's (absolute: every facet's "
        "variance and run noise count as error); 0 for an answerer whose answers ignore the item",
    ),
    "generalizability": MetricSpec(
        f"generalizability E{RHO}\N{SUPERSCRIPT TWO} of one answer, {{level}}",
        composite_scale=None,
        description="relative coefficient of a single raw answer: only the error that reorders items counts",
    ),
    "run_sd": MetricSpec(
        "run-to-run SD, {level}",
        unit="points",
        better="lower",
        composite_scale=None,
        description="standard deviation of one answer around its cell's mean when the same prompt is asked again",
    ),
    "test_retest_r": MetricSpec(
        "test-retest r (original design)",
        pairing=run_pairing(mean_pairwise_r),
        description="the original design's figure, reported, not judged: mean Pearson r between the runs of "
        "each complete cell, all temperatures pooled",
    ),
    "icc2_1": MetricSpec(
        "ICC(2,1) (original design)",
        pairing=run_pairing(_icc21),
        description="the original design's figure, reported, not judged: two-way random, absolute agreement, "
        "single-run intraclass correlation over complete cells x runs, all temperatures pooled",
    ),
    "krippendorff_alpha_runs": MetricSpec(
        f"Krippendorff {ALPHA} (runs)", description="ordinal Krippendorff's alpha with runs as coders"
    ),
    "tara_all_runs": MetricSpec(
        "all runs agree (original design)",
        unit="share",
        pairing=run_pairing(_all_runs_agree, values="score"),
        description="share of cells whose runs all agree",
    ),
    "mean_score": MetricSpec("mean keyed score", unit="points", composite_scale=None),
}


def spec_in(catalogues: Mapping[str, MetricSpec], name: str) -> MetricSpec | None:
    """The spec of ``name`` in an instrument's catalogue, else among the shared metrics."""
    return catalogues.get(name) or SHARED_METRICS.get(name)


# instrument name -> its own metrics, declared when the instrument registers (snap_bench.instruments), so
# that the core reads a metric's meaning without importing any instrument.
_DECLARED: dict[str, Mapping[str, MetricSpec]] = {}


def declare(instrument: str, metrics: Mapping[str, MetricSpec]) -> None:
    _DECLARED[instrument] = metrics


def metric_spec(name: str, instrument: str | None = None) -> MetricSpec | None:
    """What the metric ``name`` is: the instrument's own spec, a shared one, or (without an instrument)
    the first declared instrument's spec of that name."""
    own = _DECLARED.get(instrument, {}) if instrument is not None else {}
    if name in own:
        return own[name]
    if name in SHARED_METRICS:
        return SHARED_METRICS[name]
    return next((metrics[name] for metrics in _DECLARED.values() if name in metrics), None)
