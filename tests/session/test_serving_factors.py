"""The serving factors asked, recorded and replayed, in-process against the FAKE OpenRouter of
tests/fake_serving_providers.py (one model routed to three providers, ProviderC one point higher on half the items;
a reasoning model one point higher at effort high on the same half): each provider pinned and each effort asked as
a model of its own, with its own recordings; replayed offline with the same observations; an answer another
provider served is an API error, recorded and replayed; the levels a model cannot be asked at are usage problems;
the dry run prices each serving with its own output tokens. Recorded once per module, copied into each test's
project."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from snap_bench.observations.observation import Observation
from snap_bench.observations.parsing import AnswerCode
from snap_bench.session.run import SessionResult
from snap_bench.session.settings import UsageProblem
from tests.conftest import BenchProject
from tests.fake_openrouter import FAKE_OPENROUTER_KEY
from tests.fake_serving_providers import (
    PROVIDERS,
    base_score,
    moved,
    profile_items,
    serving_openrouter,
    serving_project,
)
from tests.session.recorded import dry_run

# 4 moral items x 3 paraphrases x 2 contexts at one system prompt, temperature and run: 24 conditions a serving.
DESIGN = ("--snap-items=M01,M02,M03,M04", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
PER_SERVING = 24
ASK_PROVIDERS = f"--snap-providers={','.join(PROVIDERS)}"
ASK_EFFORTS = "--snap-efforts=low,high"
PROVIDER_SERVINGS = tuple(f"served@{provider}" for provider in PROVIDERS)
EFFORT_SERVINGS = ("thinker@effort-low", "thinker@effort-high")


@dataclass(frozen=True)
class Served:
    """The project that recorded the served model through three providers and at two efforts, what each session
    decided, and the chat requests the fake received."""

    root: Path
    providers: SessionResult
    efforts: SessionResult
    requests: tuple[dict[str, Any], ...]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Served:
    root = tmp_path_factory.mktemp("served") / "project"
    with serving_openrouter() as fake, pytest.MonkeyPatch.context() as environment:
        environment.setenv("OPENROUTER_API_KEY", FAKE_OPENROUTER_KEY)
        project = serving_project(root, fake.base_url)
        providers = project.session("--model=served", ASK_PROVIDERS, *DESIGN)
        efforts = project.session("--model=thinker", ASK_EFFORTS, *DESIGN)
        requests = tuple(exchange.body for exchange in fake.script.chat_exchanges() if exchange.body is not None)
    return Served(root, providers, efforts, requests)


def expected_score(observation: Observation, *, higher: bool) -> int:
    """What the fake answers the observation's item: its score, one point higher where ``higher`` on half the
    items."""
    place = next(place for item, place in profile_items().values() if item == observation.item)
    return base_score(place) + (1 if higher and moved(place) else 0)


def comparable(observations: tuple[Observation, ...]) -> list[tuple[Any, ...]]:
    return sorted(
        (o.model, o.condition_id, o.raw_answer, o.score, o.code, o.provider, o.reasoning_effort) for o in observations
    )


def test_each_provider_is_pinned_asked_and_recorded_as_a_model_of_its_own(served: Served) -> None:
    result = served.providers
    assert result.exit_status == pytest.ExitCode.OK, result.summary
    assert result.planned == len(result.observations) == 3 * PER_SERVING
    # the model itself is not asked: only its servings, each under its own name and folder
    assert sorted({o.model for o in result.observations}) == sorted(PROVIDER_SERVINGS)
    folders = sorted(path.name for path in (served.root / "cassettes").iterdir())
    assert folders == sorted([*PROVIDER_SERVINGS, *EFFORT_SERVINGS])
    for serving in PROVIDER_SERVINGS:
        assert len(list((served.root / "cassettes" / serving / "profile").glob("*.json"))) == PER_SERVING
        assert (served.root / "cassettes" / serving / "endpoint.json").is_file()  # the catalogue entry asked with
    # each request pinned one provider with fallbacks off, and that provider served it
    routings = [request["provider"] for request in served.requests if "reasoning" not in request]
    assert sorted(routing["only"][0] for routing in routings) == sorted(PROVIDERS * PER_SERVING)
    assert all(routing == {**routing, "allow_fallbacks": False, "require_parameters": True} for routing in routings)
    for o in result.observations:
        provider = o.model.removeprefix("served@")
        assert o.provider == provider
        assert o.score == expected_score(o, higher=provider == "ProviderC")
    assert any(o.score != expected_score(o, higher=False) for o in result.observations)  # C moved some items


def test_each_effort_is_asked_at_that_effort_as_a_model_of_its_own(served: Served) -> None:
    result = served.efforts
    assert result.exit_status == pytest.ExitCode.OK, result.summary
    assert sorted({o.model for o in result.observations}) == sorted(EFFORT_SERVINGS)
    efforts = [request["reasoning"]["effort"] for request in served.requests if "reasoning" in request]
    assert sorted(efforts) == sorted(["low", "high"] * PER_SERVING)
    for o in result.observations:
        assert o.reasoning_effort == o.model.removeprefix("thinker@effort-")
        assert o.score == expected_score(o, higher=o.reasoning_effort == "high")


def test_replayed_offline_the_servings_answer_as_recorded_with_or_without_the_options(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _offline_copy(served, tmp_path, monkeypatch)
    replayed = project.session("--model=served", ASK_PROVIDERS, *DESIGN, "--snap-record-mode=none")
    assert replayed.exit_status == pytest.ExitCode.OK, replayed.summary
    assert all(o.replayed for o in replayed.observations)
    assert comparable(replayed.observations) == comparable(served.providers.observations)
    # without --model and the options, the recorded servings are the models: read back from their names
    everything = project.session(*DESIGN)
    assert everything.exit_status == pytest.ExitCode.OK, everything.summary
    recorded = (*served.providers.observations, *served.efforts.observations)
    assert comparable(everything.observations) == comparable(recorded)


def test_an_answer_from_another_provider_than_the_pinned_one_is_an_api_error_recorded_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_OPENROUTER_KEY)
    with serving_openrouter() as fake:
        fake.script.serves_instead = {"providerb": "ProviderA"}  # ProviderB ignores the pin
        project = serving_project(tmp_path / "project", fake.base_url)
        recorded = project.session("--model=served", "--snap-providers=ProviderA,ProviderB", *DESIGN)
    errors = [o for o in recorded.observations if o.model == "served@ProviderB"]
    assert len(errors) == PER_SERVING
    reason = "served by ProviderA, not by ProviderB, the provider pinned (provider.only): not scored as ProviderB's"
    assert all(o.code == int(AnswerCode.API_ERROR) and o.score is None for o in errors)
    assert all(o.reason.startswith(reason) for o in errors)
    assert all(o.code is None for o in recorded.observations if o.model == "served@ProviderA")
    # nothing of ProviderB was measured: the session says so rather than passing
    assert recorded.exit_status == 6, recorded.summary
    monkeypatch.delenv("OPENROUTER_API_KEY")
    replayed = project.session("--model=served", "--snap-providers=ProviderA,ProviderB", *DESIGN)
    assert comparable(replayed.observations) == comparable(recorded.observations)
    assert all(o.replayed for o in replayed.observations)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--model=plain", ASK_EFFORTS],
         "plain does not take a reasoning effort, and --snap-efforts asks it at effort low: its models.yaml entry "
         "sets no reasoning:, and its catalogue entry lists none of reasoning, reasoning_effort. Fix: leave plain "
         "out of a run with --snap-efforts (--model), or, if it is a reasoning model, say so in its entry"),
        (["--model=elsewhere", ASK_PROVIDERS],
         "elsewhere: --snap-providers asks it through pinned providers, and pinning a provider is OpenRouter's "
         "provider routing; elsewhere goes to 127.0.0.1:* in the 'openai-compatible' dialect, which routes to no "
         "provider. Fix: compare providers on an entry with dialect: openrouter"),
    ],
)  # fmt: skip
def test_a_level_the_model_cannot_be_asked_at_is_a_usage_problem_naming_it_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], said: str
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", FAKE_OPENROUTER_KEY)
    with serving_openrouter() as fake:  # the catalogue is read: it lists no effort parameter for plain's id
        project = serving_project(tmp_path / "project", fake.base_url)
        with pytest.raises(UsageProblem) as raised:
            project.session(*argv, *DESIGN)
        assert not fake.script.chat_exchanges()  # refused before anything was asked
    assert fnmatch(str(raised.value), said + "*"), str(raised.value)


def test_the_dry_run_prices_each_serving_with_its_own_output_tokens(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _offline_copy(served, tmp_path, monkeypatch)
    lines = dry_run(project.root, "--model=thinker,roomy", ASK_EFFORTS, *DESIGN)
    # recorded: each effort's own measured tokens (the fake spends 40 reasoning tokens at low, 400 at high)
    measured = "(measured over 24 of its recorded answers)*"
    assert _line(lines, f"  thinker@effort-low: 24 conditions;*expected ~41 {measured}")
    assert _line(lines, f"  thinker@effort-high: 24 conditions;*expected ~401 {measured}")
    # unrecorded: each effort's assumed tokens, within the entry's budget
    assert _line(lines, "  roomy@effort-low: 24 conditions;*<= 4,096, expected ~256 (assumed for reasoning effort low*")
    assert _line(lines, "  roomy@effort-high: 24 conditions;*expected ~2,048 (assumed for reasoning effort high*")
    for serving in (*EFFORT_SERVINGS, "roomy@effort-low", "roomy@effort-high"):
        assert _line(lines, f"  {serving}: 24 conditions; cost <= $* worst case, ~$* expected")
    assert _line(lines, "  roomy@effort-high: 24 conditions;*(price from models.yaml)")  # its base entry's price
    assert _line(lines, "total: 96 conditions for 4 model(s)*")
    # the instruments' budget of 24 tokens at effort high, unrecorded: said before anything is paid for
    low_budget = dry_run(project.root, "--model=roomy", "--snap-efforts=high", *DESIGN)
    assert not _line(low_budget, "*more than the budget*")
    shutil.rmtree(project.root / "cassettes" / "thinker@effort-high" / "profile")  # its catalogue entry kept
    cut = dry_run(project.root, "--model=thinker", "--snap-efforts=high", *DESIGN)
    assert _line(cut, "  thinker@effort-high:*<= 24, expected ~24 (assumed for reasoning effort high*typically spends "
                 "~2,048, more than the budget: its answers may be cut*raise the entry's max_tokens*")  # fmt: skip


def _line(lines: list[str], pattern: str) -> bool:
    return any(fnmatch(line, pattern) for line in lines)


def _offline_copy(served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BenchProject:
    """The recorded project copied, with no key: nothing can be asked (and its fake is stopped)."""
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    root = tmp_path / "project"
    root.mkdir()
    project = BenchProject(root, "http://127.0.0.1:9/api/v1")  # its models.yaml replaced by the recorded one
    shutil.copytree(served.root, root, dirs_exist_ok=True)
    return project
