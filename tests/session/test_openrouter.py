"""The headline command against OpenRouter as its documentation describes it, the session run in-process against
the FAKE loopback OpenRouter of tests/fake_openrouter.py: temperatures the provider would drop, routing, who served
each answer, its errors (402, 403 moderation, 404 for a retired id, generation errors), spend and caching."""

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
from snap_bench.session.run import SessionResult
from tests.conftest import BenchProject
from tests.fake_openrouter import (
    DEFAULT_MODELS,
    FAKE_OPENROUTER_KEY,
    FakeModel,
    FakeOpenRouter,
    FakeProvider,
    Fault,
    OpenRouterScript,
)
from tests.session.asking_checks import outcomes

# The small live profile run: 2 items x 3 paraphrases x 2 system prompts x 3 temperatures x
# 2 contexts x 2 runs = 144 conditions; at the provider's default temperature, 48.
DESIGN = ("--snap-items=M01,M02", "--snap-prompts=NEU,DIR", "--snap-runs=2")
DESIGN_SIZE, AT_DEFAULT_SIZE = 144, 48
# 1 item x 3 paraphrases x 2 system prompts x 3 temperatures x 2 contexts x 1 run.
SMALL_DESIGN, SMALL_DESIGN_SIZE = ("--snap-items=M01", "--snap-prompts=NEU,DIR", "--snap-runs=1"), 36
# A reasoning model whose catalogue entry lists no temperature (as OpenRouter's lists for openai/gpt-5.2).
GPT = FakeModel(
    id="openai/gpt-5.2",
    providers=(FakeProvider("OpenAI"), FakeProvider("Azure")),
    prompt_price=1.75e-6,
    completion_price=1.4e-5,
    supported_parameters=("max_tokens", "reasoning", "include_reasoning", "seed", "response_format"),
)
MODELS = (GPT, *DEFAULT_MODELS)
LLAMA = "meta-llama/llama-3.1-8b-instruct"


def models_yaml(base_url: str) -> str:
    return textwrap.dedent(f"""\
        defaults:
          base_url: {base_url}
          api_key_env: OPENROUTER_API_KEY
        models:
          gpt-5.2:
            id: openai/gpt-5.2
            dialect: openrouter
            reasoning: low
            max_tokens: 64
          llama-pinned:
            id: {LLAMA}
            dialect: openrouter
            provider: {{order: [DeepInfra], allow_fallbacks: false}}
          llama:
            id: {LLAMA}
            dialect: openrouter
            price: {{input_per_million: 0.02, output_per_million: 0.05}}
          claude-3-opus:
            id: anthropic/claude-3-opus
            dialect: openrouter
        """)


@pytest.fixture
def openrouter() -> Iterator[FakeOpenRouter]:
    with FakeOpenRouter(OpenRouterScript(models=MODELS)) as server:
        yield server


@pytest.fixture
def project(tmp_path: Path, openrouter: FakeOpenRouter, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_OPENROUTER_KEY)
    root = tmp_path / "project"
    root.mkdir()
    bench = BenchProject(root, openrouter.base_url)
    (bench.root / "config" / "models.yaml").write_text(models_yaml(openrouter.base_url), encoding="utf-8")
    return bench


def observations(bench: BenchProject) -> list[Observation]:
    return read_jsonl(bench.out / "observations.jsonl")


def session_json(bench: BenchProject) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((bench.out / "session.json").read_text(encoding="utf-8"))
    return document


def said(result: SessionResult, pattern: str) -> bool:
    """Whether one of the lines the terminal's summary shows matches ``pattern``."""
    return any(fnmatch(line, pattern) for line in result.summary)


def bodies(server: FakeOpenRouter, model_id: str) -> list[dict[str, Any]]:
    return [e.body for e in server.script.chat_exchanges() if isinstance(e.body, dict) and e.body["model"] == model_id]


