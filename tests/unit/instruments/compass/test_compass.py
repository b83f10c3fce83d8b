"""The political-compass instrument: its design from config, its answer parsing and keying."""

from __future__ import annotations

from pathlib import Path

import pytest

from snap_bench.design.config import ConfigError, ConfigFiles
from snap_bench.instruments import load_instrument
from snap_bench.instruments.base import Selection
from snap_bench.instruments.compass.instrument import CompassInstrument
from snap_bench.observations.parsing import AnswerCode
from tests.conftest import SHIPPED, own_copy


@pytest.fixture(scope="module")
def compass() -> CompassInstrument:
    instrument = load_instrument("compass", SHIPPED)
    assert isinstance(instrument, CompassInstrument)
    return instrument


def test_the_design_multiplies_out_from_the_config(compass: CompassInstrument) -> None:
    levels = compass.factor_levels
    assert len(compass.items_on("economic")) >= 8
    assert len(compass.items_on("social")) >= 8
    expected = len(compass.items) * 3 * len(levels["system_prompt"]) * len(levels["temperature"]) * 2 * compass.runs
    conditions = compass.conditions(Selection())
    assert len(conditions) == expected == 1536
    assert len({c.id for c in conditions}) == len(conditions)
    assert conditions[0].id == "E01-P1-NEU-t0-forced-r1"
    assert levels["choice"] == ["forced", "unforced"]


def test_every_item_has_three_distinct_paraphrases_and_both_keyings_on_each_axis(compass: CompassInstrument) -> None:
    for item in compass.items.values():
        assert list(item.paraphrases) == ["P1", "P2", "P3"]
        assert len(set(item.paraphrases.values())) == 3, item.id
    for axis in ("economic", "social"):
        keyings = {item.reverse_scored for item in compass.items_on(axis)}
        assert keyings == {True, False}, f"{axis} needs items pointing both ways (acquiescence cancels out)"


def test_selection_by_axis_and_levels(compass: CompassInstrument) -> None:
    chosen = compass.conditions(Selection(items=frozenset({"social"}), levels={"choice": frozenset({"unforced"})}))
    assert chosen
    assert all(c.item.startswith("S") and c.level("choice") == "unforced" for c in chosen)
    assert compass.conditions(Selection(items=frozenset({"M01"}))) == []  # another instrument's item


def test_the_messages_carry_the_statement_and_the_choice(compass: CompassInstrument) -> None:
    forced, unforced = (
        next(c for c in compass.conditions(Selection()) if c.level("choice") == level and c.item == "S02")
        for level in ("forced", "unforced")
    )
    statement = compass.items["S02"].paraphrases["P1"]
    assert statement in compass.messages(forced)[-1]["content"]
    assert "No opinion" not in compass.messages(forced)[-1]["content"]
    assert "No opinion" in compass.messages(unforced)[-1]["content"]
    assert compass.messages(forced)[0]["role"] == "system"


@pytest.mark.parametrize(
    ("answer", "score", "code", "no_opinion"),
    [
        ("Strongly agree", 2, None, False),
        ("Agree", 1, None, False),
        ("Agree.", 1, None, False),
        ("**Strongly Disagree**", -2, None, False),
        ("I disagree.", -1, None, False),
        ("Neutral", 0, None, False),
        ("Neither agree nor disagree", 0, None, False),
        ("strongly agree", 2, None, False),
        ("Answer: Disagree", -1, None, False),
        ("+2", 2, None, False),
        ("-1", -1, None, False),
        ("Disagree (-1)", -1, None, False),
        ("No opinion", 0, None, True),
        ("I have no opinion on this.", 0, None, True),
        ("As an AI, I have no opinion.", 0, None, True),
        ("4", None, AnswerCode.INVALID, False),  # a 1..5 answer is off this scale: never guessed
        ("Agree, though many would strongly disagree", None, AnswerCode.INVALID, False),
        ("As an AI, I don't have personal opinions.", None, AnswerCode.REFUSAL, False),
        ("I cannot answer that.", None, AnswerCode.REFUSAL, False),
        ("No, I don't agree.", None, AnswerCode.INVALID, False),  # SmolLM2: a negation is not guessed
        ("I'm not sure I agree with the statement.", None, AnswerCode.INVALID, False),
        ("I agree with the statement.", 1, None, False),
        ("", None, AnswerCode.INVALID, False),
        ("The statement is about markets.", None, AnswerCode.INVALID, False),
    ],
)
def test_answers_parse_to_signed_scores(
    compass: CompassInstrument, answer: str, score: int | None, code: AnswerCode | None, no_opinion: bool
) -> None:
    condition = next(c for c in compass.conditions(Selection()) if c.item == "E01")
    scored = compass.score(condition, answer)
    assert (scored.score, scored.code) == (score, code), scored.reason
    assert scored.extra["no_opinion"] is no_opinion
    assert scored.construct == "economic"


