"""Reasoning models against the fake server configured to behave like one: the entry's effort and output
budget in the request, an answer cut by the limit with its own code, reasoning tokens recorded and
paid for, and a refused temperature reported once, at the first condition."""

from __future__ import annotations

import json
import textwrap

import pytest

from snap_bench.asking.asker import cost_usd
from snap_bench.asking.client import ChatReply
from snap_bench.asking.stops import NOT_ASKED
from snap_bench.design.models import ModelSpec, Price
from snap_bench.observations.export import read_jsonl
from snap_bench.observations.parsing import AnswerCode
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer

WORKERS = [pytest.param((), id="plain"), pytest.param(("-n", "2"), id="xdist")]
SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6


def entry(bench: BenchProject, url: str, fields: str) -> None:
    """fake-model with the given extra models.yaml fields (indented under the entry)."""
    (bench.root / "config" / "models.yaml").write_text(
        "models:\n  fake-model:\n    id: fake/model\n"
        f"    base_url: {url}\n    api_key_env: FAKE_OPENAI_KEY\n"
        "    price: {input_per_million: 1.0, output_per_million: 2.0}\n"
        + textwrap.indent(textwrap.dedent(fields), "    "),
        encoding="utf-8",
    )


@pytest.mark.parametrize(("setting", "sent"), [("high", "high"), ("minimal", "minimal"), ("off", "none")])
def test_reasoning_effort_and_own_output_budget_go_in_the_request(
    bench: BenchProject, fake_server: FakeOpenAIServer, setting: str, sent: str
) -> None:
    entry(bench, fake_server.base_url, f"reasoning: {setting}\nmax_tokens: 400\n")
    bench.run("--model=fake-model", *SMALL).assert_outcomes(passed=SMALL_SIZE)
    assert {json.dumps(r["reasoning"]) for r in fake_server.script.requests} == {json.dumps({"effort": sent})}
    assert {r["max_tokens"] for r in fake_server.script.requests} == {400}


def test_an_entry_without_reasoning_or_logprobs_sends_the_same_body_as_before(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    bench.run("--model=fake-model", *SMALL).assert_outcomes(passed=SMALL_SIZE)
    assert {tuple(sorted(r)) for r in fake_server.script.requests} == {
        ("max_tokens", "messages", "model", "temperature")
    }


def test_a_misspelt_effort_is_a_usage_error_naming_the_key(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    entry(bench, fake_server.base_url, "reasoning: hihg\n")
    result = bench.run("--model=fake-model", *SMALL)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*models.yaml*reasoning*hihg*use one of: xhigh, high, medium, low, minimal, none, off*"]
    )


@pytest.mark.parametrize("workers", WORKERS)
def test_an_empty_answer_cut_by_the_limit_has_its_own_code_and_its_reasoning_tokens(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    entry(bench, fake_server.base_url, "reasoning: high\nmax_tokens: 24\n")
    fake_server.script.answer = lambda request: ""
    fake_server.script.finish_reason = "length"
    fake_server.script.reasoning_tokens = 24
    result = bench.run("--model=fake-model", *SMALL, *workers)
    assert len(fake_server.script.requests) == SMALL_SIZE  # not retried: the budget, not the provider, failed
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert {o.code for o in observations} == {int(AnswerCode.TRUNCATED)}
    assert all("cut by the output limit" in o.reason and "max_tokens" in o.reason for o in observations)
    assert {o.reasoning_tokens for o in observations} == {24}
    result.stdout.fnmatch_lines(["*fake-model: n=6 valid=0.0%*invalid=0*cut_by_limit=6*"])


def test_reasoning_tokens_are_recorded_and_paid_for(bench: BenchProject, fake_server: FakeOpenAIServer) -> None:
    fake_server.script.reasoning_tokens = 500
    bench.run("--model=fake-model", *SMALL).assert_outcomes(passed=SMALL_SIZE)
    assert {o.reasoning_tokens for o in read_jsonl(bench.out / "observations.jsonl")} == {500}


def test_reasoning_tokens_reported_apart_from_the_completion_are_added_to_the_cost() -> None:
    model = ModelSpec("m", "m", "v/m", "t", "http://x", None, Price(1.0, 2.0), None)
    included = ChatReply("4", None, 200, 0.1, 1, prompt_tokens=20, completion_tokens=501, reasoning_tokens=500)
    apart = ChatReply("4", None, 200, 0.1, 1, prompt_tokens=20, completion_tokens=1, reasoning_tokens=500)
    assert cost_usd(model, included) == pytest.approx((20 * 1.0 + 501 * 2.0) / 1e6)
    assert cost_usd(model, apart) == pytest.approx((20 * 1.0 + 501 * 2.0) / 1e6)


@pytest.mark.parametrize("workers", WORKERS)
def test_a_refused_temperature_is_reported_once_at_the_first_condition(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    fake_server.script.only_temperature = 1.0
    result = bench.run("--model=fake-model", *SMALL, "--snap-max-attempts=5", *workers)
    assert result.ret == 6
    # One condition per worker may be in flight when the stop is decided; none is retried.
    assert len(fake_server.script.requests) <= (2 if workers else 1)
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert sum(not o.reason.startswith(NOT_ASKED) for o in observations) == len(fake_server.script.requests)
    result.stdout.fnmatch_lines(
        ["exit status 6: could not measure: *fake-model stopped at *temperature*--snap-temperatures=1*"]
    )
    asked = len(fake_server.script.requests)
    bench.run("--model=fake-model", *SMALL[:2], "--snap-temperatures=1", "--snap-runs=1").assert_outcomes(
        passed=SMALL_SIZE
    )
    assert len(fake_server.script.requests) - asked == SMALL_SIZE
