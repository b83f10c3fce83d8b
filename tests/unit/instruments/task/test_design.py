"""The perturbation design: variants rendered from factor levels, data files, conditions, config errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from snap_bench.design.config import ConfigError, ConfigFiles
from snap_bench.instruments.base import Selection
from snap_bench.instruments.task.instrument import TaskInstrument
from snap_bench.instruments.task.label_set import SENTIMENT
from snap_bench.instruments.task.labelled_data import read_gold
from snap_bench.observations.observation import Condition
from tests.conftest import PERTURBATION, own_copy, perturbation_task, set_limit

LABELS = SENTIMENT.labels

FIVE_CLASS_CSV = """id,text,label
A1,"A masterpiece, pure joy from start to finish.",4
A2,"Pleasant enough, with a few good jokes.",3
A3,"It is a film. It has a runtime.",2
A4,"Dull and overlong, though the cast tries.",1
A5,"An insult to the audience {and} to cinema.",0
"""


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A project's config folder (an empty data/ beside the packaged files), with a copy of the study's task
    file in benchmarks/ beside it."""
    target = tmp_path / "config"
    (target / "data").mkdir(parents=True)
    (tmp_path / "benchmarks").mkdir()
    shutil.copy(PERTURBATION, task_file(target))
    return target


def task_file(config_dir: Path) -> Path:
    return config_dir.parent / "benchmarks" / "perturbation.yaml"


def load(config_dir: Path) -> TaskInstrument:
    return perturbation_task(ConfigFiles(config_dir), task_file(config_dir))


def edit(config_dir: Path, old: str, new: str) -> None:
    path = task_file(config_dir)
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def five_class(config_dir: Path) -> TaskInstrument:
    (config_dir / "data" / "five.csv").write_text(FIVE_CLASS_CSV, encoding="utf-8")
    edit(config_dir, "test: data/rotten_tomatoes_test.csv", "test: data/five.csv")
    edit(config_dir, "examples: data/rotten_tomatoes_examples.csv", "examples: null")
    edit(config_dir, "gold: polarity", "gold: five_class")
    edit(
        config_dir,
        "label_map: {fresh: positive, rotten: negative}",
        "label_map: {0: very negative, 1: negative, 2: neutral, 3: positive, 4: very positive}",
    )
    return load(config_dir)


def shipped() -> TaskInstrument:
    return perturbation_task()


def test_sixteen_variants_render_sixteen_distinct_prompts_that_keep_the_text() -> None:
    instrument = shipped()
    variants = instrument.variants()
    assert len(variants) == 16
    assert len({variant.id for variant in variants}) == 16
    sample = next(iter(instrument.samples.values()))
    prompts = [instrument.design.render(variant, sample.text) for variant in variants]
    assert len(set(prompts)) == 16
    assert all(sample.text in prompt for prompt in prompts)
    assert all("{" not in prompt.replace(sample.text, "") for prompt in prompts)


def test_each_factor_changes_the_prompt_as_its_levels_say() -> None:
    instrument = shipped()
    render = instrument.design.render
    from snap_bench.instruments.task.prompt_variants import Variant

    def prompt(formality: str, phrasing: str, order: str, synonyms: str) -> str:
        levels = (("formality", formality), ("phrasing", phrasing), ("order", order), ("synonyms", synonyms))
        return render(Variant(levels), "THE TEXT")

    assert prompt("formal", "imp", "task", "syn1").startswith("Please analyze the sentiment of the following text")
    assert prompt("casual", "imp", "task", "syn1").startswith("Hey, go ahead and analyze")
    assert prompt("formal", "q", "task", "syn1").startswith("What is the sentiment of the following text?")
    assert prompt("formal", "imp", "text", "syn1").startswith("Text: THE TEXT")
    assert "the text above" in prompt("formal", "imp", "text", "syn1")
    assert "evaluate the emotion" in prompt("formal", "imp", "task", "syn2")
    assert "categorize it" in prompt("formal", "imp", "task", "syn2")
    for variant_prompt in (prompt("formal", "imp", "task", "syn1"), prompt("casual", "q", "text", "syn2")):
        assert ", ".join(LABELS) in variant_prompt


def test_braces_in_a_text_are_not_placeholders(config_dir: Path) -> None:
    instrument = five_class(config_dir)
    condition = instrument.conditions(Selection(items=frozenset({"A5"})))[0]
    assert "An insult to the audience {and} to cinema." in instrument.messages(condition)[0]["content"]


