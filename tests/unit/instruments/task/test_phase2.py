"""Phase 2: the diverse few-shot examples, the best variant read from recordings, the audit."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from snap_bench.design.config import ConfigError
from snap_bench.instruments.base import Selection
from snap_bench.instruments.task.few_shot import diverse_examples, seeded_order, tfidf
from snap_bench.instruments.task.instrument import TaskInstrument, best_variant_from_recordings
from snap_bench.instruments.task.labelled_data import Sample
from snap_bench.recordings.cassettes import cassette_path
from snap_bench.recordings.state import Recordings
from tests.conftest import perturbation_task


def instrument() -> TaskInstrument:
    return perturbation_task()


def write_cassette(path: Path, answer: str, status: int = 200) -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]}
    cassette = {
        "version": 1,
        "interactions": [
            {
                "request": {"method": "POST", "uri": "http://x.invalid/v1/chat/completions", "body": "{}"},
                "response": {"status": {"code": status, "message": ""}, "body": {"string": json.dumps(body)}},
            }
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cassette), encoding="utf-8")


def record_baseline(root: Path, design: TaskInstrument, answer_for: dict[str, str]) -> None:
    """Every baseline condition recorded, per variant as answer_for says (default "wrong"): "right" (the
    gold polarity), "wrong" (the other one), "right-then-silent" (right on the first 5 samples, no label
    after), "wrong-first-2" (wrong on the first 2 samples, right after)."""
    order = sorted(design.samples)
    for condition in design.conditions(Selection()):
        gold = design.samples[condition.item].gold
        other = "negative" if gold == "positive" else "positive"
        variant = "-".join(level for _, level in condition.levels)
        position = order.index(condition.item)
        answer = {
            "right": f"The sentiment is {gold}.",
            "wrong": f"The sentiment is {other}.",
            "right-then-silent": f"The sentiment is {gold}." if position < 5 else "Hard to say.",
            "wrong-first-2": f"The sentiment is {other if position < 2 else gold}.",
        }[answer_for.get(variant, "wrong")]
        write_cassette(cassette_path(root, "m", "perturbation", condition.id), answer)


def test_tfidf_rows_are_unit_length_and_weigh_rare_words_up() -> None:
    vectors = tfidf(["good film", "good good plot", "awful"])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    # "film" (in one text) outweighs "good" (in two) within the first text
    vocabulary = sorted({"good", "film", "plot", "awful"})
    assert vectors[0, vocabulary.index("film")] > vectors[0, vocabulary.index("good")]


def test_diverse_examples_are_balanced_deterministic_and_spread() -> None:
    pool = instrument().example_pool
    chosen = diverse_examples(pool, 7)
    assert chosen == diverse_examples(list(pool), 7)
    assert len(chosen) == 14
    # the labels alternate, in the pool's order (its first row is fresh)
    assert [s.gold for s in chosen] == ["positive", "negative"] * 7
    assert len({s.id for s in chosen}) == 14
    # diversity: the chosen lengths spread wider than the first seven of each label in the pool would
    for label in ("positive", "negative"):
        mine = [len(s.text) for s in chosen if s.gold == label]
        first = [len(s.text) for s in pool if s.gold == label][:7]
        assert max(mine) - min(mine) >= max(first) - min(first)


def test_diverse_examples_start_at_the_median_length_and_then_go_far() -> None:
    pool = [
        Sample("E1", "short good", "positive", "fresh"),
        Sample("E2", "a medium length positive review of a film", "positive", "fresh"),
        Sample("E3", "a medium length positive review of a movie", "positive", "fresh"),
        Sample(
            "E4", "an extremely long and winding review that praises everything about the picture", "positive", "fresh"
        ),
        Sample("E5", "bad", "negative", "rotten"),
    ]
    chosen = diverse_examples(pool[:4], 2)
    # the median length of E1..E4 (41.5) lies half-way between E2 (41) and E3 (42): the tie goes to
    # E2 by id; the farthest from E2 in length and words is E4 (E3 differs from E2 in one word only)
    assert [s.id for s in chosen] == ["E2", "E4"]
    with pytest.raises(ValueError, match="only 1 examples labelled 'negative'; 2 are needed"):
        diverse_examples(pool, 2)


def test_seeded_order_is_a_fixed_permutation() -> None:
    chosen = diverse_examples(instrument().example_pool, 7)
    shown = seeded_order(chosen, 20261122)
    assert sorted(s.id for s in shown) == sorted(s.id for s in chosen)
    assert seeded_order(list(chosen), 20261122) == shown
    assert seeded_order(chosen, 1) != shown


def test_the_prompt_shows_the_examples_in_the_seeded_order_not_alternating(tmp_path: Path) -> None:
    design = instrument()
    record_baseline(tmp_path, design, {"casual-imp-task-syn1": "right"})
    follow_up = design.conditions_for("m", Selection(follow_up=True), Recordings(tmp_path))[-1]
    prompt = design.prompt(follow_up)
    expected = seeded_order(diverse_examples(design.example_pool, 7), design.example_order_seed)
    # the example texts appear in the prompt in the seeded order, and the audit lists them so
    assert [prompt.index(s.text) for s in expected] == sorted(prompt.index(s.text) for s in expected)
    audit = design.audit(["m"], Selection(follow_up=True), Recordings(tmp_path))
    assert audit is not None
    assert [e["id"] for e in audit["examples"]] == [s.id for s in expected]
    # a block of strictly alternating labels is a pattern a model continues (see seeded_order)
    labels = [s.gold for s in expected]
    assert any(first == second for first, second in pairwise(labels))


def test_best_variant_is_read_from_the_recordings(tmp_path: Path) -> None:
    design = instrument()
    record_baseline(tmp_path, design, {"casual-q-text-syn2": "right", "formal-q-task-syn1": "right"})
    best = best_variant_from_recordings(design, "m", Recordings(tmp_path), "weighted_index")
    # two variants are perfect; the tie goes to the alphabetically first id
    assert best.variant.id == "casual-q-text-syn2"
    assert best.custom_accuracy == 1.0
    assert best.n_scored == len(design.samples)
    # all variants agree on each input only when all are wrong or right together: here 14 of 16 wrong
    assert best.consistency == pytest.approx(14 / 16)
    assert best.weighted_index == pytest.approx(0.7 * 1.0 + 0.3 * 14 / 16)


@pytest.mark.parametrize("rule", ["weighted_index", "custom_accuracy"])
def test_a_variant_that_rarely_gives_a_label_is_not_the_best(tmp_path: Path, rule: str) -> None:
    design = instrument()
    record_baseline(
        tmp_path, design, {"casual-imp-task-syn1": "right-then-silent", "formal-q-text-syn2": "wrong-first-2"}
    )
    best = best_variant_from_recordings(design, "m", Recordings(tmp_path), rule)
    n = len(design.samples)
    # casual-imp-task-syn1 is right on every answer it labels, but labels only 5: over all its answers
    # (unscored as the worst) 5 / n; formal-q-text-syn2 misses 2 of n by 16 of the worst 25
    assert best.variant.id == "formal-q-text-syn2"
    assert best.custom_accuracy == pytest.approx(1 - 2 * 16 / n / 25)
    assert (best.n_scored, best.n_asked) == (n, n)


def test_phase2_conditions_use_each_models_best_variant(tmp_path: Path) -> None:
    design = instrument()
    record_baseline(tmp_path, design, {"casual-imp-task-syn1": "right"})
    conditions = design.conditions_for("m", Selection(follow_up=True), Recordings(tmp_path))
    extra = conditions[len(design.conditions(Selection())) :]
    assert len(extra) == 2 * len(design.samples)
    assert {c.id.rsplit("-", 2)[0].split("-", 1)[1] for c in extra} == {"casual-imp-task-syn1"}
    assert {c.level("examples") for c in extra} == {"pre", "suf"}
    assert extra[0].id == "S001-casual-imp-task-syn1-pre-r1"
    # without the flag the design is the baseline only
    assert design.conditions_for("m", Selection(), Recordings(tmp_path)) == design.conditions(Selection())
    audit = design.audit(["m"], Selection(follow_up=True), Recordings(tmp_path))
    assert audit is not None
    assert audit["best_variants"]["m"]["variant"] == "casual-imp-task-syn1"
    assert len(audit["examples"]) == 14
    assert not {e["text"] for e in audit["examples"]} & {s.text for s in design.samples.values()}
    assert design.audit(["m"], Selection(), Recordings(tmp_path)) is None


def test_phase2_without_the_whole_baseline_says_what_to_record(tmp_path: Path) -> None:
    design = instrument()
    record_baseline(tmp_path, design, {})
    next((tmp_path / "m" / "perturbation").glob("*.json")).unlink()
    with pytest.raises(ConfigError, match=r"1 of \d+ recordings are missing.*--model=m.*--snap-perturbation-phase2"):
        design.conditions_for("m", Selection(follow_up=True), Recordings(tmp_path))


def test_recorded_answer_ignores_failed_and_malformed_cassettes(tmp_path: Path) -> None:
    recordings = Recordings(tmp_path)
    recordings.folder("m", "perturbation").mkdir(parents=True)
    write_cassette(recordings.path("m", "perturbation", "ok"), "Positive")
    write_cassette(recordings.path("m", "perturbation", "failed"), "Positive", status=500)
    recordings.path("m", "perturbation", "broken").write_text("{not json", encoding="utf-8")
    assert recordings.answer("m", "perturbation", "ok") == "Positive"
    assert recordings.answer("m", "perturbation", "failed") is None
    assert recordings.answer("m", "perturbation", "broken") is None
    assert recordings.answer("m", "perturbation", "missing") is None
