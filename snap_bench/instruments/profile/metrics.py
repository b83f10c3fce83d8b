"""The psychometric profile's metrics: a questionnaire's, and the original design's alpha per item bank."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from snap_bench.analysis.metric_functions import metric_function
from snap_bench.analysis.metric_specs import ALPHA, MetricSpec
from snap_bench.analysis.pairings import BootstrapPairing
from snap_bench.instruments.questionnaire.factors import OCCASION
from snap_bench.instruments.questionnaire.metrics import METRICS as QUESTIONNAIRE_METRICS

if TYPE_CHECKING:
    from snap_bench.analysis.pairings import Batch, TableMaker

# The profile's metric functions: each imports its implementation (numpy, pandas) on first use.


@metric_function
def cronbach_alpha() -> Batch:
    from snap_bench.stats import cronbach_alpha_batch

    return cronbach_alpha_batch


@metric_function
def moral_bank_table() -> TableMaker:
    from snap_bench.instruments.profile.analysis import moral_bank_table

    return moral_bank_table


@metric_function
def personality_bank_table() -> TableMaker:
    from snap_bench.instruments.profile.analysis import personality_bank_table

    return personality_bank_table


def _alpha_pairing(bank_table: TableMaker) -> BootstrapPairing:
    """Occasions as rows (the units its own interval resamples), the bank's items as columns."""
    return BootstrapPairing(
        rows=OCCASION,
        columns="item",
        values="keyed",
        statistic=cronbach_alpha,
        table=bank_table,
    )


METRICS: Mapping[str, MetricSpec] = {
    **QUESTIONNAIRE_METRICS,
    # The original design's alphas over a bank's five items: five different constructs, so not a scale;
    # reported for comparison with the design, never judged.
    "cronbach_alpha_moral": MetricSpec(
        f"Cronbach {ALPHA} moral (original design)",
        pairing=_alpha_pairing(moral_bank_table),
        description="the original design's alpha across the moral bank's items (five constructs): not a scale",
    ),
    "cronbach_alpha_personality": MetricSpec(
        f"Cronbach {ALPHA} personality (original design)",
        pairing=_alpha_pairing(personality_bank_table),
        description="the original design's alpha across the personality bank's items (five traits): not a scale",
    ),
}
