"""What a metric is, in one place: its label, unit, good direction, place in the composite, and pairing.

Each instrument declares a :class:`MetricSpec` for every metric it judges or shows under a name of its
own; the metrics every instrument computes with the shared analysis helpers (answer rates, run-to-run
agreement) are declared here once. thresholds.yaml says how good a metric must be; the spec says what
the metric is, so the verdict, the composite, the gate and the report read direction, scale, pairing and
label from the same entry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from snap_bench.analysis.metric_functions import metric_function
from snap_bench.analysis.pairings import (
    BootstrapPairing,
    IndependentPairing,
    JackknifePairing,
    Pairing,
    ProportionPairing,
)

if TYPE_CHECKING:
    from snap_bench.analysis.pairings import Batch, Estimate, Refit, TableMaker

Better = Literal["higher", "lower"]
Unit = Literal["coefficient", "share", "percent", "points"]
ALPHA = "\N{GREEK SMALL LETTER ALPHA}"
PHI = "\N{GREEK CAPITAL LETTER PHI}"
RHO = "\N{GREEK SMALL LETTER RHO}"


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


# The shared metric functions: each imports its implementation (numpy, pandas, the statistics) on first use.


@metric_function
def mean_pairwise_r() -> Batch:
    """The vectorised mean pairwise Pearson r (Fisher z), the statistic of every correlation pairing."""
    from snap_bench.stats import mean_pairwise_r_batch

    return mean_pairwise_r_batch


@metric_function
def icc21() -> Batch:
    from snap_bench.analysis.metric_tables import icc21_batch

    return icc21_batch


@metric_function
def all_runs_agree_share() -> Batch:
    from snap_bench.stats import all_runs_agree_share_batch

    return all_runs_agree_share_batch


@metric_function
def dependability_refit() -> Refit:
    from snap_bench.analysis.stability import dependability_refit

    return dependability_refit


@metric_function
def run_sd_estimate() -> Estimate:
    from snap_bench.analysis.stability import run_sd_estimate

    return run_sd_estimate


def run_pairing(statistic: Batch, values: str = "keyed") -> BootstrapPairing:
    """Cells as rows, runs as columns: the matrix of every run-to-run figure, resampled by item."""
    return BootstrapPairing(rows=("cell",), columns="run", values=values, statistic=statistic, cluster="item")


# Each condition asked of both models is a pair; the rate is the share of them without a score.
RATE_PAIRING = ProportionPairing(rows=("condition_id",), values="unscored")


def rate(label: str, description: str, pairing: Pairing | None = None) -> MetricSpec:
    return MetricSpec(
        label, unit="share", better="lower", composite_scale=None, pairing=pairing, description=description
    )


# Per temperature, the single-answer dependability refitted with one item left out at a time: the
# gate's interval treats the items as a sample (the verdict's is conditional on them), so it is the
# wider of the two readings; an unchanged model's refits move together, which is what pairing buys.
DEPENDABILITY_PAIRING = JackknifePairing(
    values="score",
    cluster="item",
    refit=dependability_refit,
    by="temperature",
)


# Per temperature, the run-to-run SD: both recordings' own SDs, each pooled over the cells of the design both
# answered with its chi-square interval, combined. It is the one figure of a fixed design whose noise is the
# run noise alone (no item spread in it), so it tells a noisier model from an unchanged one where the
# coefficients, which mix the run noise with the items' spread, cannot on a small questionnaire.
RUN_SD_PAIRING = IndependentPairing(
    values="score",
    estimate=run_sd_estimate,
    by="temperature",
    method="fixed design: each side's SD pooled within cells (chi-square interval), combined (MOVER)",
)


def contradiction_pairing(condition: Sequence[str], table: TableMaker) -> ProportionPairing:
    """Each (statement, reverse) pair under one condition that both models answered is a pair: Newcombe's
    paired interval of the contradiction rates, per temperature (``table``: the instrument's pair table)."""
    return ProportionPairing(
        rows=("pair", "temperature", *condition), values="contradiction", table=table, by="temperature"
    )


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
        pairing=RUN_SD_PAIRING,
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
        pairing=run_pairing(icc21),
        description="the original design's figure, reported, not judged: two-way random, absolute agreement, "
        "single-run intraclass correlation over complete cells x runs, all temperatures pooled",
    ),
    "krippendorff_alpha_runs": MetricSpec(
        f"Krippendorff {ALPHA} (runs)", description="ordinal Krippendorff's alpha with runs as coders"
    ),
    "tara_all_runs": MetricSpec(
        "all runs agree (original design)",
        unit="share",
        pairing=run_pairing(all_runs_agree_share, values="score"),
        description="share of cells whose runs all agree",
    ),
    "mean_score": MetricSpec("mean keyed score", unit="points", composite_scale=None),
}


def spec_in(catalogues: Mapping[str, MetricSpec], name: str) -> MetricSpec | None:
    """The spec of ``name`` in an instrument's catalogue, else among the shared metrics."""
    return catalogues.get(name) or SHARED_METRICS.get(name)


@dataclass(frozen=True)
class MetricCatalogue:
    """What each metric of a session is: the shared specs and each instrument's own. Whatever reads a metric's
    meaning without its instrument at hand (the report) is handed one, built from the session's instruments:
    no registry of metrics is kept beside the instruments'."""

    instruments: Mapping[str, Mapping[str, MetricSpec]] = field(default_factory=dict)

    def spec(self, name: str, instrument: str | None = None) -> MetricSpec | None:
        """What the metric ``name`` is: the instrument's own spec, a shared one, or (without an instrument)
        the first instrument's spec of that name."""
        own = self.instruments.get(instrument, {}) if instrument is not None else {}
        if name in own:
            return own[name]
        if name in SHARED_METRICS:
            return SHARED_METRICS[name]
        return next((metrics[name] for metrics in self.instruments.values() if name in metrics), None)
