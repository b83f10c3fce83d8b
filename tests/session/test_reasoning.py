"""Reasoning models against the fake server configured to behave like one: the entry's effort and output
budget in the request, an answer cut by the limit with its own code, reasoning tokens recorded and
paid for, and a refused temperature reported once, at the first condition. In-process (run_session)."""

from __future__ import annotations

import json
import re
import textwrap

import pytest

from snap_bench.asking.stops import NOT_ASKED
from snap_bench.observations.export import read_jsonl
from snap_bench.observations.parsing import AnswerCode
from snap_bench.session.settings import UsageProblem
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer

SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6


def entry(project: BenchProject, url: str, fields: str) -> None:
    """fake-model with the given extra models.yaml fields (indented under the entry)."""
    (project.root / "config" / "models.yaml").write_text(
        "models:\n  fake-model:\n    id: fake/model\n"
        f"    base_url: {url}\n    api_key_env: FAKE_OPENAI_KEY\n"
        "    price: {input_per_million: 1.0, output_per_million: 2.0}\n"
        + textwrap.indent(textwrap.dedent(fields), "    "),
        encoding="utf-8",
    )


@pytest.mark.parametrize(("setting", "sent"), [("high", "high"), ("minimal", "minimal"), ("off", "none")])
def test_reasoning_effort_and_own_output_budget_go_in_the_request(
    project: BenchProject, fake_server: FakeOpenAIServer, setting: str, sent: str
) -> None:
    entry(project, fake_server.base_url, f"reasoning: {setting}\nmax_tokens: 400\n")
    assert len(project.session("--model=fake-model", *SMALL).observations) == SMALL_SIZE
    assert {json.dumps(r["reasoning"]) for r in fake_server.script.requests} == {json.dumps({"effort": sent})}
    assert {r["max_tokens"] for r in fake_server.script.requests} == {400}


def test_an_entry_without_reasoning_or_logprobs_sends_the_same_body_as_before(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    assert len(project.session("--model=fake-model", *SMALL).observations) == SMALL_SIZE
    assert {tuple(sorted(r)) for r in fake_server.script.requests} == {
        ("max_tokens", "messages", "model", "temperature")
    }


def test_a_misspelt_effort_is_a_usage_error_naming_the_key(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    entry(project, fake_server.base_url, "reasoning: hihg\n")
    expected = r"models\.yaml.*reasoning.*hihg.*use one of: xhigh, high, medium, low, minimal, none, off"
    with pytest.raises(UsageProblem, match=expected):
        project.session("--model=fake-model", *SMALL)


def test_an_empty_answer_cut_by_the_limit_has_its_own_code_and_its_reasoning_tokens(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    entry(project, fake_server.base_url, "reasoning: high\nmax_tokens: 24\n")
    fake_server.script.answer = lambda request: ""
    fake_server.script.finish_reason = "length"
    fake_server.script.reasoning_tokens = 24
    result = project.session("--model=fake-model", *SMALL)
    assert len(fake_server.script.requests) == SMALL_SIZE  # not retried: the budget, not the provider, failed
    observations = read_jsonl(project.out / "observations.jsonl")
    assert {o.code for o in observations} == {int(AnswerCode.TRUNCATED)}
    assert all("cut by the output limit" in o.reason and "max_tokens" in o.reason for o in observations)
    assert {o.reasoning_tokens for o in observations} == {24}
    assert any(re.search(r"fake-model: n=6 valid=0\.0%.*invalid=0.*cut_by_limit=6", line) for line in result.summary)


def test_reasoning_tokens_are_recorded_and_paid_for(project: BenchProject, fake_server: FakeOpenAIServer) -> None:
    fake_server.script.reasoning_tokens = 500
    assert len(project.session("--model=fake-model", *SMALL).observations) == SMALL_SIZE
    assert {o.reasoning_tokens for o in read_jsonl(project.out / "observations.jsonl")} == {500}


def test_a_refused_temperature_is_reported_once_at_the_first_condition(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.only_temperature = 1.0
    result = project.session("--model=fake-model", *SMALL, "--snap-max-attempts=5")
    assert result.exit_status == 6
    # One process: the first condition stops the model, and it is not retried. (Under xdist one condition per
    # worker may be in flight when the stop is decided: the stop board is shared through the session's state.)
    assert len(fake_server.script.requests) == 1
    observations = read_jsonl(project.out / "observations.jsonl")
    assert sum(not o.reason.startswith(NOT_ASKED) for o in observations) == len(fake_server.script.requests)
    stopped = r"could not measure: .*fake-model stopped at .*temperature.*--snap-temperatures=1.*"
    assert re.fullmatch(stopped, result.reason), result.reason
    asked = len(fake_server.script.requests)
    at_one = project.session("--model=fake-model", *SMALL[:2], "--snap-temperatures=1", "--snap-runs=1")
    assert [o.code for o in at_one.observations] == [None] * SMALL_SIZE
    assert len(fake_server.script.requests) - asked == SMALL_SIZE
