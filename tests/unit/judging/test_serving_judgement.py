"""The serving factors in the session's judgement: each pair's check is recorded and gated with the thresholds, the
exit status never passes a provider that moved, analysis.json holds the studies (and nothing new without them).

The answers are real: the committed baseline file of qwen2.5-coder-1.5b (its BFI-25 answers, recorded from the
model), asked as three servings of one model; the third answers one point higher on half the items.
"""

from __future__ import annotations

import dataclasses
from functools import cache

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.judging.baseline import parse_baseline
from snap_bench.judging.exit_status import BenchExit, decide, findings
from snap_bench.judging.gate import Gate
from snap_bench.judging.judgement import Judgement, judge_session
from snap_bench.judging.verdicts import ThresholdConfig, load_thresholds
from snap_bench.observations.observation import Observation
from snap_bench.report.analysis_document import analysis_document
from snap_bench.session.outcome import NOT_JUDGED, check_outcomes
from tests.conftest import REPO, SHIPPED, shipped_instruments

INSTRUMENT = "bfi25"
SETTINGS = AnalysisSettings(n_resamples=20)


@cache
def recorded() -> tuple[Observation, ...]:
    spec = parse_baseline(str(REPO / "baselines" / "qwen2.5-coder-1.5b.json"), [])
    return tuple(o for o in spec.observations if o.instrument == INSTRUMENT)


def thresholds(instrument: str) -> ThresholdConfig:
    kind = shipped_instruments()[instrument]
    return load_thresholds(SHIPPED, instrument, {}, None, {**SHARED_METRICS, **kind.metrics}, kind.thresholds_section())


def one_higher(o: Observation, items: set[str]) -> Observation:
    """The answer one point higher (at most 5) on the chosen items, its keyed score with it."""
    if o.item not in items or o.score is None or o.keyed_score is None or o.score == 5:
        return o
    keyed = o.keyed_score + 1 if o.keyed_score == o.score else o.keyed_score - 1
    return dataclasses.replace(o, score=o.score + 1, keyed_score=keyed)


def servings(moved: bool) -> list[Observation]:
    rows = recorded()
    items = sorted({o.item for o in rows})
    half = set(items[::2]) if moved else set()
    return [
        *(dataclasses.replace(o, model="m@p1") for o in rows),
        *(dataclasses.replace(o, model="m@p2") for o in rows),
        *(dataclasses.replace(one_higher(o, half), model="m@p3") for o in rows),
    ]


def judged(observations: list[Observation]) -> Judgement:
    instruments = {INSTRUMENT: shipped_instruments()[INSTRUMENT]}
    return judge_session(observations, instruments, SETTINGS, thresholds, None, models=["m@p1", "m@p2", "m@p3"])


def test_a_provider_that_moved_is_named_its_checks_recorded_and_the_run_not_passed() -> None:
    judgement = judged(servings(moved=True))
    [study] = judgement.servings
    assert (study.base, study.factor, study.levels) == ("m", "provider", ("p1", "p2", "p3"))
    assert study.differing_level == "p3"
    records = {r.name: r for r in judgement.checks if r.kind == "serving"}
    assert set(records) == {
        f"m-{INSTRUMENT}-provider_flip_rate[{a}-vs-{b}]" for a, b in (("p1", "p2"), ("p1", "p3"), ("p2", "p3"))
    }
    assert records[f"m-{INSTRUMENT}-provider_flip_rate[p1-vs-p2]"].decision == "pass"
    moved = [records[f"m-{INSTRUMENT}-provider_flip_rate[{a}-vs-p3]"] for a in ("p1", "p2")]
    assert all(r.decision in ("fail", "undecided") for r in moved)
    # Gated with the thresholds: a pair not shown within its threshold keeps the run from passing.
    decision = decide(findings(judgement, Gate(), {}, 0, True))
    assert decision.code in (BenchExit.CHECKS_FAILED, BenchExit.UNDECIDED)
    named = [*judgement.failed_thresholds, *judgement.serving_undecided]
    assert {r.name for r in moved} <= set(named)
    document = analysis_document(judgement, shipped_instruments(), {})
    assert document["servings"][0]["differing_level"] == "p3"


def test_servings_that_answer_alike_pass_and_a_design_without_servings_writes_no_new_key() -> None:
    judgement = judged(servings(moved=False))
    assert [r.decision for r in judgement.checks if r.kind == "serving"] == ["pass"] * 3
    assert not judgement.serving_undecided
    plain = judge_session(
        [dataclasses.replace(o, model="m") for o in recorded()],
        {INSTRUMENT: shipped_instruments()[INSTRUMENT]},
        SETTINGS,
        thresholds,
        None,
        models=["m"],
    )
    assert plain.servings == []
    assert "servings" not in analysis_document(plain, shipped_instruments(), {})


def test_a_pair_whose_level_answered_nothing_is_not_judged_as_its_outcome_says_never_a_failed_test() -> None:
    # m@p2's answers were all another provider's (unscored): its pairs are not judged, and the check's test outcome
    # says so (NOT JUDGED, as a threshold check's), not FAILED beside an exit status that says "incomplete".
    rows = [
        o if o.model != "m@p2" else dataclasses.replace(o, score=None, keyed_score=None, code=-3)
        for o in servings(moved=False)
    ]
    judgement = judged(rows)
    outcomes = {o.name: o for o in check_outcomes(judgement, Gate()) if o.record.kind == "serving"}
    unjudged = [o for o in outcomes.values() if o.record.decision == "not judged"]
    assert {o.name for o in unjudged} == {
        f"m-{INSTRUMENT}-provider_flip_rate[{a}-vs-{b}]" for a, b in (("p1", "p2"), ("p2", "p3"))
    }
    assert all(o.category == NOT_JUDGED and not o.fails_run for o in unjudged)
    # The exit status counts them as checks not computed (the gate incomplete), never as passed.
    assert {o.name for o in unjudged} <= set(findings(judgement, Gate(), {}, 0, True).not_judged)
