"""The perturbation intervals computed from per-sample sums see the same resamples, and give the same
figures, as calling each statistic on every resample (the way they were computed before)."""

from __future__ import annotations

import numpy as np
import pytest

from snap_bench.instruments.task import unit_statistics as us
from snap_bench.instruments.task.answers import Answers
from snap_bench.instruments.task.bootstrap import sample_sums
from snap_bench.instruments.task.few_shot import ACCURACY_WEIGHT
from snap_bench.instruments.task.label_set import SENTIMENT, LabelSet
from snap_bench.stats import UndefinedStatistic, bootstrap_ci
from snap_bench.stats.resampled_sums import CountsStatistic

# A nominal set: a wrong label costs 1 whichever it is.
TOPICS = LabelSet(("sport", "politics", "weather"))
FACTORS = ("formality", "phrasing", "order", "synonyms")


def answers(gold_kind: str, seed: int, unscored: float, label_set: LabelSet = SENTIMENT) -> Answers:
    """12 samples x 2 occasions x 16 variants, random labels with a share left unscored."""
    rng = np.random.default_rng(seed)
    levels = [("casual", "formal"), ("imp", "q"), ("task", "text"), ("syn1", "syn2")]
    variant_levels = [
        dict(zip(FACTORS, (levels[f][(code >> f) & 1] for f in range(4)), strict=True)) for code in range(16)
    ]
    samples = [f"s{index:02d}" for index in range(12)]
    sample_of = np.repeat(np.arange(12, dtype=np.intp), 2)
    values = rng.choice(np.array(list(label_set.encoding.values()), dtype=np.float64), size=(24, 16))
    values[rng.random(values.shape) < unscored] = np.nan
    values[3, :] = np.nan  # a unit without any answer
    kinds = ["positive", "negative"] if gold_kind == "polarity" else list(label_set.labels[1:4])
    golds = [str(rng.choice(kinds)) for _ in range(12)]
    intervals = [label_set.gold_interval(gold_kind, golds[s]) for s in sample_of]
    return Answers(
        samples=samples,
        variants=["-".join(lv.values()) for lv in variant_levels],
        variant_levels=variant_levels,
        sample_of=sample_of,
        values=values,
        gold_low=np.array([low for low, _ in intervals]),
        gold_high=np.array([high for _, high in intervals]),
        gold_kind=gold_kind,
        gold_labels=[golds[s] for s in sample_of],
        label_set=label_set,
        dimensions=FACTORS,
    )


def statistics(
    table: Answers,
) -> dict[str, tuple[us.UnitStatistic, CountsStatistic]]:
    sums = sample_sums(table)
    pairs = [us.level_pairs(table, factor)[1] for factor in FACTORS]
    found = {
        "custom_accuracy": (us.custom_accuracy, sums.custom_accuracy),
        "exact_accuracy": (us.exact_accuracy, sums.exact_accuracy),
        "consistency": (us.consistency, sums.consistency),
        "weighted_index": (us.weighted_index, sums.weighted_index(ACCURACY_WEIGHT)),
        "fleiss_kappa": (us.kappa, sums.fleiss_kappa),
        "variant_spread": (us.variant_spread, sums.variant_spread),
        "max_flip_rate": (us.max_flip_rate(FACTORS), sums.max_flip_rate(pairs)),
    }
    if table.label_set.has_polarity:
        found["polarity_accuracy"] = (us.polarity_accuracy, sums.polarity_accuracy)
    for factor, factor_pairs in zip(FACTORS, pairs, strict=True):
        found[f"accuracy_effect[{factor}]"] = (
            us.accuracy_effect_of(factor),
            sums.accuracy_effect(*us.level_columns(table, factor)),
        )
        found[f"flip_rate[{factor}]"] = (us.flip_rate_of(factor), sums.flip_rate(factor_pairs))
    return found


def per_resample(table: Answers, statistic: us.UnitStatistic) -> tuple[float, float]:
    """The interval as it was computed before: the statistic called on the units of every resample."""
    samples = np.arange(len(table.samples), dtype=np.float64).reshape(-1, 1)
    interval = bootstrap_ci(
        lambda rows: statistic(table, table.units_of(rows[:, 0].astype(np.intp))), samples, n_resamples=300, seed=7
    )
    return interval.low, interval.high


@pytest.mark.parametrize(
    ("gold_kind", "label_set"),
    [("polarity", SENTIMENT), ("label", SENTIMENT), ("label", TOPICS)],
    ids=["polarity-sentiment", "label-sentiment", "label-topics"],
)
@pytest.mark.parametrize("unscored", [0.0, 0.3])
def test_batched_intervals_equal_per_resample_intervals(gold_kind: str, label_set: LabelSet, unscored: float) -> None:
    table = answers(gold_kind, seed=3, unscored=unscored, label_set=label_set)
    samples = np.arange(len(table.samples), dtype=np.float64).reshape(-1, 1)
    compared = 0
    for name, (statistic, batch) in statistics(table).items():
        try:
            expected = per_resample(table, statistic)
        except UndefinedStatistic:
            with pytest.raises(UndefinedStatistic):
                bootstrap_ci(batch, samples, n_resamples=300, seed=7, vectorized=True)
            continue
        interval = bootstrap_ci(batch, samples, n_resamples=300, seed=7, vectorized=True)
        assert interval.low == pytest.approx(expected[0], abs=1e-12), name
        assert interval.high == pytest.approx(expected[1], abs=1e-12), name
        full = np.ones((1, len(table.samples)))
        assert batch(samples, full)[0] == pytest.approx(statistic(table, np.arange(24, dtype=np.intp)), abs=1e-12)
        compared += 1
    assert compared >= 13


def test_an_undefined_resample_is_nan_where_the_statistic_raises() -> None:
    table = answers("polarity", seed=5, unscored=0.0)
    sums = sample_sums(table)
    only_the_empty_unit_sample = np.zeros((1, 12))
    only_the_empty_unit_sample[0, 1] = 1.0  # sample 1 holds units 2 and 3; unit 3 has no answer
    assert not np.isnan(sums.custom_accuracy(np.empty(0), only_the_empty_unit_sample)[0])
    assert np.isnan(sums.fleiss_kappa(np.empty(0), only_the_empty_unit_sample)[0])  # one complete unit: kappa needs 2
