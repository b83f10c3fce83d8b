"""Log-probabilities in a session, in-process (run_session) against the fake server: asked for only when an entry
or option says so, kept where the endpoint gives them, summarised per condition and per model."""

from __future__ import annotations

import json

import pytest

from snap_bench.observations.export import read_jsonl
from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer

SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6


def with_logprobs(project: BenchProject, url: str, setting: str) -> None:
    (project.root / "config" / "models.yaml").write_text(
        "models:\n"
        f"  fake-model:\n    id: fake/model\n    base_url: {url}\n    api_key_env: FAKE_OPENAI_KEY\n"
        f"    logprobs: {setting}\n",
        encoding="utf-8",
    )


def test_an_entry_asking_for_logprobs_gets_them_per_condition_and_per_model(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    with_logprobs(project, fake_server.base_url, "true")
    result = project.session("--model=fake-model", *SMALL, gate=True)
    assert {(r["logprobs"], r["top_logprobs"]) for r in fake_server.script.requests} == {(True, 5)}
    observations = read_jsonl(project.out / "observations.jsonl")
    assert len(observations) == SMALL_SIZE
    for observation in observations:
        assert observation.logprobs is not None
        assert observation.logprobs["chosen_probability"] == pytest.approx(0.7)
        assert observation.logprobs["expected_score"] == pytest.approx(4.1)
    analysis = json.loads((project.out / "analysis.json").read_text(encoding="utf-8"))
    summary = analysis["instruments"]["profile"]["models"]["fake-model"]["logprobs"]
    assert summary["n"] == SMALL_SIZE
    assert summary["mean_chosen_probability"] == pytest.approx(0.7)
    line = "profile: mean probability of the chosen point 0.700 (mean expected score 4.10) over 6"
    assert any(line in shown for shown in result.summary), result.summary


def test_an_endpoint_that_gives_none_leaves_them_absent(project: BenchProject, fake_server: FakeOpenAIServer) -> None:
    with_logprobs(project, fake_server.base_url, "3")
    fake_server.script.logprobs = None  # asked, but this server sends none
    result = project.session("--model=fake-model", *SMALL, gate=True)
    assert {r["top_logprobs"] for r in fake_server.script.requests} == {3}
    assert all(o.logprobs is None for o in read_jsonl(project.out / "observations.jsonl"))
    analysis = json.loads((project.out / "analysis.json").read_text(encoding="utf-8"))
    assert "logprobs" not in analysis["instruments"]["profile"]["models"]["fake-model"]
    assert "mean probability of the chosen point" not in "\n".join(result.summary)


def test_logprobs_are_opt_in_and_the_option_asks_every_model(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    assert len(project.session("--model=fake-model", *SMALL).observations) == SMALL_SIZE
    assert not any("logprobs" in r for r in fake_server.script.requests)
    assert all(o.logprobs is None for o in read_jsonl(project.out / "observations.jsonl"))
    asked = len(fake_server.script.requests)
    # The body changed, so the recordings no longer match: re-asked in mode all.
    again = project.session("--model=fake-model", *SMALL, "--snap-logprobs=2", "--snap-record-mode=all")
    assert len(again.observations) == SMALL_SIZE
    assert {r["top_logprobs"] for r in fake_server.script.requests[asked:]} == {2}
    assert all(o.logprobs is not None for o in read_jsonl(project.out / "observations.jsonl"))
