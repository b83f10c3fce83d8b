"""The psychometric profile's own metrics (the shared ones are in snap_bench.analysis.metric_specs)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from snap_bench.analysis.metric_specs import (
    ALPHA,
    MetricSpec,
    Pairing,
    contradiction_pairing,
    mean_pairwise_r,
    run_pairing,
)
from snap_bench.instruments.profile.factors import OCCASION, PAIR_CONDITION, PARAPHRASE_ROWS

if TYPE_CHECKING:
    from snap_bench.analysis.metric_specs import Batch
    from snap_bench.observations.observation import Observation


def _cv() -> Batch:
    from snap_bench.stats import coefficient_of_variation_batch

    return coefficient_of_variation_batch


def _cronbach() -> Batch:
    from snap_bench.stats import cronbach_alpha_batch

    return cronbach_alpha_batch


def _bank_table(bank: str) -> Callable[[], Callable[[Any, Sequence[Observation]], Any]]:
    """The observations of one item bank (the instrument knows which bank each item is in)."""

    def maker(instrument: Any, observations: Sequence[Observation]) -> Any:
        from snap_bench.analysis.metric_tables import pairing_table

        items = {item.id for item in instrument.items.values() if item.bank == bank}
        return pairing_table(instrument, [o for o in observations if o.item in items])

    return lambda: maker


def _alpha_pairing(bank: str) -> Pairing:
    """Occasions as rows (the units its own interval resamples), the bank's items as columns."""
    return Pairing(OCCASION, "item", "keyed", _cronbach, table=_bank_table(bank))


def _contradiction_table() -> Callable[[Any, Sequence[Observation]], Any]:
    from snap_bench.instruments.profile.analysis import contradiction_table

    return contradiction_table


CONTRADICTION_PAIRING = contradiction_pairing(PAIR_CONDITION, _contradiction_table)


METRICS: Mapping[str, MetricSpec] = {
    "inter_paraphrase_r": MetricSpec(
        "inter-paraphrase r (original design)",
        pairing=Pairing(PARAPHRASE_ROWS, "paraphrase", "keyed", mean_pairwise_r, cluster="item"),
        description="mean Pearson r between the paraphrases of each item, asked under the same condition",
    ),
    "cv_mean": MetricSpec(
        "CV mean (original design)",
        unit="percent",
        better="lower",
        composite_scale=100.0,
        pairing=run_pairing(_cv),
        description="mean coefficient of variation (SD / mean, in %) of each cell's runs",
    ),
    "cv_max": MetricSpec("CV max (original design)", unit="percent", better="lower", composite_scale=100.0),
    # judged, per temperature (contradiction_rate[t0])
    "contradiction_rate": MetricSpec(
        "contradiction rate, {level}",
        unit="share",
        better="lower",
        pairing=CONTRADICTION_PAIRING,
        description="share of (statement, reverse-keyed statement of the same construct) answer pairs on the same "
        "side of neutral under the same condition: agreeing (or disagreeing) with a statement and its reverse",
    ),
    # one per construct, cronbach_alpha[care]: the keyed answers to the construct's statements (each item's
    # paraphrases, the forward and the reverse item) as the scale's items
    "cronbach_alpha": MetricSpec(f"Cronbach {ALPHA} {{level}} (statements)", composite_scale=None),
    # The original design's alphas over a bank's five items: five different constructs, so not a scale;
    # reported for comparison with the design, never judged.
    "cronbach_alpha_moral": MetricSpec(
        f"Cronbach {ALPHA} moral (original design)",
        pairing=_alpha_pairing("moral"),
        description="the original design's alpha across the moral bank's items (five constructs): not a scale",
    ),
    "cronbach_alpha_personality": MetricSpec(
        f"Cronbach {ALPHA} personality (original design)",
        pairing=_alpha_pairing("personality"),
        description="the original design's alpha across the personality bank's items (five traits): not a scale",
    ),
}
