"""The headline command against Anthropic's Messages API and Gemini's generateContent as their documentation
describes them, the session run in-process against the FAKE loopback servers of tests/fake_anthropic.py and
tests/fake_gemini.py: recorded and replayed in each dialect, the provider's refusals and blocks as answer codes
with their reasons, overloads retried, thinking models asked at the provider's default temperature, a refused
temperature stopping the model at its first request, and the spend as tokens x price."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from snap_bench.observations.export import read_jsonl
from snap_bench.observations.observation import Observation
from snap_bench.recordings.cassettes import leaked_secrets
from snap_bench.session.run import SessionResult
from tests.conftest import SLICE, SLICE_SIZE, BenchProject
from tests.fake_anthropic import FAKE_ANTHROPIC_KEY, AnthropicScript, FakeAnthropic, FakeClaude
from tests.fake_gemini import FAKE_GEMINI_KEY, FakeGemini, FakeGeminiModel, GeminiScript
from tests.session.asking_checks import outcomes

CLAUDE = FakeClaude("claude-fake-4")
CLAUDE_NO_TEMPERATURE = FakeClaude("claude-fake-5", takes_temperature=False)
FLASH = FakeGeminiModel("gemini-2.5-flash")
# M01's second paraphrase ("Hurting one individual ...") is the only one naming this word: 1 paraphrase x 1
# prompt x 1 temperature x 2 contexts x 3 runs of the slice.
FLAGGED_WORD, FLAGGED = "individual", 6
# Three temperatures collapse to the provider's default: 3 paraphrases x 1 prompt x 2 contexts x 2 runs.
AT_DEFAULT = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-runs=2")
AT_DEFAULT_SIZE = 12


def models_yaml(anthropic_url: str, gemini_url: str) -> str:
    """Each entry at its fake with its documented key variable; the prices are the fakes' (per million)."""
    return textwrap.dedent(f"""\
        models:
          claude:
            id: {CLAUDE.id}
            dialect: anthropic
            base_url: {anthropic_url}
            api_key_env: ANTHROPIC_API_KEY
            price: {{input_per_million: 3.0, output_per_million: 15.0}}
          claude-thinking:
            id: {CLAUDE.id}
            dialect: anthropic
            base_url: {anthropic_url}
            api_key_env: ANTHROPIC_API_KEY
            reasoning: low
            max_tokens: 64
            price: {{input_per_million: 3.0, output_per_million: 15.0}}
          claude-new:
            id: {CLAUDE_NO_TEMPERATURE.id}
            dialect: anthropic
            base_url: {anthropic_url}
            api_key_env: ANTHROPIC_API_KEY
          flash:
            id: {FLASH.id}
            dialect: gemini
            base_url: {gemini_url}
            api_key_env: GEMINI_API_KEY
            reasoning: low
            max_tokens: 64
            price: {{input_per_million: 1.25, output_per_million: 10.0}}
        """)


@pytest.fixture
def anthropic() -> Iterator[FakeAnthropic]:
    script = AnthropicScript(models={model.id: model for model in (CLAUDE, CLAUDE_NO_TEMPERATURE)})
    with FakeAnthropic(script) as server:
        yield server


@pytest.fixture
def gemini() -> Iterator[FakeGemini]:
    with FakeGemini(GeminiScript(models={FLASH.id: FLASH})) as server:
        yield server