def test_conditions_are_sample_major_with_readable_ids() -> None:
    instrument = shipped()
    conditions = instrument.conditions(Selection())
    assert len(conditions) == len(instrument.samples) * 16
    assert conditions[0].id == "S001-formal-imp-task-syn1-r1"
    assert [c.item for c in conditions[:16]] == ["S001"] * 16
    assert len({c.id for c in conditions}) == len(conditions)
    assert conditions[0].temperature == 0.0


def test_selection_by_sample_level_and_runs() -> None:
    instrument = shipped()
    chosen = instrument.conditions(Selection(items=frozenset({"S002"}), levels={"formality": frozenset({"casual"})}))
    assert len(chosen) == 8
    assert all(c.item == "S002" and c.level("formality") == "casual" for c in chosen)
    assert len(instrument.conditions(Selection(items=frozenset({"S001"}), runs=3))) == 48
    # a factor this design does not have (the profile's system prompt) selects nothing of it
    assert instrument.conditions(Selection(levels={"system_prompt": frozenset({"NEU"})})) == []


def test_several_temperatures_enter_the_id(config_dir: Path) -> None:
    edit(config_dir, "temperatures: [0.0]", "temperatures: [0.0, 0.7]")
    instrument = load(config_dir)
    ids = [c.id for c in instrument.conditions(Selection(items=frozenset({"S001"})))]
    assert ids[:2] == ["S001-formal-imp-task-syn1-t0-r1", "S001-formal-imp-task-syn1-t0.7-r1"]


def test_the_shipped_sample_is_balanced_and_disjoint_from_the_examples(config_dir: Path) -> None:
    instrument = load(config_dir)
    assert len(instrument.samples) == 50
    golds = [s.gold for s in instrument.samples.values()]
    assert golds.count("positive") == golds.count("negative")
    test_texts = {s.text for s in instrument.samples.values()}
    assert not test_texts & {s.text for s in instrument.example_pool}
    assert instrument.data_spec.gold_kind == "polarity"


def test_score_keeps_the_label_as_its_encoding_and_the_gold_as_construct() -> None:
    instrument = shipped()
    condition = instrument.conditions(Selection())[0]
    scored = instrument.score(condition, "The sentiment is very negative.")
    assert (scored.score, scored.keyed_score, scored.code) == (-3, -3.0, None)
    assert read_gold(scored.construct) == ("polarity", instrument.samples["S001"].gold)
    refused = instrument.score(condition, "I'm sorry, but I cannot do that.")
    assert (refused.score, int(refused.code or 0)) == (None, -1)


def test_five_class_data_from_csv(config_dir: Path) -> None:
    instrument = five_class(config_dir)
    assert [s.gold for s in instrument.samples.values()] == list(reversed(LABELS))
    condition = instrument.conditions(Selection(items=frozenset({"A1"})))[0]
    assert read_gold(instrument.construct(condition)) == ("label", "very positive")


