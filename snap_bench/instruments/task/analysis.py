"""Observations of the perturbation instrument -> accuracy, consistency and agreement across rewordings.

The figures are judged on the baseline (phase 1): the table of answers (answers.py), the statistics of
a set of units (unit_statistics.py) with intervals over resampled samples (bootstrap.py), what the
report draws (details.py); phase 2's few-shot figures (phase2.py) are reported beside them.
"""

from __future__ import annotations

from collections.abc import Sequence

from snap_bench.analysis.metric_tables import AnalysisSettings, Metric, ModelAnalysis, proportion
from snap_bench.instruments.task.answers import answers_table
from snap_bench.instruments.task.bootstrap import bootstrapped, sample_sums, variant_effect_metrics
from snap_bench.instruments.task.details import report_details
from snap_bench.instruments.task.few_shot import ACCURACY_WEIGHT, EXAMPLES_FACTOR
from snap_bench.instruments.task.label_set import LABEL_GOLD, LabelSet
from snap_bench.instruments.task.phase2 import analyse_phase2
from snap_bench.instruments.task.unit_statistics import (
    NO_POLARITY,
    accuracy_effect_of,
    consistency,
    custom_accuracy,
    exact_accuracy,
    flip_rate_of,
    kappa,
    level_columns,
    level_pairs,
    max_flip_rate,
    polarity_accuracy,
    weighted_index,
)
from snap_bench.observations.observation import Observation
from snap_bench.observations.parsing import AnswerCode

NOT_LABEL_GOLD = "not applicable: the data have polarity gold only (e.g. fresh/rotten), not five classes"


def analyse_perturbation(
    model: str,
    instrument: str,
    observations: Sequence[Observation],
    settings: AnalysisSettings,
    label_set: LabelSet,
    dimensions: Sequence[str],
) -> ModelAnalysis:
    """The robustness figures of one model (``dimensions``: the rewording dimensions in the design's order):
    see unit_statistics' module docstring for the rules."""
    baseline = [o for o in observations if EXAMPLES_FACTOR not in o.factors]
    few_shot = [o for o in observations if EXAMPLES_FACTOR in o.factors]
    result = ModelAnalysis(model, instrument, len(observations), sum(o.is_scored for o in observations))
    n_unscored = sum(not o.is_scored for o in baseline)
    # The metrics are judged on the baseline; phase 2 is reported beside them, not folded into the composite.
    result.judged_scored_share = 1 - n_unscored / len(baseline) if baseline else 0.0
    metrics = result.metrics
    for name, code in (
        ("refusal_rate", AnswerCode.REFUSAL),
        ("invalid_rate", AnswerCode.INVALID),
        ("api_error_rate", AnswerCode.API_ERROR),
    ):
        metrics[name] = proportion(sum(o.code == int(code) for o in baseline), len(baseline), settings.confidence)
    metrics["unscored_rate"] = proportion(n_unscored, len(baseline), settings.confidence)

    answers = answers_table(baseline, label_set, dimensions)
    if isinstance(answers, str):
        for name in ("custom_accuracy", "polarity_accuracy", "exact_accuracy", "consistency", "weighted_index"):
            metrics[name] = Metric(None, undefined=answers)
        return result

    sums = sample_sums(answers)  # each interval's resamples at once (instruments/task/resampling.py)
    metrics["custom_accuracy"] = bootstrapped(answers, custom_accuracy, settings, sums.custom_accuracy)
    metrics["polarity_accuracy"] = (
        bootstrapped(answers, polarity_accuracy, settings, sums.polarity_accuracy)
        if label_set.has_polarity
        else Metric(None, undefined=NO_POLARITY)
    )
    metrics["exact_accuracy"] = (
        bootstrapped(answers, exact_accuracy, settings, sums.exact_accuracy)
        if answers.gold_kind == LABEL_GOLD
        else Metric(None, undefined=NOT_LABEL_GOLD)
    )
    metrics["consistency"] = bootstrapped(answers, consistency, settings, sums.consistency, left_out=False)
    index = sums.weighted_index(ACCURACY_WEIGHT)
    metrics["weighted_index"] = bootstrapped(answers, weighted_index, settings, index)
    metrics["fleiss_kappa"] = bootstrapped(answers, kappa, settings, sums.fleiss_kappa, complete_only=True)
    metrics.update(variant_effect_metrics(answers, settings, sums))
    factors = [f for f in dimensions if len({levels.get(f) for levels in answers.variant_levels}) == 2]
    pairs = {factor: level_pairs(answers, factor)[1] for factor in factors}
    for factor in factors:
        effect = sums.accuracy_effect(*level_columns(answers, factor))
        metrics[f"accuracy_effect[{factor}]"] = bootstrapped(answers, accuracy_effect_of(factor), settings, effect)
        flips = sums.flip_rate(pairs[factor])
        metrics[f"flip_rate[{factor}]"] = bootstrapped(answers, flip_rate_of(factor), settings, flips, left_out=False)
    most = sums.max_flip_rate(list(pairs.values()))
    metrics["max_flip_rate"] = bootstrapped(answers, max_flip_rate(factors), settings, most, left_out=False)

    result.effects = {
        factor: value for factor in factors if (value := metrics[f"accuracy_effect[{factor}]"].value) is not None
    }
    result.details = report_details(answers, factors, metrics)
    if few_shot:
        phase2 = analyse_phase2(answers, baseline, few_shot, settings)
        metrics.update(phase2.gains)
        result.details["phase2"] = phase2.details
    return result
