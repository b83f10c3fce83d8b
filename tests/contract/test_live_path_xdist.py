"""The live path's guarantees under xdist's workers, through pytest in a process of its own: a stop, a request
budget and the retry notes the workers share with the controller, and a key the provider echoes kept out of
everything pytest writes (terminal, JUnit XML, HTML report). The session's own behaviour, in-process:
tests/session/test_live_path.py."""

from __future__ import annotations

import json
from collections import deque

import pytest

from snap_bench.observations.export import read_jsonl
from tests.conftest import SLICE, SLICE_SIZE, BenchProject
from tests.fake_openai_server import Failure, FakeOpenAIServer

XDIST = ("-n", "2")
# Six conditions: M01 x 3 paraphrases x 2 contexts, one prompt, one temperature, one run.
SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6


def test_a_hopeless_model_is_stopped_for_every_worker_and_the_others_go_on(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    from snap_bench.asking.stops import NOT_ASKED, STOP_AFTER, stopped_models

    fake_server.script.failures = deque([Failure(401, body='{"error": {"message": "Incorrect API key."}}')] * 100)
    with FakeOpenAIServer() as healthy:
        (bench.root / "config" / "models.yaml").write_text(
            "models:\n"
            f"  fake-model:\n    id: fake/model\n    base_url: {fake_server.base_url}\n"
            "    api_key_env: FAKE_OPENAI_KEY\n"
            f"  other-model:\n    id: fake/other\n    base_url: {healthy.base_url}\n    api_key_env: FAKE_OPENAI_KEY\n",
            encoding="utf-8",
        )
        result = bench.run("--model=fake-model,other-model", *SMALL, *XDIST)
        assert len(healthy.script.requests) == SMALL_SIZE
    result.assert_outcomes(passed=SMALL_SIZE, failed=0)
    assert result.parseoutcomes().get("unscored", 0) == SMALL_SIZE
    assert result.ret == 6  # README: could not measure
    # One in flight per worker when the stop is decided: at most STOP_AFTER + workers - 1 asked.
    assert len(fake_server.script.requests) <= STOP_AFTER + 1
    broken = [o for o in read_jsonl(bench.out / "observations.jsonl") if o.model == "fake-model"]
    assert {o.code for o in broken} == {-3}
    assert len([o for o in broken if o.reason.startswith(NOT_ASKED)]) >= SMALL_SIZE - STOP_AFTER - 1
    assert list(stopped_models(bench.out)) == ["fake-model"]
    result.stdout.fnmatch_lines(["exit status 6: could not measure: *fake-model stopped at *HTTP 401*FAKE_OPENAI_KEY*"])


def test_the_request_budget_stays_a_hard_cap_across_workers_with_many_in_flight(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    # An outage: every attempt is retried, and each retry, of either worker, must be claimed before it is sent.
    fake_server.script.failures = deque([Failure(503, retry_after="0")] * 200)
    limit = 5
    # The fixed pace: 8 in flight from the first request (the adaptive window grows only with answers, and there
    # are none here).
    many = ("--snap-concurrency=8", "--snap-pace=fixed", "--snap-max-attempts=5")
    result = bench.run("--model=fake-model", *SLICE, *many, f"--snap-max-requests={limit}", *XDIST)
    assert len(fake_server.script.requests) <= limit
    result.assert_outcomes(skipped=SLICE_SIZE)


def test_a_retried_condition_shows_on_the_controllers_progress_with_its_waits_and_why(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    # Under xdist the worker's own output is not shown: the note rides on the report to the controller.
    fake_server.script.failures = deque([Failure(429, retry_after="0"), Failure(503, retry_after="0")])
    result = bench.run("--model=fake-model", *SMALL, "--snap-concurrency=1", *XDIST)
    result.assert_outcomes(passed=SMALL_SIZE)
    # The two failures go to whichever requests come next: one condition's two retries, or, where another
    # process's request came between them (at any moment), one retry each of two conditions.
    retried = [line for line in result.stdout.lines if line.startswith("snap-bench: retried fake-model-M01-")]
    attempts = [int(line.split(": ")[2].split()[0]) for line in retried]
    assert sum(attempts) - len(attempts) == 2, retried
    assert all(", 0.0 s waited (HTTP " in line for line in retried), retried
    assert "HTTP 429" in " ".join(retried)
    assert "HTTP 503" in " ".join(retried)
    result.stdout.fnmatch_lines([f"retries: {len(retried)} condition*"])


def test_a_key_echoed_by_the_provider_is_in_no_output_of_pytest(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured = "plain-configured-secret-0123456789"  # not shaped like a key: found only as configured
    shaped = "sk-or-v1-" + "a1b2c3d4" * 8  # not configured: found only by its shape
    monkeypatch.setenv("FAKE_OPENAI_KEY", configured)
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {configured}; did you mean {shaped}?"}})
    fake_server.script.failures = deque([Failure(401, body=echo)] * 100)
    junit = bench.root / "junit.xml"
    result = bench.run("--model=fake-model", *SMALL, f"--junitxml={junit}", "-rA", *XDIST)
    result.assert_outcomes(passed=0, failed=0)
    assert result.parseoutcomes().get("unscored", 0) == SMALL_SIZE
    assert fake_server.script.requests  # the provider did answer with the key
    written = [result.stdout.str(), result.stderr.str(), junit.read_text(encoding="utf-8")]
    written += [path.read_text(encoding="utf-8", errors="replace") for path in bench.out.rglob("*") if path.is_file()]
    written += [path.read_text(encoding="utf-8") for path in bench.cassettes.rglob("*") if path.is_file()]
    assert (bench.out / "report.html").is_file()
    assert any("Incorrect API key provided: <redacted>" in text for text in written)
    for text in written:
        assert configured not in text
        assert shaped not in text
