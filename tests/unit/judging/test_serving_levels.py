"""The serving factors judged: flip rates computed by hand, the check's four outcomes (failing closed), the level that
differs named (and the agreeing ones not), the studies found from model names alone, and their thresholds."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.design.config import ConfigError, ConfigFiles
from snap_bench.instruments import ProfileInstrument
from snap_bench.judging.checks import serving_record
from snap_bench.judging.serving_check import FAIL, NOT_JUDGED, PASS, UNDECIDED
from snap_bench.judging.serving_flips import BETWEEN, EXCESS, flip_rate
from snap_bench.judging.serving_levels import (
    serving_checks,
    serving_studies,
)
from snap_bench.judging.verdicts import flip_rate_threshold, load_thresholds
from snap_bench.observations.observation import Observation
from tests.conftest import SHIPPED


def answer(model: str, item: str, run: int, score: int | None, setting: str = "NEU") -> Observation:
    cell = f"{item}-{setting}"
    return Observation(
        model=model,
        instrument="quiz",
        condition_id=f"{cell}-r{run}",
        cell=cell,
        item=item,
        factors={"system_prompt": setting, "temperature": "t1"},
        temperature=1.0,
        run=run,
        messages=[],
        raw_answer=None if score is None else str(score),
        score=score,
        keyed_score=None if score is None else float(score),
        code=-2 if score is None else None,
        reason="",
        construct="c1",
    )


def sheet(model: str, answers: dict[str, list[int | None]], setting: str = "NEU") -> list[Observation]:
    """``answers``: item -> its answers run by run."""
    return [
        answer(model, item, run, score, setting)
        for item, scores in answers.items()
        for run, score in enumerate(scores, start=1)
    ]


def at(threshold: float | None) -> object:
    return lambda _instrument, _factor: threshold


def test_the_flip_rates_of_a_pair_computed_by_hand() -> None:
    a = sheet("m@p1", {"I1": [1, 1], "I2": [2, 3]})
    b = sheet("m@p2", {"I1": [2, 1], "I2": [2, 3]})
    flips = flip_rate(a, b, resamples=200)
    # Between, every pair of runs one of each level in a cell: I1 {1,1} x {2,1} differs in 2 of 4 pairs, I2 {2,3} x
    # {2,3} in 2 of 4: 4 of 8.
    assert (flips.matched, flips.items, flips.runs) == (4, 2, 2)
    assert flips.between == pytest.approx(4 / 8)
    # Within: a flips on I2's pair of runs (1 of 2 pairs), b on both its pairs (2 of 2): (1/2 + 1) / 2.
    assert flips.within == pytest.approx(3 / 4)
    assert flips.excess == pytest.approx(4 / 8 - 3 / 4)
    assert flips.bounded == EXCESS
    assert flips.ci_low is not None
    assert flips.ci_high is not None
    assert flips.ci_low <= flips.excess <= flips.ci_high


def test_each_cell_weighs_alike_in_both_rates_whatever_its_runs() -> None:
    # I1 asked four times by each level, always 3: no flip anywhere. I2 twice: a answers 1 and 2, b 2 and 2: between
    # 2 of 4 pairs, within a 1 of 1, within b 0 of 1. Per cell the excess is 0 in both; weighting the between rate by
    # its 20 pairs of runs and the within rate by its 14 would give 2/20 - (1/7 + 0) / 2 = +0.029 instead.
    a = sheet("m@p1", {"I1": [3, 3, 3, 3], "I2": [1, 2]})
    b = sheet("m@p2", {"I1": [3, 3, 3, 3], "I2": [2, 2]})
    flips = flip_rate(a, b, resamples=200)
    assert flips.between == pytest.approx((0 + 2 / 4) / 2)
    assert flips.within == pytest.approx((0 + (1 + 0) / 2) / 2)
    assert flips.excess == pytest.approx(0.0)


def test_unscored_answers_are_not_matched() -> None:
    a = sheet("m@p1", {"I1": [1, None], "I2": [2, 2]})
    b = sheet("m@p2", {"I1": [2, 1], "I2": [None, 2]})
    flips = flip_rate(a, b, resamples=200)
    # Scored on both sides: conditions I1 r1 and I2 r2; pairs of runs: I1 {1} x {2,1} (1 of 2 differs), I2 {2,2} x
    # {2} (0 of 2).
    assert (flips.matched, flips.between) == (2, 0.25)


def test_a_level_that_moves_every_answer_fails_and_the_same_answers_pass() -> None:
    items = {f"I{i}": [i % 5 + 1] * 3 for i in range(8)}
    moved = {item: [min(5, s + 1) if s < 5 else 4 for s in scores] for item, scores in items.items()}
    (study,) = serving_studies([*sheet("m@p1", items), *sheet("m@p2", moved)], at(0.1), variance=False)
    (check,) = study.checks
    assert check.outcome == FAIL
    assert check.flips.excess == 1.0
    assert (check.flips.ci_low, check.flips.ci_high) == (1.0, 1.0)
    assert check.name == "m-quiz-provider_flip_rate[p1-vs-p2]"
    (same,) = serving_studies([*sheet("m@p1", items), *sheet("m@p2", items)], at(0.1), variance=False)
    assert same.checks[0].outcome == PASS


def test_nothing_matched_is_not_judged_never_a_pass() -> None:
    a = sheet("m@p1", {"I1": [1, 1]}, setting="NEU")
    b = sheet("m@p2", {"I1": [1, 1]}, setting="DIR")  # other conditions: nothing to pair
    studies = serving_studies([*a, *b], at(0.5), variance=False)
    (check,) = studies[0].checks
    assert check.outcome == NOT_JUDGED
    assert "never a pass" in check.message
    assert [c.name for c in serving_checks(studies) if c.outcome == NOT_JUDGED] == [check.name]
    assert serving_record(check, gated=True).decision == "not judged"


def test_no_threshold_is_not_judged_and_says_which_key_to_add() -> None:
    same = {"I1": [1, 1], "I2": [3, 3]}
    (study,) = serving_studies([*sheet("m@p1", same), *sheet("m@p2", same)], at(None), variance=False)
    assert study.checks[0].outcome == NOT_JUDGED
    assert "add provider_flip_rate to the instrument's thresholds.yaml" in study.checks[0].message


def test_one_run_passes_on_the_between_rate_or_asks_for_a_second_run() -> None:
    items = {f"I{i}": [i % 5 + 1] for i in range(6)}
    (same,) = serving_studies([*sheet("m@p1", items), *sheet("m@p2", items)], at(0.1), variance=False)
    assert same.checks[0].flips.bounded == BETWEEN
    assert same.checks[0].flips.within is None
    assert same.checks[0].outcome == PASS  # no flip at all: the bound of the excess is 0
    other = {item: [scores[0] % 5 + 1] for item, scores in items.items()}
    (moved,) = serving_studies([*sheet("m@p1", items), *sheet("m@p2", other)], at(0.1), variance=False)
    check = moved.checks[0]
    # Every answer differs, but with one run the noise it could be is unknown: undecided, never a fail or a pass.
    assert check.outcome == UNDECIDED
    assert "--snap-runs=2" in check.message
    assert [c.name for c in serving_checks([moved]) if c.outcome == UNDECIDED] == [check.name]
    assert [c.name for c in serving_checks([moved]) if c.outcome == FAIL] == []


def noisy_pair() -> list[Observation]:
    """Four items under four prompts, two runs: level a flips run to run on every cell, level b answers a point
    higher on one run of half its cells: an excess with run noise in it, so an interval of some width."""
    a = [
        o
        for setting in ("NEU", "DIR", "PER", "ABS")
        for o in sheet("m@p1", {f"I{i}": [2, 3] for i in range(4)}, setting)
    ]
    b = [
        o
        for n, setting in enumerate(("NEU", "DIR", "PER", "ABS"))
        for o in sheet("m@p2", {f"I{i}": [3, 3] if (i + n) % 2 else [2, 3] for i in range(4)}, setting)
    ]
    return [*a, *b]


@pytest.mark.parametrize(
    ("share", "advice"),
    [(0.75, "items would decide it at the observed noise"), (0.25, "more items would show the change, not a pass")],
)
def test_an_undecided_check_says_what_would_decide_it(share: float, advice: str) -> None:
    (probe,) = serving_studies(noisy_pair(), at(1.0), variance=False)
    flips = probe.checks[0].flips
    assert flips.ci_low is not None
    assert flips.ci_high is not None
    assert flips.excess is not None
    assert flips.ci_low < flips.excess < flips.ci_high
    # A threshold inside the interval, above the estimate (more items could show a pass) or below it (could not).
    edge = flips.excess if share > 0.5 else flips.ci_low
    threshold = edge + (flips.ci_high - edge if share > 0.5 else flips.excess - edge) / 2
    (study,) = serving_studies(noisy_pair(), at(threshold), variance=False)
    check = study.checks[0]
    assert not study.pairs[0].moved_items
    assert check.outcome == UNDECIDED
    assert advice in check.message
    # A number of items only where more of them could show a pass (the estimate within the threshold).
    assert (check.items_to_decide is not None) == (threshold > flips.excess)


def test_an_item_moved_beyond_the_run_noise_fails_the_pair_whatever_its_flip_rate() -> None:
    # Two of twelve items a point higher under every prompt and run: a flip rate of 1/6 (within a threshold of
    # 0.5), but the exact test shows both items moved.
    items = {f"I{i:02d}": [i % 4 + 1] * 3 for i in range(12)}
    moved = {item: [s + 1 for s in scores] if item in ("I01", "I02") else scores for item, scores in items.items()}
    (study,) = serving_studies([*prompts("m@p1", items), *prompts("m@p2", moved)], at(0.5), variance=False)
    check = study.checks[0]
    assert check.flips.ci_high is not None
    assert check.flips.ci_high <= 0.5
    assert study.pairs[0].moved_items == ("I01", "I02")
    assert check.outcome == FAIL
    assert "I01, I02" in check.message


def prompts(model: str, answers: dict[str, list[int | None]]) -> list[Observation]:
    """The same answers under four system prompts (an item's cells: what the item test pools)."""
    return [row for setting in ("NEU", "DIR", "PER", "ABS") for row in sheet(model, answers, setting)]


def three_providers(odd: dict[str, list[int | None]] | None = None) -> list[Observation]:
    agreeing = {f"I{i}": [i % 4 + 1] * 3 for i in range(10)}
    return [
        *prompts("m@p1", agreeing),
        *prompts("m@p2", agreeing),
        *prompts("m@p3", odd or agreeing),
        # A plain model, and another model's serving, are studied apart or not at all.
        *sheet("m", {"I1": [5, 5, 5]}),
    ]


def test_the_provider_that_differs_is_named_and_the_two_that_agree_are_not() -> None:
    odd = {f"I{i}": [i % 4 + 2] * 3 if i < 5 else [i % 4 + 1] * 3 for i in range(10)}
    (study,) = serving_studies(three_providers(odd), at(0.1))
    assert (study.base, study.factor, study.levels) == ("m", "provider", ("p1", "p2", "p3"))
    assert study.differing_level == "p3"
    assert study.differing_pairs == (("p1", "p3"), ("p2", "p3"))
    by_pair = {(p.check.level_a, p.check.level_b): p for p in study.pairs}
    assert by_pair["p1", "p2"].check.outcome == PASS
    assert by_pair["p1", "p2"].moved_items == ()
    assert set(by_pair["p1", "p3"].moved_items) == {f"I{i}" for i in range(5)}
    assert "p3 differs" in study.finding
    agreement = {row.item: row.agreement for row in study.items}
    assert agreement["I0"] == 0.0
    assert agreement["I9"] == 1.0
    # The moved items are a third of the pairs' conditions apart: flip rate 2/3 across the three levels.
    assert {row.item: row.flip_rate for row in study.items}["I0"] == pytest.approx(2 / 3)
    (share,) = study.shares
    assert share.share is not None
    assert share.share > 0.05


def test_no_level_is_named_when_the_servings_agree_and_none_of_two_when_they_differ() -> None:
    (study,) = serving_studies(three_providers(), at(0.1))
    assert study.differing_level is None
    assert study.differing_pairs == ()
    assert [check.outcome for check in study.checks] == [PASS, PASS, PASS]
    (share,) = study.shares
    assert share.share == pytest.approx(0.0, abs=1e-6)
    low = {f"I{i}": [1] * 3 for i in range(6)}
    high = {f"I{i}": [3] * 3 for i in range(6)}
    (pair,) = serving_studies([*prompts("o4@effort-low", low), *prompts("o4@effort-high", high)], at(0.1))
    assert pair.factor == "effort"
    assert pair.differing_level is None
    assert pair.differing_pairs == (("low", "high"),)  # efforts from the least to the most
    assert "neither is named" in pair.finding


def test_each_factor_is_studied_at_each_level_of_the_other() -> None:
    same = {"I1": [1, 1], "I2": [3, 3]}
    models = ("m@p1@effort-low", "m@p1@effort-high", "m@p2@effort-low", "m@p2@effort-high", "m@p3")
    rows = [row for model in models for row in sheet(model, same)]
    found = [(s.factor, s.held, s.levels) for s in serving_studies(rows, at(0.1), variance=False)]
    assert found == [
        ("effort", "p1", ("low", "high")),
        ("effort", "p2", ("low", "high")),
        ("provider", "high", ("p1", "p2")),
        ("provider", "low", ("p1", "p2")),
    ]


def test_the_study_is_plain_json() -> None:
    import json

    (study,) = serving_studies(three_providers(), at(0.1))
    written = json.loads(json.dumps(study.to_dict()))
    assert written["levels"] == ["p1", "p2", "p3"]
    assert written["pairs"][0]["check"]["outcome"] == PASS
    record = serving_record(study.checks[0], gated=True)
    assert (record.kind, record.model, record.metric) == ("serving", "m", "provider_flip_rate[p1-vs-p2]")


scores = st.lists(st.lists(st.one_of(st.none(), st.integers(1, 5)), min_size=1, max_size=4), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(scores)
def test_a_level_that_answers_exactly_as_another_never_shows_an_excess(answers: list[list[int | None]]) -> None:
    """Identical answers: every pair of runs across the levels is a pair within one level or a run with itself, so the
    between rate is the within rate times (n - 1) / n, and no resample shows an excess."""
    items = {f"I{i}": row for i, row in enumerate(answers)}
    flips = flip_rate(sheet("m@p1", items), sheet("m@p2", items), resamples=100)
    if not flips.matched:
        return
    assert flips.between is not None
    if flips.within is None:
        assert flips.between == 0.0  # one run: each answer paired with itself only
    else:
        assert flips.between <= flips.within
    assert flips.judged is not None
    assert flips.judged <= 0.0
    if flips.ci_high is not None:
        assert flips.ci_high <= 0.0


def test_the_thresholds_come_from_thresholds_yaml_and_a_bad_one_names_its_key(tmp_path: Path) -> None:
    specs = {**SHARED_METRICS, **ProfileInstrument.metrics}
    shipped = load_thresholds(SHIPPED, "profile", {}, None, specs)
    assert flip_rate_threshold(shipped, "provider") is not None
    assert flip_rate_threshold(shipped, "effort") is not None
    folder = tmp_path / "config"
    folder.mkdir()
    text = (SHIPPED.path("thresholds.yaml")).read_text()
    (folder / "thresholds.yaml").write_text(text.replace("provider_flip_rate: 0.10", "provider_flip_rate: 0.2", 1))
    assert load_thresholds(ConfigFiles(folder), "profile", {}, None, specs).provider_flip_rate == 0.2
    (folder / "thresholds.yaml").write_text(text.replace("effort_flip_rate: 0.10", "effort_flip_rate: 15", 1))
    with pytest.raises(ConfigError, match=r"profile\.effort_flip_rate: 15 is not a share of conditions"):
        load_thresholds(ConfigFiles(folder), "profile", {}, None, specs)


def test_a_pair_matched_on_a_minority_of_its_conditions_is_not_judged_never_a_pass() -> None:
    # Level b's answers were mostly not its own (served by another provider: unscored); the one condition it did
    # answer agrees, and no flip on it is no evidence for the nine items it never answered.
    items = {f"I{i}": [i % 5 + 1, i % 5 + 1] for i in range(10)}
    unscored = {item: scores if item == "I0" else [None, None] for item, scores in items.items()}
    studies = serving_studies([*sheet("m@p1", items), *sheet("m@p2", unscored)], at(0.5), variance=False)
    (check,) = studies[0].checks
    assert check.outcome == NOT_JUDGED
    assert "2 of 20 conditions" in check.message
    assert serving_record(check, gated=True).coverage == pytest.approx(2 / 20)
    # At the threshold's coverage (half the conditions matched) the pair is judged.
    half = {item: scores if int(item[1:]) < 5 else [None, None] for item, scores in items.items()}
    (judged,) = serving_studies([*sheet("m@p1", items), *sheet("m@p2", half)], at(0.5), variance=False)
    assert judged.checks[0].outcome == PASS


def test_a_pairs_check_is_named_once_when_the_other_factor_is_varied_too() -> None:
    # Providers crossed with efforts: p1 vs p2 is compared at effort low and at effort high, two checks (two test
    # items, two JUnit cases, two lines of the exit status) that must not share a name.
    same = {"I1": [1, 1], "I2": [3, 3]}
    models = ("m@p1@effort-low", "m@p1@effort-high", "m@p2@effort-low", "m@p2@effort-high")
    rows = [row for model in models for row in sheet(model, same)]
    names = [check.name for study in serving_studies(rows, at(0.1), variance=False) for check in study.checks]
    assert len(names) == len(set(names)) == 4
    assert "m-quiz-provider_flip_rate[p1-vs-p2]@effort-high" in names
    # Where the other factor is not varied, the name is the pair's alone.
    (study,) = serving_studies([*sheet("m@p1", same), *sheet("m@p2", same)], at(0.1), variance=False)
    assert study.checks[0].name == "m-quiz-provider_flip_rate[p1-vs-p2]"


def test_the_finding_never_reads_as_agreement_when_pairs_were_not_judged() -> None:
    items = {f"I{i}": [i % 5 + 1, i % 5 + 1] for i in range(4)}
    silent = {item: [None, None] for item in items}  # every answer another provider's: unscored
    (study,) = serving_studies([*sheet("m@p1", items), *sheet("m@p2", silent)], at(0.5), variance=False)
    assert study.checks[0].outcome == NOT_JUDGED
    assert "was shown to differ" not in study.finding
    assert "1 of 1 pair(s) not decided (not judged)" in study.finding
