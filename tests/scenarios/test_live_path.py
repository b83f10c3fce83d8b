"""The live path under faults, through pytester against the fake server: what a failed or damaged
recording keeps, what the budget caps, and what replay depends on."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

import pytest

from snap_bench.observations.export import read_jsonl
from tests.conftest import WORKERS, BenchProject
from tests.fake_openai_server import Failure, FakeOpenAIServer

# Six conditions: M01 x 3 paraphrases x 2 contexts, one prompt, one temperature, one run.
SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6
# The record-mode option, in one place (its name is the option's, not this test's business).
RECORD_MODE = "--snap-record-mode"


def assert_unscored(result: pytest.RunResult, count: int, *, passed: int = 0) -> None:
    """An answer the provider never gave (-3) is recorded as ``unscored``: its own outcome, not a failure."""
    result.assert_outcomes(passed=passed, failed=0)
    assert result.parseoutcomes().get("unscored", 0) == count


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.rglob("*.json"))}


def always_failing(status: int, count: int = 200) -> deque[Failure]:
    return deque([Failure(status, retry_after="0")] * count)


@pytest.mark.parametrize("workers", WORKERS)
def test_failed_re_ask_in_mode_all_keeps_every_recording_byte_for_byte(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    bench.run("--model=fake-model", *SMALL).assert_outcomes(passed=SMALL_SIZE)
    before = snapshot(bench.cassettes)
    assert len(before) == SMALL_SIZE
    fake_server.script.failures = always_failing(503)
    result = bench.run("--model=fake-model", *SMALL, f"{RECORD_MODE}=all", "--snap-max-attempts=2", *workers)
    assert_unscored(result, SMALL_SIZE)
    assert snapshot(bench.cassettes) == before


def test_failed_re_ask_of_a_stale_recording_in_new_episodes_keeps_the_old_exchange(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    bench.run("--model=fake-model", *SMALL).assert_outcomes(passed=SMALL_SIZE)
    before = snapshot(bench.cassettes)
    prompt = bench.own("prompts/system/NEU.txt")
    prompt.write_text("You are a different assistant now.\n", encoding="utf-8")
    fake_server.script.failures = always_failing(503)
    result = bench.run("--model=fake-model", *SMALL, f"{RECORD_MODE}=new_episodes", "--snap-max-attempts=2")
    assert_unscored(result, SMALL_SIZE)
    assert snapshot(bench.cassettes) == before
    # Once the provider answers, new_episodes keeps the old exchange beside the new one.
    fake_server.script.failures.clear()
    bench.run("--model=fake-model", *SMALL, f"{RECORD_MODE}=new_episodes").assert_outcomes(passed=SMALL_SIZE)
    for name, old in before.items():
        interactions = json.loads((bench.cassettes / "fake-model" / "profile" / name).read_text(encoding="utf-8"))
        assert interactions["interactions"][0] == json.loads(old)["interactions"][0]
        assert len(interactions["interactions"]) == 2


@pytest.mark.parametrize("workers", WORKERS)
def test_request_budget_caps_requests_sent_retries_included(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    # An outage: every attempt is retried, and each retry must be claimed before it is sent.
    fake_server.script.failures = always_failing(503)
    limit = 3
    result = bench.run("--model=fake-model", *SMALL, f"--snap-max-requests={limit}", "--snap-max-attempts=5", *workers)
    assert len(fake_server.script.requests) <= limit
    result.assert_outcomes(skipped=SMALL_SIZE)


def test_replay_does_not_depend_on_max_attempts(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_server.script.failures = deque([Failure(503, retry_after="0"), Failure(200, body="<html>Bad gateway</html>")])
    bench.run("--model=fake-model", *SMALL, "--snap-max-attempts=5", "-p", "no:randomly").assert_outcomes(
        passed=SMALL_SIZE
    )
    recorded = {o.condition_id: o for o in read_jsonl(bench.out / "observations.jsonl")}
    assert max(o.attempts for o in recorded.values()) == 3  # one recording holds two failures, then the answer
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=fake-model", *SMALL, "--snap-max-attempts=1")
    result.assert_outcomes(passed=SMALL_SIZE)
    for replayed in read_jsonl(bench.out / "observations.jsonl"):
        assert replayed.replayed
        assert replayed.raw_answer == recorded[replayed.condition_id].raw_answer
        assert replayed.score == recorded[replayed.condition_id].score


def _damage(document: dict[str, Any], how: str) -> dict[str, Any]:
    first = document["interactions"][0]
    if how == "no status":
        del first["response"]["status"]
    elif how == "no response":
        del first["response"]
    elif how == "request as a string":
        first["request"] = "POST http://example.invalid/v1/chat/completions"
    elif how == "only a 500":
        first["response"]["status"] = {"code": 500, "message": "Internal Server Error"}
        first["response"]["body"]["string"] = '{"error": {"message": "boom"}}'
    elif how == "empty interactions":
        document["interactions"] = []
    return document


DAMAGES = ("no status", "no response", "request as a string", "only a 500", "empty interactions")


@pytest.mark.parametrize("workers", WORKERS)
def test_damaged_recordings_are_named_offline_and_re_recorded_live(
    bench: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    bench.run("--model=fake-model", *SMALL).assert_outcomes(passed=SMALL_SIZE)
    folder = bench.cassettes / "fake-model" / "profile"
    damaged = dict(zip(DAMAGES, sorted(folder.glob("*.json")), strict=False))
    assert len(damaged) == len(DAMAGES)
    for how, path in damaged.items():
        path.write_text(json.dumps(_damage(json.loads(path.read_text(encoding="utf-8")), how)), encoding="utf-8")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = bench.run("--model=fake-model", *SMALL, *workers)
    result.assert_outcomes(passed=SMALL_SIZE - len(DAMAGES), failed=len(DAMAGES))
    output = result.stdout.str()
    assert "Traceback" not in output
    assert "vcr" not in output.lower()
    for path in damaged.values():
        result.stdout.fnmatch_lines([f"*{path.name}: damaged cassette*Delete the file, or record it again*"])
    monkeypatch.setenv("FAKE_OPENAI_KEY", "sk-fake-0123456789abcdefghijklmnopqrstuvwxyz")
    asked = len(fake_server.script.requests)
    bench.run("--model=fake-model", *SMALL, *workers).assert_outcomes(passed=SMALL_SIZE)
    assert len(fake_server.script.requests) - asked == len(DAMAGES)
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    bench.run("--model=fake-model", *SMALL, *workers).assert_outcomes(passed=SMALL_SIZE)


def two_servers(bench: BenchProject, broken_url: str, healthy_url: str) -> None:
    """fake-model at ``broken_url``, other-model at a healthy server."""
    (bench.root / "config" / "models.yaml").write_text(
        "models:\n"
        f"  fake-model:\n    id: fake/model\n    base_url: {broken_url}\n    api_key_env: FAKE_OPENAI_KEY\n"
        f"  other-model:\n    id: fake/other\n    base_url: {healthy_url}\n    api_key_env: FAKE_OPENAI_KEY\n",
        encoding="utf-8",
    )


STOPS = [
    pytest.param(401, '{"error": {"message": "Incorrect API key provided."}}', "*HTTP 401*FAKE_OPENAI_KEY*", id="401"),
    pytest.param(
        400,
        '{"error": {"message": "Unsupported value: temperature does not support 0 with this model."}}',
        "*HTTP 400*Unsupported value*temperature*--snap-temperatures=1*",
        id="400-temperature",
    ),
    pytest.param(
        400,
        '{"error": {"message": "Unrecognized request argument supplied: max_tokens"}}',
        "*HTTP 400*Unrecognized*refused a parameter*models.yaml*",
        id="400-unsupported",
    ),
    pytest.param(None, "", "*bad endpoint URL*base_url*http://*", id="no-scheme"),
]


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize(("status", "body", "message"), STOPS)
def test_hopeless_model_stops_after_a_few_conditions_and_the_others_go_on(
    bench: BenchProject,
    fake_server: FakeOpenAIServer,
    workers: tuple[str, ...],
    status: int | None,
    body: str,
    message: str,
) -> None:
    from snap_bench.asking.stops import NOT_ASKED, STOP_AFTER, stopped_models

    with FakeOpenAIServer() as healthy:
        if status is None:
            broken_url = fake_server.base_url.removeprefix("http://")
        else:
            broken_url = fake_server.base_url
            fake_server.script.failures = deque([Failure(status, body=body)] * 100)
        two_servers(bench, broken_url, healthy.base_url)
        result = bench.run("--model=fake-model,other-model", *SMALL, *workers)
        assert len(healthy.script.requests) == SMALL_SIZE
    assert_unscored(result, SMALL_SIZE, passed=SMALL_SIZE)
    assert result.ret == 6  # README: could not measure
    # One in flight per worker when the stop is decided: at most STOP_AFTER + workers - 1 asked.
    assert len(fake_server.script.requests) <= STOP_AFTER + 1
    observations = read_jsonl(bench.out / "observations.jsonl")
    broken = [o for o in observations if o.model == "fake-model"]
    assert {o.code for o in broken} == {-3}
    not_asked = [o for o in broken if o.reason.startswith(NOT_ASKED)]
    assert len(not_asked) >= SMALL_SIZE - STOP_AFTER - 1
    assert all(o.attempts == 0 for o in not_asked)
    assert all(o.is_scored for o in observations if o.model == "other-model")
    stopped = stopped_models(bench.out)
    assert list(stopped) == ["fake-model"]
    result.stdout.fnmatch_lines([f"exit status 6: could not measure: *fake-model stopped at *{message}*"])


@pytest.mark.parametrize("workers", WORKERS)
def test_a_refused_connection_stops_the_model_without_retrying_any_condition(
    bench: BenchProject, workers: tuple[str, ...]
) -> None:
    from snap_bench.asking.stops import NOT_ASKED, STOP_AFTER

    with FakeOpenAIServer() as closed:
        refused_url = closed.base_url  # nothing listens there once the server is closed
    with FakeOpenAIServer() as healthy:
        two_servers(bench, refused_url, healthy.base_url)
        result = bench.run("--model=fake-model,other-model", *SMALL, "--snap-max-attempts=5", *workers)
    assert result.ret == 6
    broken = [o for o in read_jsonl(bench.out / "observations.jsonl") if o.model == "fake-model"]
    asked = [o for o in broken if not o.reason.startswith(NOT_ASKED)]
    assert 1 <= len(asked) <= STOP_AFTER + 1
    assert all(o.attempts == 1 for o in asked)  # no backoff: refused once is refused
    result.stdout.fnmatch_lines(["exit status 6: could not measure: *fake-model stopped at *connection failed*"])


@pytest.mark.parametrize("workers", WORKERS)
def test_a_key_echoed_by_the_provider_is_written_nowhere(
    bench: BenchProject,
    fake_server: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    workers: tuple[str, ...],
) -> None:
    configured = "plain-configured-secret-0123456789"  # not shaped like a key: found only as configured
    shaped = "sk-or-v1-" + "a1b2c3d4" * 8  # not configured: found only by its shape
    monkeypatch.setenv("FAKE_OPENAI_KEY", configured)
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {configured}; did you mean {shaped}?"}})
    fake_server.script.failures = deque([Failure(401, body=echo)] * 100)
    junit = bench.root / "junit.xml"
    result = bench.run("--model=fake-model", *SMALL, f"--junitxml={junit}", "-rA", *workers)
    assert_unscored(result, SMALL_SIZE)
    assert fake_server.script.requests  # the provider did answer with the key
    written = [result.stdout.str(), result.stderr.str(), junit.read_text(encoding="utf-8")]
    written += [path.read_text(encoding="utf-8", errors="replace") for path in bench.out.rglob("*") if path.is_file()]
    written += [path.read_text(encoding="utf-8") for path in bench.cassettes.rglob("*") if path.is_file()]
    assert (bench.out / "report.html").is_file()
    assert any("Incorrect API key provided: <redacted>" in text for text in written)
    for text in written:
        assert configured not in text
        assert shaped not in text


@pytest.mark.parametrize("workers", WORKERS)
def test_a_retried_condition_shows_on_the_progress_with_its_waits_and_why(
    bench: BenchProject, fake_server: FakeOpenAIServer, workers: tuple[str, ...]
) -> None:
    # Under xdist the worker's own output is not shown: the note rides on the report to the controller.
    fake_server.script.failures = deque([Failure(429, retry_after="0"), Failure(503, retry_after="0")])
    result = bench.run("--model=fake-model", *SMALL, "--snap-runs=1", "--snap-concurrency=1", *workers)
    result.assert_outcomes(passed=SMALL_SIZE)
    # The two failures go to whichever requests come next: one condition's two retries, or, where another
    # process's request came between them (under xdist, at any moment), one retry each of two conditions.
    retried = [line for line in result.stdout.lines if line.startswith("snap-bench: retried fake-model-M01-")]
    attempts = [int(line.split(": ")[2].split()[0]) for line in retried]
    assert sum(attempts) - len(attempts) == 2, retried
    assert all(", 0.0 s waited (HTTP " in line for line in retried), retried
    assert "HTTP 429" in " ".join(retried)
    assert "HTTP 503" in " ".join(retried)
    result.stdout.fnmatch_lines([f"retries: {len(retried)} condition*"])


@pytest.mark.parametrize("timeout", [("--snap-timeout=1",), ("-o", "snap_timeout=1")], ids=["option", "ini"])
def test_a_request_past_the_timeout_is_asked_again(
    bench: BenchProject, fake_server: FakeOpenAIServer, timeout: tuple[str, ...]
) -> None:
    # A reply that would come after 30 s: with the default timeout (120 s) the ask would wait for it.
    fake_server.script.failures = deque([Failure(503, delay_s=30.0)])
    result = bench.run("--model=fake-model", *SMALL, *timeout)
    result.assert_outcomes(passed=SMALL_SIZE)
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert sorted(o.attempts for o in observations)[-1] >= 2
    result.stdout.fnmatch_lines(["snap-bench: retried *timeout*"])


def test_the_timeout_option_is_listed_and_checked(bench: BenchProject) -> None:
    bench.pytester.runpytest_subprocess("--help").stdout.fnmatch_lines(["*--snap-timeout=SECONDS*"])
    result = bench.run("--model=fake-model", "--snap-timeout=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--snap-timeout*"])
