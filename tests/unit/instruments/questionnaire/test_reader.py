"""Reading a questionnaire written in YAML: the documented defaults, and every mistake named by file, key and fix."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from snap_bench.design.config import ConfigError, ConfigFiles
from snap_bench.instruments import _QUESTIONNAIRE_KINDS, questionnaire_kind, register_questionnaire_kind
from snap_bench.instruments.base import Selection
from snap_bench.instruments.questionnaire.reader import default_instruction, read_questionnaire

CONFIG = ConfigFiles.shipped()
MINIMAL = """\
questionnaire: calm
scale: {points: 5, labels: [Strongly disagree, Disagree, Neutral, Agree, Strongly agree]}
items:
  - {id: C1, construct: composure, text: "I stay calm when plans fall apart."}
  - {id: C2, construct: composure, text: "Small setbacks make me lose my temper.", reverse: true}
"""


def write(tmp_path: Path, text: str, name: str = "calm.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_minimal_file_gets_the_documented_defaults(tmp_path: Path) -> None:
    design = read_questionnaire(write(tmp_path, MINIMAL), CONFIG)
    assert list(design.system_prompts) == ["NEU", "DIR", "PER", "ABS"]
    assert design.system_prompts["NEU"] == (CONFIG.path("prompts/system/NEU.txt")).read_text(encoding="utf-8").strip()
    assert design.temperatures == [0.0, 1.0]
    assert design.runs == 3
    assert design.contexts == {"C0": None}
    assert design.items["C2"].reverse_scored
    assert not design.items["C1"].reverse_scored
    assert design.instruction == default_instruction(
        ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"]
    )
    instrument = questionnaire_kind(tmp_path / "calm.yaml", CONFIG)(CONFIG)
    assert instrument.name == "calm"
    assert len(instrument.conditions(Selection())) == 2 * 4 * 2 * 3
    condition = instrument.conditions(Selection())[0]
    question = instrument.messages(condition)[-1]["content"]
    assert "1 = Strongly disagree" in question
    assert "5 = Strongly agree" in question
    assert "I stay calm when plans fall apart." in question
    # the reverse-keyed item's answer is keyed the other way on the questionnaire's own scale
    reverse = next(c for c in instrument.conditions(Selection()) if c.item == "C2")
    assert instrument.score(reverse, "Agree").keyed_score == 2.0
    assert instrument.score(reverse, "5").keyed_score == 1.0


def test_a_label_with_braces_is_text_not_a_placeholder(tmp_path: Path) -> None:
    text = MINIMAL.replace("Neutral", "'{neutral}'")
    design = read_questionnaire(write(tmp_path, text), CONFIG)
    assert "3 = {neutral}" in design.instruction.format(statement="s", points=5)


@pytest.mark.parametrize(
    ("change", "key", "fix"),
    [
        (("items:", "itmes:"), "itmes", "write `items` (the closest known key), or use one of"),
        (("points: 5", "points: 6"), "scale.labels", "one label per point"),
        (
            ('text: "I stay calm when plans fall apart."', "txt: x"),
            "items[0].txt",
            "write `text` (the closest known key), or use one of",
        ),
        (
            ('text: "I stay calm when plans fall apart."', "text: a, paraphrases: {P1: b}"),
            "items[0]",
            "text, or its paraphrases",
        ),
        (("id: C2", "id: C1"), "items[1].id", "its own id"),
        (("questionnaire: calm", "questionnaire: my calm"), "questionnaire", "letters, digits"),
        (("scale: {points: 5, ", "scale: {"), "scale.points", "add `points:`"),
    ],
)
def test_a_mistake_names_the_file_the_key_and_the_fix(
    tmp_path: Path, change: tuple[str, str], key: str, fix: str
) -> None:
    old, new = change
    assert old in MINIMAL
    path = write(tmp_path, MINIMAL.replace(old, new, 1))
    with pytest.raises(ConfigError) as raised:
        read_questionnaire(path, CONFIG)
    assert raised.value.path == str(path)
    assert raised.value.key == key
    assert fix in raised.value.fix


def test_an_instruction_needs_the_statement(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + "instruction: Rate it from 1 to {points}.\n")
    with pytest.raises(ConfigError, match=r"calm.yaml: instruction: no \{statement\} placeholder"):
        read_questionnaire(path, CONFIG)


def test_norms_must_cover_every_construct(tmp_path: Path) -> None:
    write(
        tmp_path,
        "source: {respondents: 10}\nitems: {}\ntraits:\n  tidiness: {mean: 3, sd: 1, alpha: 0.7, n: 10}\n",
        "norms.yaml",
    )
    path = write(tmp_path, MINIMAL + "norms: norms.yaml\n")
    with pytest.raises(ConfigError, match=r"calm\.yaml: norms: no norms for composure"):
        read_questionnaire(path, CONFIG)


@pytest.mark.parametrize("alpha", ["", ", alpha: null"])
def test_norms_of_mean_sd_and_n_alone_are_read(tmp_path: Path, alpha: str) -> None:
    """What published instruments report: no item figures, no alpha (absent or null)."""
    write(
        tmp_path,
        f"source: {{respondents: 10, name: a manual}}\ntraits:\n  composure: {{mean: 3.5, sd: 0.6, n: 10{alpha}}}\n",
        "norms.yaml",
    )
    norms = read_questionnaire(write(tmp_path, MINIMAL + "norms: norms.yaml\n"), CONFIG).norms
    assert norms is not None
    assert (norms.traits["composure"].mean, norms.traits["composure"].alpha, norms.items) == (3.5, None, {})


def test_own_thresholds_lie_over_the_defaults_for_a_questionnaire(tmp_path: Path) -> None:
    path = write(
        tmp_path, MINIMAL + "thresholds:\n  metrics:\n    unscored_rate: {better: lower, minimum: 0.2, target: 0.2}\n"
    )
    section = questionnaire_kind(path, CONFIG)(CONFIG).thresholds_section()
    assert section is not None
    assert section.path == path
    metrics = section.get("metrics").mapping()
    assert metrics["unscored_rate"]["minimum"] == 0.2
    assert metrics["dependability"]["target"] == 0.70  # kept from the defaults


def test_one_text_per_item_drops_the_inter_paraphrase_margin(tmp_path: Path) -> None:
    """A single-paraphrase questionnaire reports no inter-paraphrase r: a default margin for it (the packaged
    defaults gate no such figure, a project's `config/thresholds.yaml` may) would leave every gate of it
    incomplete; one with paraphrases keeps it."""
    shipped = yaml.safe_load((CONFIG.packaged / "thresholds.yaml").read_text(encoding="utf-8"))
    shipped["questionnaire"]["non_inferiority"]["inter_paraphrase_r"] = 0.3
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "thresholds.yaml").write_text(yaml.safe_dump(shipped), encoding="utf-8")
    config = dataclasses.replace(CONFIG, folder=tmp_path / "config")
    single = questionnaire_kind(write(tmp_path, MINIMAL), config)(config).thresholds_section()
    assert single is not None
    assert "inter_paraphrase_r" not in single.get("non_inferiority").mapping()
    assert "dependability" in single.get("non_inferiority").mapping()
    two = MINIMAL.replace(
        'text: "I stay calm when plans fall apart."', "paraphrases: {P1: I stay calm., P2: I keep calm.}"
    ).replace('text: "Small setbacks make me lose my temper."', "paraphrases: {P1: I snap., P2: I lose it.}")
    paraphrased = questionnaire_kind(write(tmp_path, two, "calm2.yaml"), config)(config).thresholds_section()
    assert paraphrased is not None
    assert "inter_paraphrase_r" in paraphrased.get("non_inferiority").mapping()


MY_COMPASS = """\
questionnaire: townhall
kind: compass
scale:
  points: 5
  low: -2
  labels: [Strongly disagree, Disagree, [Neutral, Neither agree nor disagree], Agree, Strongly agree]
choices:
  forced: "Agree or disagree? {statement} Answer with one of the five options."
items:
  - {id: E1, construct: economic, text: "Taxes on wealth should rise."}
  - {id: E2, construct: economic, text: "Markets allocate better than planners.", reverse: true}
  - {id: S1, construct: social, text: "Police powers should grow."}
"""


def test_a_teams_own_compass_is_a_compass_built_by_the_registrys_factory(tmp_path: Path) -> None:
    """kind: compass makes the compass's instrument of the team's file: signed scale, the choice factor, the
    placement's "No opinion" scoring; built from the design read once, without a class made for the file."""
    from snap_bench.instruments import CompassInstrument

    kind = questionnaire_kind(write(tmp_path, MY_COMPASS, "townhall.yaml"), CONFIG)
    assert (kind.name, kind.hooks) == ("townhall", CompassInstrument)
    instrument = kind(CONFIG)
    assert type(instrument) is CompassInstrument
    assert instrument.name == "townhall"
    conditions = instrument.conditions(Selection())
    assert len(conditions) == 3 * 4 * 2 * 3  # items x system prompts x temperatures x runs, one choice
    assert {c.level("choice") for c in conditions} == {"forced"}
    reverse = next(c for c in conditions if c.item == "E2")
    assert instrument.messages(reverse)[-1]["content"] == (
        "Agree or disagree? Markets allocate better than planners. Answer with one of the five options."
    )
    assert instrument.score(reverse, "Neither agree nor disagree").keyed_score == 0.0
    assert instrument.score(reverse, "Strongly agree").keyed_score == -2.0
    assert instrument.score(reverse, "No opinion").extra["no_opinion"] is True
    # a kind no registry entry makes, and a Likert questionnaire given choices, are named
    with pytest.raises(
        ConfigError, match=r"townhall.yaml: kind: unknown kind 'poll'. Fix: use one of: likert, compass"
    ):
        questionnaire_kind(write(tmp_path, MY_COMPASS.replace("kind: compass", "kind: poll"), "townhall.yaml"), CONFIG)
    with pytest.raises(ConfigError, match=r"choices: a questionnaire of kind likert asks through `instruction`"):
        questionnaire_kind(write(tmp_path, MY_COMPASS.replace("kind: compass\n", ""), "townhall.yaml"), CONFIG)(CONFIG)


def test_a_team_registers_a_questionnaire_kind_of_its_own(tmp_path: Path) -> None:
    from snap_bench.instruments import CompassInstrument

    class Poll(CompassInstrument):
        """A team's own kind: the compass's scoring under another name."""

    register_questionnaire_kind("poll", Poll)
    try:
        kind = questionnaire_kind(write(tmp_path, MY_COMPASS.replace("kind: compass", "kind: poll"), "t.yaml"), CONFIG)
        assert (kind.name, kind.hooks) == ("townhall", Poll)
        assert type(kind(CONFIG)) is Poll
    finally:
        _QUESTIONNAIRE_KINDS.pop("poll")
    with pytest.raises(TypeError, match="identifier-like"):
        register_questionnaire_kind("a poll", Poll)