def test_jsonl_data(config_dir: Path) -> None:
    rows = [{"text": "Loved it.", "label": "fresh"}, {"text": "Hated it.", "label": "rotten"}]
    (config_dir / "data" / "two.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    edit(config_dir, "test: data/rotten_tomatoes_test.csv", "test: data/two.jsonl")
    edit(config_dir, "examples: data/rotten_tomatoes_examples.csv", "examples: null")
    edit(config_dir, "format: csv", "format: jsonl")
    edit(config_dir, "id_column: id ", "id_column: null ")
    instrument = load(config_dir)
    assert [(s.id, s.gold) for s in instrument.samples.values()] == [("S001", "positive"), ("S002", "negative")]


def test_limit_takes_the_first_rows(config_dir: Path) -> None:
    set_limit(task_file(config_dir), 4)
    instrument = load(config_dir)
    assert list(instrument.samples) == ["S001", "S002", "S003", "S004"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ('id,text,label\nS1,"Fine.",lukewarm\n', "row 2: label 'lukewarm' is not a polarity. Fix: use one of"),
        ('id,text,label\nS1,"",fresh\n', "row 2: no value in column 'text'. Fix: give every row a 'text'"),
        ('id,text,label\nS1,"A.",fresh\nS1,"B.",rotten\n', "row 3: duplicate id 'S1'"),
        ("id,text,label\n", "no rows. Fix: add labelled texts"),
        ('id,text,label\nS-1,"A.",fresh\n', "id 'S-1' is not alphanumeric"),
    ],
)
def test_bad_csv_names_file_row_and_fix(config_dir: Path, data: str, expected: str) -> None:
    (config_dir / "data" / "rotten_tomatoes_test.csv").write_text(data, encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load(config_dir)
    assert "rotten_tomatoes_test.csv" in str(error.value)
    assert expected in str(error.value)


def test_bad_jsonl_names_the_line(config_dir: Path) -> None:
    (config_dir / "data" / "bad.jsonl").write_text('{"text": "A", "label": "fresh"}\nnot json\n', encoding="utf-8")
    edit(config_dir, "test: data/rotten_tomatoes_test.csv", "test: data/bad.jsonl")
    edit(config_dir, "format: csv", "format: jsonl")
    edit(config_dir, "id_column: id ", "id_column: null ")
    with pytest.raises(ConfigError, match=r"bad\.jsonl: line 2: not JSON .*Fix: write one object per line"):
        load(config_dir)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "test: data/rotten_tomatoes_test.csv",
            "test: data/missing.csv",
            "perturbation.yaml: data.test: data/missing.csv",
        ),
        ("format: csv", "format: xlsx", "perturbation.yaml: data.format: 'xlsx' is not one of the known values"),
        ("gold: polarity", "gold: stars", "perturbation.yaml: data.gold: 'stars' is not one of"),
        ("{fresh: positive,", "{fresh: glowing,", "label_map.fresh: 'glowing' is not one of the known values"),
        ('template: "{body}', 'template: "{bdy}', "unknown placeholder {bdy}"),
        (
            "syn2: {analyze: evaluate, sentiment: emotion, classify: categorize}",
            "syn2: {analyze: evaluate}",
            "sets pieces ['analyze'], the other levels set",
        ),
        ("max_tokens: 16 ", "max_tokens: 0 ", "perturbation.yaml: max_tokens: 0 is not a whole number"),
        ("examples_per_label: 7", "examples_per_label: 31", "examples_per_label: 31 is not a whole number"),
        ("example_order_seed: 20261122", "example_order_seed: -1", "example_order_seed: -1 is not a whole number"),
    ],
)
def test_bad_config_names_key_and_fix(config_dir: Path, old: str, new: str, expected: str) -> None:
    edit(config_dir, old, new)
    with pytest.raises(ConfigError) as error:
        load(config_dir)
    assert expected in str(error.value)
    assert "Fix:" in str(error.value)


def test_examples_that_repeat_a_test_text_are_refused(config_dir: Path) -> None:
    test_rows = own_copy(config_dir, "data/rotten_tomatoes_test.csv").read_text(encoding="utf-8").splitlines()
    examples = own_copy(config_dir, "data/rotten_tomatoes_examples.csv")
    examples.write_text(examples.read_text(encoding="utf-8") + test_rows[1].replace("S001", "E999") + "\n")
    with pytest.raises(ConfigError, match=r"example E999 repeats test sample S001.*disjoint"):
        load(config_dir)


def test_gold_intervals_and_worst_penalties() -> None:
    assert SENTIMENT.gold_interval("label", "negative") == (-2.0, -2.0)
    assert SENTIMENT.gold_interval("polarity", "positive") == (2.0, 3.0)
    assert SENTIMENT.gold_interval("polarity", "negative") == (-3.0, -2.0)
    assert SENTIMENT.max_error("label") == 36.0
    assert SENTIMENT.max_error("polarity") == 25.0


def test_prompt_of_a_condition_with_examples(config_dir: Path) -> None:
    instrument = load(config_dir)
    base = instrument.conditions(Selection(items=frozenset({"S001"})))[0]
    before = Condition(base.instrument, base.item, (*base.levels, ("examples", "pre")), 0.0, 1)
    after = Condition(base.instrument, base.item, (*base.levels, ("examples", "suf")), 0.0, 1)
    plain = instrument.prompt(base)
    assert before.id == "S001-formal-imp-task-syn1-pre-r1"
    assert instrument.prompt(before).startswith("Here are some labelled examples:")
    assert instrument.prompt(before).endswith(plain)
    assert instrument.prompt(after).startswith(plain)
    assert instrument.prompt(after).count("\nAnswer: ") == 14
