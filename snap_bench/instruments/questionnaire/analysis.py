"""A questionnaire's analysis: C1 stability and C2 sensitivity figures of one model (and where it stands
among human respondents, where the questionnaire has norms).

pandas is imported here, on the controller at session end only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from snap_bench.analysis.contradictions import contradiction_metrics, pair_table, reverse_pairs
from snap_bench.analysis.metric_tables import (
    AnalysisSettings,
    ModelAnalysis,
    answer_rates,
    factor_effects,
    icc21_value,
    interval_metric,
    mean_pairwise_r_value,
    observation_table,
    point_metric,
    retest_metrics,
    wide,
)
from snap_bench.analysis.stability import StabilityDesign, level_metrics
from snap_bench.instruments.questionnaire.design import Norms
from snap_bench.instruments.questionnaire.factors import FACTORS, PAIR_CONDITION, PARAPHRASE_ROWS
from snap_bench.observations.observation import Observation
from snap_bench.stats import cronbach_alpha, cronbach_alpha_batch, mean_pairwise_r_batch
from snap_bench.stats.g_study_design import GStudyDesign


# The G study of each temperature: items are what is measured; a paraphrase belongs to its item; system
# prompt and context are crossed with the items, and may move one item more than another; runs replicate
# a cell. Temperature is never a facet: each temperature is studied, and judged, apart.
def stability_design(context: str) -> StabilityDesign:
    """The G study per temperature of a questionnaire whose context factor is named ``context``."""
    return StabilityDesign(
        GStudyDesign(
            "item",
            ("paraphrase", "system_prompt", context),
            nested={"paraphrase": ("item",)},
            interactions=(("item", "system_prompt"), ("item", context)),
            replicate="run",
        ),
        by="temperature",
    )


STABILITY = stability_design("context")


def analyse_questionnaire(
    model: str,
    instrument: str,
    observations: Sequence[Observation],
    settings: AnalysisSettings,
    banks: Mapping[str, str],
    reverse: Mapping[str, bool],
    norms: Norms | None = None,
) -> ModelAnalysis:
    """The C1 stability and C2 sensitivity figures of a Likert questionnaire for one model.

    ``banks`` maps each item to its item bank where the design has banks (the psychometric profile's
    original design computes an alpha per bank);
    ``reverse`` says which items are reverse-keyed (a construct's forward and reverse items are paired
    for the contradiction rate)."""
    table = observation_table(observations, FACTORS)
    valid = table[table["code"] == 0]
    result = ModelAnalysis(model, instrument, len(table), len(valid))
    metrics = result.metrics
    metrics.update(answer_rates(table, settings))
    # The judged figures: a G study of the raw answers at each temperature apart.
    stability, result.details["g_study"] = level_metrics(table, STABILITY)
    metrics.update(stability)
    # ... and agreeing with a statement and with its reverse, which no stability figure can see.
    metrics.update(contradiction_metrics(table, questionnaire_pairs(observations, reverse), PAIR_CONDITION))
    # The original design's figures, reported for comparison, not judged.
    metrics.update(retest_metrics(table, settings, with_cv=True))

    paraphrases = wide(table, index=list(PARAPHRASE_ROWS), columns="paraphrase", values="keyed")
    metrics["inter_paraphrase_r"] = interval_metric(
        paraphrases, mean_pairwise_r_value, mean_pairwise_r_batch, settings, min_columns=2
    )

    occasion = ["paraphrase", "system_prompt", "temperature", "context", "run"]
    table["bank"] = [banks.get(item, "") for item in table["item"]]
    for bank in sorted(set(banks.values())):
        scale = table[table["bank"] == bank]
        if scale["item"].nunique() >= 2:
            matrix = wide(scale, index=occasion, columns="item", values="keyed")
            metrics[f"cronbach_alpha_{bank}"] = interval_metric(
                matrix, cronbach_alpha, cronbach_alpha_batch, settings, 2
            )
    # A construct's scale: the keyed answers to each of its statements (item x paraphrase) as the columns.
    table["statement"] = table["item"].astype(str) + "-" + table["paraphrase"].astype(str)
    for construct, rows in table.groupby("construct"):
        matrix = wide(
            rows, index=["system_prompt", "temperature", "context", "run"], columns="statement", values="keyed"
        )
        metrics[f"cronbach_alpha[{construct}]"] = point_metric(matrix, cronbach_alpha, min_columns=2)

    if norms is not None:
        from snap_bench.instruments.questionnaire.norms import against_norms

        alphas = {
            name[len("cronbach_alpha[") : -1]: m.value
            for name, m in metrics.items()
            if name.startswith("cronbach_alpha[")
        }
        result.details["norms"] = against_norms(valid, norms, alphas)
    result.effects = factor_effects(valid, FACTORS)
    result.construct_means = {str(k): float(v) for k, v in valid.groupby("construct")["keyed"].mean().items()}
    for factor in ("system_prompt", "temperature", "context"):
        result.breakdowns[factor] = {str(level): _breakdown(rows) for level, rows in table.groupby(factor)}
    return result


def questionnaire_pairs(observations: Sequence[Observation], reverse: Mapping[str, bool]) -> list[tuple[str, str]]:
    """Each construct's forward item with its reverse-keyed partner (M01 with M06, ...)."""
    constructs = {o.item: o.construct or o.item for o in observations}
    return reverse_pairs(constructs, reverse)


def contradiction_table(instrument: Any, observations: Sequence[Observation]) -> Any:
    """One row per (statement, reverse) pair and condition, for the upgrade gate."""
    reverse = {item.id: item.reverse_scored for item in instrument.items.values()}
    return pair_table(
        observation_table(observations, FACTORS), questionnaire_pairs(observations, reverse), PAIR_CONDITION
    )


def _breakdown(rows: Any) -> dict[str, float | None]:
    """Point values of the headline figures within one level of a factor (no intervals: a table, not a test)."""
    level_runs = wide(rows, ["cell"], "run", "keyed")
    return {
        "test_retest_r": point_metric(level_runs, mean_pairwise_r_value, 2).value,
        "icc2_1": point_metric(level_runs, icc21_value, 2).value,
        "mean_score": float(rows["keyed"].mean()) if rows["keyed"].notna().any() else None,
        "unscored_rate": float((rows["code"] != 0).mean()),
    }