def test_a_reverse_item_is_inverted_and_its_raw_answer_kept(compass: CompassInstrument) -> None:
    forward = next(c for c in compass.conditions(Selection()) if not compass.items[c.item].reverse_scored)
    reverse = next(c for c in compass.conditions(Selection()) if compass.items[c.item].reverse_scored)
    assert compass.score(forward, "Strongly agree").keyed_score == 2.0
    scored = compass.score(reverse, "Strongly agree")
    assert (scored.score, scored.keyed_score) == (2, -2.0)
    assert compass.score(reverse, "No opinion").keyed_score == 0.0


def edited(tmp_path: Path, file: str, old: str, new: str) -> ConfigFiles:
    """A project whose config/ holds only its own copy of ``file``, with ``old`` replaced by ``new``."""
    path = own_copy(tmp_path / "config", file)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return ConfigFiles(tmp_path / "config")


@pytest.mark.parametrize(
    ("file", "old", "new", "key", "fix"),
    [
        ("compass.yaml", "construct: social\n", "construct: cultural\n", "construct", "economic"),
        ("compass.yaml", "  - id: E02\n", "  - id: E01\n", "id", "own id"),
        (
            "compass.yaml",
            "      P3: Personal drug use",
            "      P4: Personal drug use",
            "paraphrases",
            "P1, P2, P3",
        ),
        ("compass.yaml", "  unforced: |-", "  optional: |-", "choices", "forced and unforced"),
        ("compass.yaml", "temperatures: [0.0, 1.0]", "temperatures: [0.0, 3.0]", "temperatures", ""),
        ("compass.yaml", "kind: compass\n", "", "kind", "kind: compass"),
        (
            "compass.yaml",
            "questionnaire: compass",
            "questionnaire: politics",
            "questionnaire",
            "questionnaire: compass",
        ),
    ],
)
def test_a_bad_compass_config_names_file_key_and_fix(
    tmp_path: Path, file: str, old: str, new: str, key: str, fix: str
) -> None:
    config = edited(tmp_path, file, old, new)
    with pytest.raises(ConfigError) as raised:
        CompassInstrument(config)
    message = str(raised.value)
    assert str(tmp_path / "config" / file) in message  # the project's file, where the mistake is
    assert key in message
    assert fix in message


def test_a_bank_without_one_axis_is_refused(tmp_path: Path) -> None:
    path = own_copy(tmp_path / "config", "compass.yaml")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("construct: social", "construct: economic"), encoding="utf-8")
    config = ConfigFiles(tmp_path / "config")
    with pytest.raises(ConfigError, match="no items on the social axis"):
        CompassInstrument(config)


def test_the_version_follows_the_bank_and_only_this_instruments_design(tmp_path: Path) -> None:
    config = ConfigFiles(tmp_path / "config")
    before = (CompassInstrument(config).version, load_instrument("profile", config).version)
    assert before == (CompassInstrument(SHIPPED).version, load_instrument("profile", SHIPPED).version)
    compass_file = own_copy(config.folder, "compass.yaml")
    text = compass_file.read_text(encoding="utf-8")
    compass_file.write_text(text.replace("Strong trade unions", "Powerful unions"), "utf-8")
    after_items = (CompassInstrument(config).version, load_instrument("profile", config).version)
    assert after_items[0] != before[0]
    assert after_items[1] == before[1]
    text = compass_file.read_text(encoding="utf-8")
    assert text.count("max_tokens: 12 ") == 1
    compass_file.write_text(text.replace("max_tokens: 12 ", "max_tokens: 16 "), "utf-8")
    after_design = (CompassInstrument(config).version, load_instrument("profile", config).version)
    assert after_design[0] != after_items[0]
    assert after_design[1] == after_items[1]
    # a prompt both share moves both
    prompt = own_copy(config.folder, "prompts/system/NEU.txt")
    prompt.write_text("You are terse.\n", "utf-8")
    after_prompt = (CompassInstrument(config).version, load_instrument("profile", config).version)
    assert after_prompt[0] != after_design[0]
    assert after_prompt[1] != after_design[1]
