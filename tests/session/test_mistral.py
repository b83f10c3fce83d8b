"""The headline command against Mistral's La Plateforme API as its documentation describes it, the session run
in-process against the FAKE loopback server of tests/fake_mistral.py: an entry naming ``dialect: mistral`` is
asked there with its own key, recorded and replayed offline, priced by its usage; a reasoning model's content
blocks read as their text; a model Mistral does not serve stopped at once, naming the id."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from snap_bench.observations.export import read_jsonl
from snap_bench.observations.observation import Observation
from snap_bench.recordings.cassettes import leaked_secrets
from tests.conftest import SLICE, SLICE_SIZE, BenchProject
from tests.fake_mistral import FAKE_MISTRAL_KEY, FakeMistral, FakeMistralModel, MistralScript
from tests.session.asking_checks import outcomes

SMALL = FakeMistralModel("mistral-small-fake", reasoning=True)
# 3 paraphrases x 1 prompt x 1 temperature x 2 contexts x 1 run.
ONE_RUN = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
ONE_RUN_SIZE = 6


def models_yaml(api_url: str) -> str:
    return textwrap.dedent(f"""\
        models:
          small:
            id: {SMALL.id}
            dialect: mistral
            base_url: {api_url}
            api_key_env: MISTRAL_API_KEY
            price: {{input_per_million: 0.1, output_per_million: 0.3}}
          small-thinking:
            id: {SMALL.id}
            dialect: mistral
            base_url: {api_url}
            api_key_env: MISTRAL_API_KEY
            reasoning: high
          retired-id:
            id: mistral-tiny-fake
            dialect: mistral
            base_url: {api_url}
            api_key_env: MISTRAL_API_KEY
        """)


@pytest.fixture
def mistral() -> Iterator[FakeMistral]:
    with FakeMistral(MistralScript(models={SMALL.id: SMALL})) as server:
        yield server


@pytest.fixture
def project(tmp_path: Path, mistral: FakeMistral, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("MISTRAL_API_KEY", FAKE_MISTRAL_KEY)
    root = tmp_path / "project"
    root.mkdir()
    bench = BenchProject(root, mistral.api_url)
    (bench.root / "config" / "models.yaml").write_text(models_yaml(mistral.api_url), encoding="utf-8")
    return bench


def observations(bench: BenchProject) -> list[Observation]:
    return read_jsonl(bench.out / "observations.jsonl")


def test_mistral_answers_are_recorded_replayed_and_priced_by_their_usage(
    project: BenchProject, mistral: FakeMistral, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert outcomes(project.session("--model=small", *SLICE)) == {"passed": SLICE_SIZE}
    chats = [r for r in mistral.received if r.path == "/v1/chat/completions"]
    assert [r.status for r in chats] == [200] * SLICE_SIZE  # nothing its validator refuses was sent
    assert all(body["max_tokens"] and "reasoning_effort" not in body for body in mistral.bodies())
    asked = observations(project)
    assert all(o.is_scored and o.raw_answer == "4" and o.served_model == SMALL.id for o in asked)
    document = json.loads((project.out / "session.json").read_text(encoding="utf-8"))
    assert document["spend"]["small"]["cost_usd"] == pytest.approx(mistral.script.billed_usd, rel=1e-9)
    assert leaked_secrets(project.cassettes) == []
    # each recording names the provider it was recorded through
    recorded = list(project.cassettes.glob("small/*/*.json"))
    assert recorded
    assert {json.loads(path.read_text())["provider"] for path in recorded} == {"mistral"}
    assert FAKE_MISTRAL_KEY not in "".join(p.read_text() for p in project.cassettes.rglob("*.json"))
    # offline, the same slice is replayed from the recordings: nothing more is sent
    monkeypatch.delenv("MISTRAL_API_KEY")
    sent = len(mistral.received)
    assert outcomes(project.session("--model=small", *SLICE, "--snap-record-mode=none")) == {"passed": SLICE_SIZE}
    assert len(mistral.received) == sent
    assert [o.raw_answer for o in observations(project)] == [o.raw_answer for o in asked]


def test_a_reasoning_answers_text_blocks_are_its_answer(project: BenchProject, mistral: FakeMistral) -> None:
    assert outcomes(project.session("--model=small-thinking", *ONE_RUN)) == {"passed": ONE_RUN_SIZE}
    assert all(body["reasoning_effort"] == "high" for body in mistral.bodies())
    assert all(o.is_scored and o.raw_answer == "4" for o in observations(project))


def test_a_model_mistral_does_not_serve_is_stopped_naming_its_id(project: BenchProject, mistral: FakeMistral) -> None:
    result = project.session("--model=retired-id", *ONE_RUN)
    assert result.exit_status != 0
    asked = observations(project)
    assert asked
    assert not any(o.is_scored for o in asked)
    assert all("mistral-tiny-fake" in (o.reason or "") for o in asked)
    assert len([r for r in mistral.received if r.path == "/v1/chat/completions"]) <= 1
