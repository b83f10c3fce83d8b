"""Condition expansion from the shipped config: counts, ids, rendering and keyed scoring."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from snap_bench.design.config import ConfigError, ConfigFiles
from snap_bench.design.models import load_models
from snap_bench.instruments import Selection
from snap_bench.instruments.profile.instrument import ProfileInstrument
from tests.conftest import SHIPPED, own_copy

CONFIG = SHIPPED


@pytest.fixture(scope="module")
def snap() -> ProfileInstrument:
    return ProfileInstrument(CONFIG)


def test_full_design_counts(snap: ProfileInstrument) -> None:
    conditions = snap.conditions(Selection())
    banks = Counter(snap.items[c.item].bank for c in conditions)
    # seven items per bank: one per construct, and a reverse-keyed partner for two constructs
    assert banks == {"moral": 7 * 3 * 4 * 3 * 2 * 3, "personality": 7 * 3 * 4 * 3 * 1 * 3}
    assert len({c.id for c in conditions}) == len(conditions) == 2268


def test_two_constructs_of_each_bank_have_a_statement_and_its_reverse(snap: ProfileInstrument) -> None:
    directions: dict[tuple[str, str], set[bool]] = {}
    for item in snap.items.values():
        directions.setdefault((item.bank, item.construct), set()).add(item.reverse_scored)
    assert len(directions) == 10
    paired = sorted(construct for construct, keyed in directions.items() if keyed == {True, False})
    assert paired == [
        ("moral", "care"),
        ("moral", "fairness"),
        ("personality", "conscientiousness"),
        ("personality", "openness"),
    ]


def test_ids_follow_the_design_order(snap: ProfileInstrument) -> None:
    ids = {c.id for c in snap.conditions(Selection())}
    assert "M01-P2-NEU-t0.5-C1-r3" in ids
    assert "P05-P3-ABS-t1-C0-r1" in ids
    assert not any(i.startswith("P0") and "-C1-" in i for i in ids)  # context C1 is for moral items only


def test_selection_restricts_each_factor(snap: ProfileInstrument) -> None:
    selection = Selection(
        items=frozenset({"care", "P03"}),
        levels={"system_prompt": frozenset({"NEU"}), "temperature": frozenset({"t0"})},
        runs=2,
    )
    conditions = snap.conditions(selection)
    # "care" is a construct: both its items (M01 and its reverse partner M06)
    assert {c.item for c in conditions} == {"M01", "M06", "P03"}
    assert len(conditions) == 2 * 3 * 2 * 2 + 3 * 1 * 2


def test_messages_render_system_prompt_context_and_instruction(snap: ProfileInstrument) -> None:
    by_id = {c.id: c for c in snap.conditions(Selection())}
    messages = snap.messages(by_id["M02-P1-DIR-t0-C1-r1"])
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].startswith("Read the statement carefully")
    user = messages[1]["content"]
    assert user.startswith("Consider the following situation")
    assert "Everyone deserves to be judged by the same rules" in user
    assert user.endswith("Respond with ONLY a number from 1-5.")
    assert "Consider the following" not in snap.messages(by_id["M02-P1-DIR-t0-C0-r1"])[1]["content"]


def test_reverse_keyed_items_are_reversed_and_raw_score_kept(snap: ProfileInstrument) -> None:
    by_id = {c.id: c for c in snap.conditions(Selection())}
    reversed_item = snap.score(by_id["P02-P1-NEU-t0-C0-r1"], "4")
    assert (reversed_item.score, reversed_item.keyed_score) == (4, 2.0)
    plain_item = snap.score(by_id["P01-P1-NEU-t0-C0-r1"], "4")
    assert (plain_item.score, plain_item.keyed_score) == (4, 4.0)


def test_version_changes_with_the_item_bank(tmp_path: Path) -> None:
    project = ConfigFiles(tmp_path / "config")
    before = ProfileInstrument(project).version
    assert before == ProfileInstrument(CONFIG).version
    bank = own_copy(project.folder, "profile.yaml")
    bank.write_text(bank.read_text().replace("whoever they are", "whoever they may be"))
    assert ProfileInstrument(project).version != before


def test_shipped_models_resolve_and_unknown_names_are_listed() -> None:
    registry = load_models(CONFIG)
    assert registry.resolve(["gpt-5.2"])[0].provider_id == "openai/gpt-5.2"
    assert set(registry.pilot) <= set(registry.models)
    with pytest.raises(ConfigError, match=r"unknown model 'gpt-7'.*use one of: .*claude-haiku-4.5"):
        registry.resolve(["gpt-7"])


def test_a_retired_seed_model_is_refused_naming_its_successor() -> None:
    registry = load_models(CONFIG)
    with pytest.raises(ConfigError, match=r"claude-3-opus .*retired.*2026-01-05.*--model=claude-opus-4.6"):
        registry.resolve(["claude-3-opus"])
    assert all(model.retired is None for name in registry.pilot for model in [registry.models[name]])
