"""The perturbation analysis on small synthetic tables whose every figure is worked out by hand."""

from __future__ import annotations

import json
from itertools import product

import pytest

from snap_bench.analysis.metric_specs import SHARED_METRICS, MetricCatalogue
from snap_bench.analysis.metric_tables import AnalysisSettings, analyse
from snap_bench.instruments.task import TaskInstrument
from snap_bench.instruments.task.report import perturbation_section
from snap_bench.observations.observation import Observation
from tests.conftest import shipped_instruments

FACTORS = {
    "formality": ("formal", "casual"),
    "phrasing": ("imp", "q"),
    "order": ("task", "text"),
    "synonyms": ("syn1", "syn2"),
}
VARIANTS = [dict(zip(FACTORS, combination, strict=True)) for combination in product(*FACTORS.values())]
SETTINGS = AnalysisSettings(n_resamples=200, seed=7)


def observation(
    sample: str, levels: dict[str, str], score: int | None, gold: str, model: str = "m", code: int | None = None
) -> Observation:
    return Observation(
        model=model,
        instrument="perturbation",
        condition_id=f"{sample}-{'-'.join(levels.values())}-r1",
        cell=f"{sample}-{'-'.join(levels.values())}",
        item=sample,
        factors=dict(levels),
        temperature=0.0,
        run=1,
        messages=[],
        raw_answer="answer",
        score=score,
        keyed_score=None if score is None else float(score),
        code=code if score is None else None,
        reason="",
        construct=gold,
    )


def polarity_table(model: str = "m") -> list[Observation]:
    """S1 (fresh): formal variants say positive, casual ones neutral, casual-q-text-syn2 is invalid.
    S2 (rotten): every variant says very negative. S3 (fresh): syn1 says positive, syn2 very positive."""
    rows = []
    for levels in VARIANTS:
        if levels == {"formality": "casual", "phrasing": "q", "order": "text", "synonyms": "syn2"}:
            rows.append(observation("S1", levels, None, "polarity:positive", model, code=-2))
        else:
            rows.append(
                observation("S1", levels, 2 if levels["formality"] == "formal" else 0, "polarity:positive", model)
            )
        rows.append(observation("S2", levels, -3, "polarity:negative", model))
        rows.append(observation("S3", levels, 2 if levels["synonyms"] == "syn1" else 3, "polarity:positive", model))
    return rows


def metrics_of(rows: list[Observation]) -> dict[str, object]:
    analysis = analyse(rows, shipped_instruments(), SETTINGS)[("m", "perturbation")]
    return {name: metric for name, metric in analysis.metrics.items()}


def test_kappa_on_a_single_complete_input_is_undefined_not_a_figure() -> None:
    # One variant leaves S3 unlabelled: only S2 has a label from every variant. Kappa's formula on one
    # subject is at most 0 whatever the variants say, so it must not be reported as disagreement.
    rows = [
        o
        if not (o.item == "S3" and o.condition_id.startswith("S3-formal-imp-task-syn1"))
        else observation("S3", dict(o.factors), None, "polarity:positive", code=-2)
        for o in polarity_table()
    ]
    kappa = metrics_of(rows)["fleiss_kappa"]
    assert kappa.value is None
    assert kappa.undefined is not None
    assert "1 input(s) labelled by every variant" in kappa.undefined