def test_a_model_that_drops_the_temperature_is_asked_at_the_providers_default_and_pays_what_it_says(
    project: BenchProject, openrouter: FakeOpenRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = project.session("--model=gpt-5.2", *DESIGN)
    assert outcomes(result) == {"passed": AT_DEFAULT_SIZE}
    assert said(result, "*gpt-5.2: asked at the provider's default temperature*no temperature*")
    sent = bodies(openrouter, GPT.id)
    assert len(sent) == AT_DEFAULT_SIZE
    # 0 answers paid for at a temperature the provider ignored: none was sent, none was dropped
    assert all("temperature" not in body for body in sent)
    assert all(not dropped for dropped in openrouter.script.dropped_parameters)
    assert all(body["provider"] == {"require_parameters": True} for body in sent)
    asked = observations(project)
    assert {o.factors["temperature"] for o in asked} == {"tdefault"}
    scored = [o for o in asked if o.is_scored]
    assert sum(o.provider in ("OpenAI", "Azure") for o in scored) >= 0.99 * len(scored) > 0
    assert all(o.reasoning_effort == "low" and o.served_model == GPT.id for o in asked)
    # the spend is the billed usage.cost, to the millionth of a cent
    spend = session_json(project)["spend"]["gpt-5.2"]
    assert spend["cost_usd"] == pytest.approx(openrouter.script.billed_usd, abs=1e-6)
    assert spend["requests"] == AT_DEFAULT_SIZE
    # offline, the same design is replayed from the catalogue entry kept beside the recordings
    monkeypatch.delenv("OPENROUTER_API_KEY")
    assert outcomes(project.session("--model=gpt-5.2", *DESIGN)) == {"passed": AT_DEFAULT_SIZE}
    assert len(bodies(openrouter, GPT.id)) == AT_DEFAULT_SIZE


def test_the_routing_block_goes_with_every_request_and_the_serving_provider_is_kept(
    project: BenchProject, openrouter: FakeOpenRouter
) -> None:
    assert outcomes(project.session("--model=llama-pinned", *DESIGN)) == {"passed": DESIGN_SIZE}
    sent = bodies(openrouter, LLAMA)
    assert len(sent) == DESIGN_SIZE
    routing = {"order": ["DeepInfra"], "allow_fallbacks": False, "require_parameters": True}
    assert all(body["provider"] == routing for body in sent)
    assert {o.provider for o in observations(project)} == {"DeepInfra"}
    assert {o.system_fingerprint for o in observations(project)} == {"fp_deepinfra"}


def test_answers_from_several_providers_are_a_facet_of_their_own_not_run_noise(
    project: BenchProject, openrouter: FakeOpenRouter
) -> None:
    # Together answers otherwise than the others: a routing difference, not the model's instability
    openrouter.script.answer = lambda request, provider: "2" if provider == "Together" else "4"
    result = project.session("--model=llama", *DESIGN, gate=True)
    assert said(result, "*llama: answered by 3 providers*pin one provider*")
    serving = session_json(project)["serving"]["llama"]
    assert set(serving) == {"DeepInfra", "Together", "Fireworks"}
    assert serving["Together"]["mean_score"] == 2.0
    # The report's run facts carry the notice: they are read from analysis.json (snap_bench.report.summary).
    assert any("llama: answered by 3 providers" in line for line in project.analysis()["session"]["notices"])
    details = json.dumps(project.analysis()["instruments"]["profile"]["models"]["llama"])
    assert '"provider"' in details  # the G study's components name the provider facet


def test_a_retired_id_is_stopped_before_its_first_request_naming_the_current_ids(
    project: BenchProject, openrouter: FakeOpenRouter
) -> None:
    result = project.session("--model=claude-3-opus", *DESIGN)
    assert result.exit_status == 6  # could not measure
    assert bodies(openrouter, "anthropic/claude-3-opus") == []  # <= 2 requests: none at all
    assert said(result, "*claude-3-opus stopped*catalogue lists no model 'anthropic/claude-3-opus'*")


def test_a_retired_id_without_a_catalogue_is_stopped_at_its_first_condition(
    project: BenchProject, openrouter: FakeOpenRouter
) -> None:
    """Where the catalogue cannot be read (it is not needed to ask), OpenRouter's 404 stops the model."""
    openrouter.script.models = [model for model in MODELS if model.id != GPT.id]
    openrouter.script.catalogue_unavailable = True
    result = project.session("--model=claude-3-opus", *DESIGN)
    assert result.exit_status == 6
    assert len(bodies(openrouter, "anthropic/claude-3-opus")) <= 2
    assert said(result, "*serves no model 'anthropic/claude-3-opus'*")


def test_credits_running_out_stop_every_model_of_the_key_at_once(
    project: BenchProject, openrouter: FakeOpenRouter
) -> None:
    openrouter.script.credits_usd = 0.0005  # a few answers of gpt-5.2
    result = project.session("--model=gpt-5.2,llama", *DESIGN)
    assert result.exit_status == 6
    after = openrouter.script.requests_after(402)
    assert after <= 1 + 2
    assert said(result, "*no credits left (HTTP 402)*every model asked with this key is stopped*")


def test_a_moderated_condition_gets_its_own_code_and_its_model_goes_on(
    project: BenchProject, openrouter: FakeOpenRouter
) -> None:
    openrouter.script.flagged_words = frozenset({"individual"})  # in M01's second paraphrase only
    result = project.session("--model=gpt-5.2", *DESIGN)
    assert result.exit_status == 0
    asked = observations(project)
    moderated = [o for o in asked if o.code == -5]
    assert len(moderated) == 8  # M01-P2 x 2 prompts x 2 contexts x 2 runs
    assert all(o.item == "M01" and o.factors["paraphrase"] == "P2" for o in moderated)
    assert sum(o.is_scored for o in asked) == len(asked) - len(moderated) > 0
    # asked once each: a moderation refusal is not retried
    assert len(bodies(openrouter, GPT.id)) == AT_DEFAULT_SIZE


def test_a_generation_error_in_a_200_is_asked_again_and_never_scored(
    project: BenchProject, openrouter: FakeOpenRouter
) -> None:
    openrouter.script.fault_every = 5  # every fifth request: a choice with finish_reason "error"
    openrouter.script.rate_fault = Fault(kind="generation_error")
    # A quarter of the design: each error waits out a backoff before it is asked again.
    assert outcomes(project.session("--model=llama", *SMALL_DESIGN)) == {"passed": SMALL_DESIGN_SIZE}
    asked = observations(project)
    assert all(o.is_scored and o.raw_answer == "4" for o in asked)
    assert len(bodies(openrouter, LLAMA)) > SMALL_DESIGN_SIZE  # the errors were asked again
    assert max(o.attempts for o in asked) >= 2


def test_the_cost_limit_holds_for_a_model_priced_only_by_the_catalogue(
    project: BenchProject, openrouter: FakeOpenRouter
) -> None:
    limit = 0.004
    result = project.session("--model=gpt-5.2", *DESIGN, f"--snap-max-cost={limit}", "--snap-concurrency=4")
    assert openrouter.script.billed_usd <= limit
    counted = outcomes(result)
    assert 0 < counted.get("passed", 0) < AT_DEFAULT_SIZE
    assert counted.get("skipped", 0) > 0  # left for a later run, said so


def test_cache_hits_are_marked_and_left_out_of_the_run_to_run_figures(
    project: BenchProject, openrouter: FakeOpenRouter
) -> None:
    openrouter.script.cache_all = True  # the account's preset caches every request
    assert outcomes(project.session("--model=llama", *DESIGN)) == {"passed": DESIGN_SIZE}
    asked = observations(project)
    hits = [o for o in asked if o.cache_hit]
    assert hits
    assert all(o.run == 2 for o in hits)
    result = project.session("--model=llama", *DESIGN, gate=True)
    assert said(result, "*llama: * answer(s) came from the endpoint's response cache*")