@pytest.fixture
def project(
    tmp_path: Path, anthropic: FakeAnthropic, gemini: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> BenchProject:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", FAKE_GEMINI_KEY)
    root = tmp_path / "project"
    root.mkdir()
    bench = BenchProject(root, anthropic.base_url)
    (bench.root / "config" / "models.yaml").write_text(
        models_yaml(anthropic.base_url, gemini.base_url), encoding="utf-8"
    )
    return bench


def observations(bench: BenchProject) -> list[Observation]:
    return read_jsonl(bench.out / "observations.jsonl")


def said(result: SessionResult, pattern: str) -> bool:
    """Whether one of the lines the terminal's summary shows matches ``pattern``."""
    return any(fnmatch(line, pattern) for line in result.summary)


def spend(bench: BenchProject, model: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((bench.out / "session.json").read_text(encoding="utf-8"))
    return dict(document["spend"][model])


def test_anthropic_answers_are_recorded_replayed_and_priced_by_their_usage(
    project: BenchProject, anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert outcomes(project.session("--model=claude", *SLICE)) == {"passed": SLICE_SIZE}
    assert [r.status for r in anthropic.received] == [200] * SLICE_SIZE  # nothing the API would refuse was sent
    sent = anthropic.messages_bodies(CLAUDE.id)
    assert all(body["temperature"] == 0.0 and "thinking" not in body and body["system"] for body in sent)
    assert all(r.headers["anthropic-version"] == "2023-06-01" for r in anthropic.received)
    asked = observations(project)
    assert all(o.is_scored and o.raw_answer == "4" and o.served_model == CLAUDE.id for o in asked)
    assert spend(project, "claude")["cost_usd"] == pytest.approx(anthropic.script.billed_usd, rel=1e-9)
    assert leaked_secrets(project.cassettes) == []
    assert FAKE_ANTHROPIC_KEY not in "".join(p.read_text() for p in project.cassettes.rglob("*.json"))
    # offline, the same slice is replayed from the recordings: nothing more is sent
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    replay = project.session("--model=claude", *SLICE, "--snap-record-mode=none")
    assert outcomes(replay) == {"passed": SLICE_SIZE}
    assert len(anthropic.received) == SLICE_SIZE
    assert [o.raw_answer for o in observations(project)] == [o.raw_answer for o in asked]


def test_an_anthropic_refusal_is_an_answer_code_with_its_reason_and_never_scored(
    project: BenchProject, anthropic: FakeAnthropic
) -> None:
    anthropic.script.refused_words = frozenset({FLAGGED_WORD})
    result = project.session("--model=claude", *SLICE)
    assert result.exit_status == 0
    asked = observations(project)
    refused = [o for o in asked if o.code == -5]
    assert len(refused) == FLAGGED
    assert all(o.factors["paraphrase"] == "P2" and o.score is None and "refusal" in o.reason for o in refused)
    assert sum(o.is_scored for o in asked) == SLICE_SIZE - FLAGGED
    assert len(anthropic.received) == SLICE_SIZE  # a refusal is an answer: not asked again
    # replayed, the refusal is the same code: the recording holds it
    replay = project.session("--model=claude", *SLICE, "--snap-record-mode=none")
    assert replay.exit_status == 0
    assert sum(o.code == -5 for o in observations(project)) == FLAGGED


def test_an_overloaded_anthropic_is_asked_again_and_answers(project: BenchProject, anthropic: FakeAnthropic) -> None:
    anthropic.script.overloaded_next = 2  # 529 overloaded_error twice
    assert outcomes(project.session("--model=claude", *SLICE)) == {"passed": SLICE_SIZE}
    assert [r.status for r in anthropic.received].count(529) == 2
    assert len(anthropic.received) == SLICE_SIZE + 2
    asked = observations(project)
    assert all(o.is_scored for o in asked)
    assert max(o.attempts for o in asked) >= 2


def test_a_thinking_model_is_asked_at_the_providers_default_with_a_budget_under_max_tokens(
    project: BenchProject, anthropic: FakeAnthropic
) -> None:
    result = project.session("--model=claude-thinking", *AT_DEFAULT)
    assert outcomes(result) == {"passed": AT_DEFAULT_SIZE}
    assert said(result, "*claude-thinking: asked at the provider's default temperature*thinking*")
    sent = anthropic.messages_bodies(CLAUDE.id)
    assert len(sent) == AT_DEFAULT_SIZE
    assert all("temperature" not in body for body in sent)
    # the thinking budget of effort low, and the answer's own 64 tokens on top of it
    assert all(body["thinking"] == {"type": "enabled", "budget_tokens": 2048} for body in sent)
    assert all(body["max_tokens"] == 2048 + 64 for body in sent)
    asked = observations(project)
    assert {o.factors["temperature"] for o in asked} == {"tdefault"}
    # the thinking block is not the answer; its tokens are billed as output and priced so
    assert all(o.raw_answer == "4" for o in asked)
    assert spend(project, "claude-thinking")["cost_usd"] == pytest.approx(anthropic.script.billed_usd, rel=1e-9)


def test_a_model_that_refuses_temperatures_is_stopped_at_its_first_request_naming_the_fix(
    project: BenchProject, anthropic: FakeAnthropic
) -> None:
    result = project.session("--model=claude-new", *SLICE)
    assert result.exit_status == 6  # could not measure
    assert len(anthropic.received) == 1
    assert anthropic.received[0].status == 400
    assert said(result, "*claude-new stopped*temperature* is deprecated*takes_temperature: false*")


def test_a_spend_limit_is_not_asked_again(project: BenchProject, anthropic: FakeAnthropic) -> None:
    anthropic.script.spend_limit = True
    result = project.session("--model=claude", *SLICE)
    assert result.exit_status == 6
    assert len(anthropic.received) == 1  # no retry, no second condition
    assert said(result, "*claude stopped*ANTHROPIC_API_KEY*spend limit*")


@pytest.mark.parametrize(
    "asking", [pytest.param((), id="one-by-one"), pytest.param(("--snap-concurrency=4",), id="ahead")]
)
def test_gemini_answers_are_recorded_replayed_and_priced_with_their_thoughts(
    project: BenchProject, gemini: FakeGemini, monkeypatch: pytest.MonkeyPatch, asking: tuple[str, ...]
) -> None:
    assert outcomes(project.session("--model=flash", *SLICE, *asking)) == {"passed": SLICE_SIZE}
    assert [r.status for r in gemini.received] == [200] * SLICE_SIZE
    sent = gemini.bodies(FLASH.id)
    assert all(body["generationConfig"]["temperature"] == 0.0 for body in sent)
    assert all(body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 2048} for body in sent)
    assert all(body["systemInstruction"]["parts"][0]["text"] for body in sent)
    asked = observations(project)
    assert all(o.is_scored and o.reasoning_tokens == FLASH.thinking_tokens for o in asked)
    assert all(o.completion_tokens == 1 + FLASH.thinking_tokens for o in asked)
    assert spend(project, "flash")["cost_usd"] == pytest.approx(gemini.script.billed_usd, rel=1e-9)
    assert leaked_secrets(project.cassettes) == []
    assert FAKE_GEMINI_KEY not in "".join(p.read_text() for p in project.cassettes.rglob("*.json"))
    monkeypatch.delenv("GEMINI_API_KEY")
    replay = project.session("--model=flash", *SLICE, "--snap-record-mode=none")
    assert outcomes(replay) == {"passed": SLICE_SIZE}
    assert len(gemini.received) == SLICE_SIZE


@pytest.mark.parametrize(
    ("words", "reason"), [("unsafe_words", "SAFETY"), ("blocked_words", "prompt blocked (SAFETY)")], ids=str
)
def test_a_gemini_safety_stop_or_blocked_prompt_is_an_answer_code_with_its_reason(
    project: BenchProject, gemini: FakeGemini, words: str, reason: str
) -> None:
    setattr(gemini.script, words, frozenset({FLAGGED_WORD}))
    assert project.session("--model=flash", *SLICE).exit_status == 0
    asked = observations(project)
    coded = [o for o in asked if o.code == -5]
    assert len(coded) == FLAGGED
    assert all(o.score is None and reason in o.reason for o in coded)
    assert sum(o.is_scored for o in asked) == SLICE_SIZE - FLAGGED
    assert len(gemini.received) == SLICE_SIZE


def test_an_unavailable_gemini_is_asked_again_and_answers(project: BenchProject, gemini: FakeGemini) -> None:
    gemini.script.unavailable_next = 2  # 503 UNAVAILABLE twice
    assert outcomes(project.session("--model=flash", *SLICE)) == {"passed": SLICE_SIZE}
    assert [r.status for r in gemini.received].count(503) == 2
    assert len(gemini.received) == SLICE_SIZE + 2
    assert all(o.is_scored for o in observations(project))