def test_headline_figures_by_hand() -> None:
    analysis = analyse(polarity_table(), shipped_instruments(), SETTINGS)[("m", "perturbation")]
    metrics = analysis.metrics
    # squared errors: S1 casual neutral 7 x (2 - 0)^2 = 28 over 47 scored answers; worst penalty 25
    assert metrics["custom_accuracy"].value == pytest.approx(1 - 28 / (47 * 25))
    assert (metrics["custom_accuracy"].n, metrics["custom_accuracy"].n_left_out) == (47, 1)
    assert metrics["polarity_accuracy"].value == pytest.approx(40 / 47)
    assert metrics["exact_accuracy"].value is None
    assert metrics["exact_accuracy"].undefined.startswith("not applicable")
    # modal shares: S1 8/16 (the invalid answer counts against), S2 16/16, S3 8/16
    assert metrics["consistency"].value == pytest.approx(2 / 3)
    assert metrics["weighted_index"].value == pytest.approx(0.7 * (1 - 28 / 1175) + 0.3 * 2 / 3)
    # Fleiss on the complete units S2 [16, 0, 0] and S3 [0, 8, 8]: P-bar = (1 + 112/240) / 2, P_e = 0.375
    assert metrics["fleiss_kappa"].value == pytest.approx(((1 + 112 / 240) / 2 - 0.375) / 0.625)
    assert (metrics["fleiss_kappa"].n, metrics["fleiss_kappa"].n_left_out) == (2, 1)
    # formality flips every S1 pair (8 of 24); synonyms flip S3's 8 pairs and S1's one pair with the invalid answer
    assert metrics["flip_rate[formality]"].value == pytest.approx(8 / 24)
    assert metrics["flip_rate[synonyms]"].value == pytest.approx(9 / 24)
    assert metrics["flip_rate[order]"].value == pytest.approx(1 / 24)
    assert metrics["max_flip_rate"].value == pytest.approx(9 / 24)
    # formal variants are perfect; casual ones pay 28 over 23 scored answers (effect = casual - formal)
    assert metrics["accuracy_effect[formality]"].value == pytest.approx(-28 / 575)
    assert analysis.effects["formality"] == pytest.approx(-28 / 575)
    # the worst variants are the casual ones with S1 scored: errors (4, 0, 0) -> 1 - 4/75
    assert metrics["variant_spread_observed"].value == pytest.approx(4 / 75)
    # Net of input noise: S1's casual errors vary within the casual variants as much as between them
    assert 0 <= metrics["variant_spread"].value <= metrics["variant_spread_observed"].value
    assert metrics["unscored_rate"].value == pytest.approx(1 / 48)
    assert metrics["invalid_rate"].value == pytest.approx(1 / 48)
    for name in ("custom_accuracy", "consistency", "variant_spread_observed"):
        metric = metrics[name]
        assert metric.ci_low is not None
        assert metric.ci_high is not None
        assert metric.ci_low <= metric.value <= metric.ci_high


def test_details_carry_what_the_report_draws() -> None:
    details = analyse(polarity_table(), shipped_instruments(), SETTINGS)[("m", "perturbation")].details
    json.dumps(details, allow_nan=False)
    assert details["gold_kind"] == "polarity"
    assert [v["id"] for v in details["variants"]][:2] == ["casual-imp-task-syn1", "casual-imp-task-syn2"]
    # casual-q-text-syn2 is perfect on S2 and S3 but gives S1 no label, which counts as the worst answer
    # in the ranking; the formal variants are perfect on all three, and the first of those ties wins.
    best = next(v for v in details["variants"] if v["id"] == details["best_variant"])
    unscored = next(v for v in details["variants"] if v["id"] == "casual-q-text-syn2")
    assert details["best_variant"] == "formal-imp-task-syn1"
    assert (best["custom_accuracy"], best["answered_accuracy"]) == (1.0, 1.0)
    assert (unscored["custom_accuracy"], unscored["answered_accuracy"]) == (1.0, pytest.approx(2 / 3))
    assert details["worst_variant"].startswith("casual")
    assert details["factors"]["formality"]["accuracy"] == {"formal": 1.0, "casual": pytest.approx(1 - 28 / 575)}
    invalid = next(v for v in details["variants"] if v["id"] == "casual-q-text-syn2")
    assert invalid["unscored_rate"] == pytest.approx(1 / 3)
    unit = next(u for u in details["units"] if u["sample"] == "S1")
    assert unit["labels"][:2] == ["neutral", "neutral"]
    assert unit["labels"][7] is None  # casual-q-text-syn2, the last casual variant
    assert unit["labels"][8:] == ["positive"] * 8
    assert unit["consistency"] == 0.5


def test_five_class_gold_gives_exact_accuracy() -> None:
    rows = []
    for index, levels in enumerate(VARIANTS):
        rows.append(observation("A1", levels, 3, "gold:very positive"))
        rows.append(observation("A2", levels, -2 if index % 2 else -3, "gold:negative"))
    metrics = analyse(rows, shipped_instruments(), SETTINGS)[("m", "perturbation")].metrics
    assert metrics["exact_accuracy"].value == pytest.approx(24 / 32)
    assert metrics["custom_accuracy"].value == pytest.approx(1 - 8 / (32 * 36))
    assert metrics["polarity_accuracy"].value == 1.0


