"""Reading a classification task written in YAML + CSV: the documented defaults, label sets with and without
weights, phase 2 from a task's own examples, every mistake named by file, key and fix; and the sentiment
study read by the same reader gives the prompts it always gave."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from snap_bench.design.config import ConfigError
from snap_bench.instruments.base import Selection
from snap_bench.instruments.task import TaskInstrument, task_kind
from snap_bench.instruments.task.label_set import SENTIMENT, LabelSet
from snap_bench.instruments.task.task import read_task
from snap_bench.recordings.cassettes import cassette_path
from snap_bench.recordings.state import Recordings
from tests.conftest import PERTURBATION, SHIPPED, perturbation_task
from tests.unit.instruments.task.test_phase2 import write_cassette

TOPICS = """\
task: topics
labels: [sport, politics, weather]
data: {test: topics.csv, examples: examples.csv}
template: "{tone} the topic of this text, one of: {labels}.\\n\\nText: {text}"
dimensions:
  tone: {formal: "Please name", casual: "Hey, tell me"}
"""
ROWS = "text,label\nThe striker scored.,sport\nParliament voted.,politics\nRain tomorrow.,weather\n"
EXAMPLES = "text,label\nA marathon.,sport\nA new tax.,politics\nStorms at noon.,weather\n"


def write_task(tmp_path: Path, text: str = TOPICS, rows: str = ROWS) -> Path:
    (tmp_path / "topics.csv").write_text(rows, encoding="utf-8")
    (tmp_path / "examples.csv").write_text(EXAMPLES, encoding="utf-8")
    path = tmp_path / "topics.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def topics(tmp_path: Path, text: str = TOPICS, rows: str = ROWS) -> TaskInstrument:
    return task_kind(write_task(tmp_path, text, rows), SHIPPED)(SHIPPED)


def test_the_minimal_task_gets_the_documented_defaults(tmp_path: Path) -> None:
    design = read_task(write_task(tmp_path), SHIPPED)
    assert design.label_set == LabelSet(("sport", "politics", "weather"))
    assert design.temperatures == [0.0]
    assert design.runs == 1
    assert design.max_tokens == 16
    assert design.data_spec.gold_kind == "label"
    assert design.few_shot.examples_per_label == 3
    task = topics(tmp_path)
    conditions = task.conditions(Selection())
    assert [c.id for c in conditions[:2]] == ["S001-formal-r1", "S001-casual-r1"]
    assert len(conditions) == 3 * 2  # inputs x tone, one temperature and run
    # a level written as one text fills the placeholder named after its dimension
    assert task.prompt(conditions[1]) == (
        "Hey, tell me the topic of this text, one of: sport, politics, weather.\n\nText: The striker scored."
    )


def test_a_nominal_label_costs_one_per_wrong_answer(tmp_path: Path) -> None:
    task = topics(tmp_path)
    condition = task.conditions(Selection())[0]  # gold: sport
    right, wrong = task.score(condition, "Sport."), task.score(condition, "The topic is politics.")
    assert (right.keyed_score, wrong.keyed_score) == (0.0, 1.0)
    low, high = task.label_set.gold_interval("label", "sport")
    assert task.label_set.errors([0.0, 1.0, 2.0], [low] * 3, [high] * 3).tolist() == [0.0, 1.0, 1.0]
    assert task.label_set.max_error("label") == 1.0
    assert task.score(condition, "Sport or politics.").keyed_score is None  # two labels: ambiguous, never guessed


def test_weighted_labels_take_polarity_gold(tmp_path: Path) -> None:
    text = TOPICS.replace("labels: [sport, politics, weather]", "labels: {bad: -2, meh: 0, good: 1}").replace(
        "data: {", "data: {gold: polarity, label_map: {sport: positive, politics: negative, weather: positive}, "
    )
    task = topics(tmp_path, text.replace(", examples: examples.csv", ""))
    assert task.label_set.weighted
    assert task.label_set.has_polarity
    assert task.label_set.gold_interval("polarity", "positive") == (1.0, 1.0)
    # the worst: "bad" for a positive text, -2 against +1, or "good" for a negative one, +1 against -2
    assert task.label_set.max_error("polarity") == 9.0
    assert task.score(task.conditions(Selection())[0], "good").keyed_score == 1.0


def test_the_sentiment_study_is_a_task_file_with_the_sentiment_labels() -> None:
    """benchmarks/perturbation.yaml: the study's five labels and polarity weights, its 16 rewordings, 50 inputs
    (tests/unit/recordings/test_shipped_recordings.py shows its prompts are the recorded ones, byte for byte)."""
    study = perturbation_task()
    assert study.name == "perturbation"
    assert study.label_set == SENTIMENT
    assert len(study.variants()) == 16
    assert len(study.conditions(Selection())) == 50 * 16
    assert study.source_files == [
        PERTURBATION,
        *(SHIPPED.path(f"data/rotten_tomatoes_{s}.csv") for s in ("test", "examples")),
    ]


def test_phase2_of_a_task_asks_its_best_variant_with_its_own_examples(tmp_path: Path) -> None:
    (tmp_path / "task").mkdir()
    with pytest.raises(ConfigError, match=r"phase2\.examples_per_label: only 1 examples labelled 'sport'; 3 are"):
        topics(tmp_path / "task").examples()  # the default 3 per label, from a pool of one each
    task = topics(tmp_path / "task", TOPICS + "phase2: {examples_per_label: 1}\n")
    for condition in task.conditions(Selection()):
        gold = task.samples[condition.item].gold
        answer = gold if dict(condition.levels)["tone"] == "casual" else "weather"
        write_cassette(cassette_path(tmp_path / "cassettes", "m", "topics", condition.id), answer)
    recordings = Recordings(tmp_path / "cassettes")
    assert task.best_variant("m", recordings).variant.id == "casual"
    follow_up = task.conditions_for("m", Selection(follow_up=True), recordings)[len(task.samples) * 2 :]
    assert {dict(c.levels)["examples"] for c in follow_up} == {"pre", "suf"}
    prompt = task.prompt(follow_up[0])
    assert prompt.startswith("Here are some labelled examples:")
    assert "Text: A new tax.\nAnswer: politics" in prompt
    audit = task.audit(["m"], Selection(follow_up=True), recordings)
    assert audit is not None
    assert [e["label"] for e in audit["examples"]] != []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("labels: [sport, politics, weather]", "labels: [Sport, politics]"), "labels: label 'Sport' is read from"),
        (("labels: [sport, politics, weather]", "labels: [sport]"), "labels: 1 label(s). Fix: list at least two"),
        (("labels: [sport, politics, weather]", "labels: {sport: 0.5, politics: 1}"), "labels.sport: weight 0.5"),
        (("data: {", "data: {gold: polarity, "), "data.gold: polarity gold needs labels weighted on both sides"),
        (
            ("dimensions:", "dimension:"),
            "dimension: unknown key. Fix: write `dimensions` (the closest known key), or use one of: task, title",
        ),
        (('  tone: {formal: "Please name", casual: "Hey, tell me"}', "  tone: {formal: x}"), "has 1 level(s)"),
        (("{tone} the topic", "the topic"), "dimensions.tone: its levels give the same prompt. Fix: use the"),
        (("{tone} the topic", "{tone} {nope} the topic"), "template: unknown placeholder {nope}"),
        (("task: topics", "task: two words"), "task: 'two words' is not a name"),
    ],
)
def test_a_mistake_names_file_key_and_fix(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        read_task(write_task(tmp_path, TOPICS.replace(*change)), SHIPPED)
    assert str(raised.value).startswith(str(tmp_path / "topics.yaml")), str(raised.value)
    assert message in str(raised.value)


def test_a_gold_label_outside_the_set_names_the_data_file_and_row(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        read_task(write_task(tmp_path, rows=ROWS + "Shares fell.,business\n"), SHIPPED)
    assert str(raised.value).startswith(f"{tmp_path / 'topics.csv'}: row 5: label 'business' is not one of the labels")


def test_nominal_errors_agree_with_exact_accuracy() -> None:
    labels = LabelSet(("a", "b", "c"))
    values = np.array([0.0, 1.0, 2.0, 2.0])
    gold = np.array([0.0, 1.0, 1.0, 2.0])
    assert 1 - labels.errors(values, gold, gold).mean() == np.mean(values == gold)