def test_phase2_is_compared_with_the_same_variant() -> None:
    rows = polarity_table()
    best = VARIANTS[-1]  # casual-q-text-syn2: in the baseline S1 is invalid there
    for position in ("pre", "suf"):
        rows.append(observation("S1", {**best, "examples": position}, 2, "polarity:positive"))
        rows.append(
            observation("S2", {**best, "examples": position}, 2 if position == "suf" else -2, "polarity:negative")
        )
        rows.append(observation("S3", {**best, "examples": position}, 3, "polarity:positive"))
    analysis = analyse(rows, shipped_instruments(), SETTINGS)[("m", "perturbation")]
    phase2 = analysis.details["phase2"]
    assert phase2["variant"] == "casual-q-text-syn2"
    assert phase2["baseline_custom_accuracy"] == 1.0
    assert phase2["positions"]["pre"]["custom_accuracy"] == 1.0
    assert phase2["positions"]["suf"]["custom_accuracy"] == pytest.approx(1 - 16 / 75)
    # The seeded split: S1 chooses (where a formal variant is best), S2 and S3 measure the gain.
    assert (phase2["split"]["selection"], phase2["split"]["held_out"]) == (["S1"], ["S2", "S3"])
    assert phase2["best_on_selection_half"] == "formal-imp-task-syn1"
    assert phase2["choice_held_out"] is False
    # The gain is paired on the held-out half: S2 and S3, where the suffix misses S2 (16 of the worst 25)
    # and the prefix gets both right.
    gain = analysis.metrics["few_shot_gain[suf]"]
    assert (gain.value, gain.n, gain.n_left_out) == (pytest.approx(-8 / 25), 2, 0)
    assert "held-out half" in gain.note
    # resampling the two samples: both S2 (-32 / 2 / 25), one of each (-16 / 2 / 25) or both S3 (0)
    assert (gain.ci_low, gain.ci_high) == (pytest.approx(-0.64), pytest.approx(0.0))
    assert analysis.metrics["few_shot_gain[pre]"].value == 0.0
    # the baseline figures do not see the few-shot answers
    assert analysis.metrics["custom_accuracy"].value == pytest.approx(1 - 28 / 1175)


def test_without_gold_the_accuracy_says_why() -> None:
    rows = [observation("S1", levels, 2, "something else") for levels in VARIANTS]
    metrics = analyse(rows, shipped_instruments(), SETTINGS)[("m", "perturbation")].metrics
    assert metrics["custom_accuracy"].value is None
    assert metrics["custom_accuracy"].undefined == "no gold label recorded with the answers"


def test_report_section_escapes_names_and_draws_the_charts() -> None:
    from snap_bench.judging.verdicts import ModelVerdict, to_json

    rows = polarity_table("<b>evil</b>")
    analysis = analyse(rows, shipped_instruments(), SETTINGS)[("<b>evil</b>", "perturbation")]
    entry = to_json(ModelVerdict("<b>evil</b>", "PASS", 0.9), analysis)
    html = perturbation_section({"<b>evil</b>": entry}, rows, MetricCatalogue({"perturbation": TaskInstrument.metrics}))
    assert "<b>evil</b>" not in html
    assert "&lt;b&gt;evil&lt;/b&gt;" in html
    assert html.count("<svg") == 3
    assert "formal-imp-task-syn1 (best)" in html
    assert "Chart not drawn" not in html


def test_a_few_shot_position_without_scored_answers_has_no_gain() -> None:
    rows = polarity_table()
    best = VARIANTS[0]
    golds = {"S1": "polarity:positive", "S2": "polarity:negative", "S3": "polarity:positive"}
    rows += [observation(s, {**best, "examples": "pre"}, None, gold, code=-2) for s, gold in golds.items()]
    rows += [observation("S2", {**best, "examples": "suf"}, -2, "polarity:negative")]
    analysis = analyse(rows, shipped_instruments(), SETTINGS)[("m", "perturbation")]
    assert analysis.metrics["few_shot_gain[pre]"].value is None
    assert "no sample has a scored answer" in str(analysis.metrics["few_shot_gain[pre]"].undefined)
    assert analysis.details["phase2"]["positions"]["pre"]["unscored_rate"] == 1.0
    suffix = analysis.metrics["few_shot_gain[suf]"]
    assert (suffix.value, suffix.n, suffix.n_left_out) == (0.0, 1, 0)


def test_unscored_few_shot_answers_do_not_move_the_composite() -> None:
    from snap_bench.judging.verdicts import judge, load_thresholds
    from tests.conftest import SHIPPED

    config = load_thresholds(SHIPPED, "perturbation", {}, None, {**SHARED_METRICS, **TaskInstrument.metrics})
    baseline = analyse(polarity_table(), shipped_instruments(), SETTINGS)[("m", "perturbation")]
    rows = polarity_table()
    best = VARIANTS[0]
    golds = {"S1": "polarity:positive", "S2": "polarity:negative", "S3": "polarity:positive"}
    rows += [observation(s, {**best, "examples": "suf"}, None, gold, code=-2) for s, gold in golds.items()]
    with_phase2 = analyse(rows, shipped_instruments(), SETTINGS)[("m", "perturbation")]
    assert (with_phase2.n_observations, with_phase2.n_valid) == (51, 47)
    # the composite is scaled by the baseline's scored share (47 of 48), which phase 2 does not change
    assert baseline.judged_scored_share == with_phase2.judged_scored_share == pytest.approx(47 / 48)
    composite = judge(baseline, config).composite
    assert composite is not None
    assert judge(with_phase2, config).composite == pytest.approx(composite)
