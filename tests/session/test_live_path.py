"""The live path under faults, the session run in-process against the fake server: what a failed or damaged
recording keeps, what the budget caps, what replay depends on, how a hopeless model is stopped, where a key the
provider echoes ends up, and the request timeout. (Under xdist's workers: tests/contract/test_live_path_xdist.py.)"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest

from snap_bench.session.options import declare_options
from snap_bench.session.run import run_session
from tests.conftest import FAKE_KEY, BenchProject
from tests.fake_openai_server import Failure, FakeOpenAIServer
from tests.session.asking_checks import (
    SMALL,
    SMALL_SIZE,
    Recorded,
    exit_line,
    observations,
    outcomes,
    record_once,
    snapshot,
)

# The record-mode option, in one place (its name is the option's, not this test's business).
RECORD_MODE = "--snap-record-mode"


def always_failing(status: int, count: int = 200) -> deque[Failure]:
    return deque([Failure(status, retry_after="0")] * count)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """SMALL recorded once for the module's tests that start from a complete recording."""
    return record_once(tmp_path_factory.mktemp("recorded"), *SMALL)


@pytest.fixture
def replaying(
    recorded: Recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[BenchProject, FakeOpenAIServer]]:
    """A project holding a copy of SMALL's recordings, and the fake server they were recorded from."""
    with FakeOpenAIServer(port=recorded.port) as server:
        yield recorded.project(tmp_path / "project", monkeypatch, server), server
    assert not server.script.errors, server.script.errors[:3]


def test_failed_re_ask_in_mode_all_keeps_every_recording_byte_for_byte(
    replaying: tuple[BenchProject, FakeOpenAIServer],
) -> None:
    project, server = replaying
    before = snapshot(project.cassettes)
    assert len(before) == SMALL_SIZE
    server.script.failures = always_failing(503)
    result = project.session("--model=fake-model", *SMALL, f"{RECORD_MODE}=all", "--snap-max-attempts=2")
    # An answer the provider never gave (-3) is recorded as ``unscored``: its own outcome, not a failure.
    assert outcomes(result) == {"unscored": SMALL_SIZE}
    assert server.script.requests  # asked again, and failed
    assert snapshot(project.cassettes) == before


def test_failed_re_ask_of_a_stale_recording_in_new_episodes_keeps_the_old_exchange(
    replaying: tuple[BenchProject, FakeOpenAIServer],
) -> None:
    project, server = replaying
    before = snapshot(project.cassettes)
    prompt = project.own("prompts/system/NEU.txt")
    prompt.write_text("You are a different assistant now.\n", encoding="utf-8")
    server.script.failures = always_failing(503)
    result = project.session("--model=fake-model", *SMALL, f"{RECORD_MODE}=new_episodes", "--snap-max-attempts=2")
    assert outcomes(result) == {"unscored": SMALL_SIZE}
    assert snapshot(project.cassettes) == before
    # Once the provider answers, new_episodes keeps the old exchange beside the new one.
    server.script.failures.clear()
    result = project.session("--model=fake-model", *SMALL, f"{RECORD_MODE}=new_episodes")
    assert outcomes(result) == {"passed": SMALL_SIZE}
    for name, old in before.items():
        interactions = json.loads((project.cassettes / "fake-model" / "profile" / name).read_text(encoding="utf-8"))
        assert interactions["interactions"][0] == json.loads(old)["interactions"][0]
        assert len(interactions["interactions"]) == 2


def test_request_budget_caps_requests_sent_retries_included(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    # An outage: every attempt is retried, and each retry must be claimed before it is sent.
    fake_server.script.failures = always_failing(503)
    limit = 3
    result = project.session("--model=fake-model", *SMALL, f"--snap-max-requests={limit}", "--snap-max-attempts=5")
    assert len(fake_server.script.requests) <= limit
    assert outcomes(result) == {"skipped": SMALL_SIZE}
    assert result.exit_status == 6
    assert exit_line(result) == f"exit status 6: could not measure: {SMALL_SIZE} budget spent; " + (
        "the verdicts rest on part of the design"
    )


def test_replay_does_not_depend_on_max_attempts(
    project: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_server.script.failures = deque([Failure(503, retry_after="0"), Failure(200, body="<html>Bad gateway</html>")])
    assert outcomes(project.session("--model=fake-model", *SMALL, "--snap-max-attempts=5")) == {"passed": SMALL_SIZE}
    recorded = {o.condition_id: o for o in observations(project)}
    assert max(o.attempts for o in recorded.values()) == 3  # one recording holds two failures, then the answer
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = project.session("--model=fake-model", *SMALL, "--snap-max-attempts=1")
    assert outcomes(result) == {"passed": SMALL_SIZE}
    for replayed in observations(project):
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


def test_damaged_recordings_are_named_offline_and_re_recorded_live(
    replaying: tuple[BenchProject, FakeOpenAIServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, server = replaying
    folder = project.cassettes / "fake-model" / "profile"
    damaged = dict(zip(DAMAGES, sorted(folder.glob("*.json")), strict=False))
    assert len(damaged) == len(DAMAGES)
    for how, path in damaged.items():
        path.write_text(json.dumps(_damage(json.loads(path.read_text(encoding="utf-8")), how)), encoding="utf-8")
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    result = project.session("--model=fake-model", *SMALL)
    said = list(result.not_measured.values())
    assert outcomes(result) == {"passed": SMALL_SIZE - len(DAMAGES), "failed": len(DAMAGES)}
    shown = "\n".join([*said, *result.summary, *result.notices])
    assert "Traceback" not in shown
    assert "vcr" not in shown.lower()
    for path in damaged.values():
        pattern = f"*{path.name}: damaged cassette*Delete the file, or record it again*"
        assert any(fnmatch(message, pattern) for message in said), (pattern, said)
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    result = project.session("--model=fake-model", *SMALL)
    assert outcomes(result) == {"passed": SMALL_SIZE}
    assert len(server.script.requests) == len(DAMAGES)
    monkeypatch.delenv("FAKE_OPENAI_KEY")
    assert outcomes(project.session("--model=fake-model", *SMALL)) == {"passed": SMALL_SIZE}


def two_servers(project: BenchProject, broken_url: str, healthy_url: str) -> None:
    """fake-model at ``broken_url``, other-model at a healthy server."""
    (project.root / "config" / "models.yaml").write_text(
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


@pytest.mark.parametrize(("status", "body", "message"), STOPS)
def test_hopeless_model_stops_after_a_few_conditions_and_the_others_go_on(
    project: BenchProject, fake_server: FakeOpenAIServer, status: int | None, body: str, message: str
) -> None:
    from snap_bench.asking.stops import NOT_ASKED, STOP_AFTER, stopped_models

    with FakeOpenAIServer() as healthy:
        if status is None:
            broken_url = fake_server.base_url.removeprefix("http://")
        else:
            broken_url = fake_server.base_url
            fake_server.script.failures = deque([Failure(status, body=body)] * 100)
        two_servers(project, broken_url, healthy.base_url)
        result = project.session("--model=fake-model,other-model", *SMALL)
        assert len(healthy.script.requests) == SMALL_SIZE
    assert outcomes(result) == {"passed": SMALL_SIZE, "unscored": SMALL_SIZE}
    assert result.exit_status == 6  # README: could not measure
    # One process asks one condition at a time: the stop is decided before the next is asked.
    assert len(fake_server.script.requests) <= STOP_AFTER
    written = observations(project)
    broken = [o for o in written if o.model == "fake-model"]
    assert {o.code for o in broken} == {-3}
    not_asked = [o for o in broken if o.reason.startswith(NOT_ASKED)]
    assert len(not_asked) >= SMALL_SIZE - STOP_AFTER
    assert all(o.attempts == 0 for o in not_asked)
    assert all(o.is_scored for o in written if o.model == "other-model")
    assert list(stopped_models(project.out)) == ["fake-model"]
    assert fnmatch(exit_line(result), f"exit status 6: could not measure: *fake-model stopped at *{message}*")


def test_a_refused_connection_stops_the_model_without_retrying_any_condition(project: BenchProject) -> None:
    from snap_bench.asking.stops import NOT_ASKED, STOP_AFTER

    with FakeOpenAIServer() as closed:
        refused_url = closed.base_url  # nothing listens there once the server is closed
    with FakeOpenAIServer() as healthy:
        two_servers(project, refused_url, healthy.base_url)
        result = project.session("--model=fake-model,other-model", *SMALL, "--snap-max-attempts=5")
    assert result.exit_status == 6
    broken = [o for o in observations(project) if o.model == "fake-model"]
    asked = [o for o in broken if not o.reason.startswith(NOT_ASKED)]
    assert 1 <= len(asked) <= STOP_AFTER
    assert all(o.attempts == 1 for o in asked)  # no backoff: refused once is refused
    assert fnmatch(exit_line(result), "exit status 6: could not measure: *fake-model stopped at *connection failed*")


def test_a_key_echoed_by_the_provider_is_written_nowhere(
    project: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the session writes and says; the terminal, the JUnit XML and the HTML report under pytest:
    tests/contract/test_live_path_xdist.py."""
    configured = "plain-configured-secret-0123456789"  # not shaped like a key: found only as configured
    shaped = "sk-or-v1-" + "a1b2c3d4" * 8  # not configured: found only by its shape
    monkeypatch.setenv("FAKE_OPENAI_KEY", configured)
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {configured}; did you mean {shaped}?"}})
    fake_server.script.failures = deque([Failure(401, body=echo)] * 100)
    result = project.session("--model=fake-model", *SMALL, "--snap-show-unscored")
    assert outcomes(result) == {"unscored": SMALL_SIZE}
    assert fake_server.script.requests  # the provider did answer with the key
    written = ["\n".join([*result.summary, *result.notices, result.reason])]
    written += [path.read_text(encoding="utf-8", errors="replace") for path in project.out.rglob("*") if path.is_file()]
    written += [path.read_text(encoding="utf-8") for path in project.cassettes.rglob("*") if path.is_file()]
    assert any("Incorrect API key provided: <redacted>" in text for text in written)
    for text in written:
        assert configured not in text
        assert shaped not in text


def test_a_retried_condition_is_noted_with_its_waits_and_why(
    project: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note each retried condition reports (shown on the progress under pytest, and carried to xdist's
    controller: tests/contract/test_live_path_xdist.py)."""
    fake_server.script.failures = deque([Failure(429, retry_after="0"), Failure(503, retry_after="0")])
    result = project.session("--model=fake-model", *SMALL, "--snap-concurrency=1")
    notes = list(result.retried.values())
    assert outcomes(result) == {"passed": SMALL_SIZE}
    # One process asking one at a time: both failures go to the first condition, asked three times.
    assert [int(note.split()[0]) for note in notes] == [3], notes
    assert ", 0.0 s waited (HTTP " in notes[0]
    assert "HTTP 429" in notes[0]
    assert "HTTP 503" in notes[0]
    assert sorted(o.attempts for o in observations(project)) == [1] * (SMALL_SIZE - 1) + [3]


@pytest.mark.parametrize("where", ["option", "ini"])
def test_a_request_past_the_timeout_is_asked_again(
    project: BenchProject, fake_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    # A reply that would come after 30 s: with the default timeout (120 s) the ask would wait for it.
    fake_server.script.failures = deque([Failure(503, delay_s=30.0)])
    argv = ["benchmarks", "--snap-no-analysis", "--model=fake-model", *SMALL]
    if where == "option":
        result = run_session([*argv, "--snap-timeout=1"], root=project.root)
    else:
        result = run_session(argv, root=project.root, ini={"snap_timeout": "1"})
    notes = list(result.retried.values())
    assert outcomes(result) == {"passed": SMALL_SIZE}
    assert sorted(o.attempts for o in observations(project))[-1] >= 2
    assert any("timeout" in note for note in notes), notes


class _Declared:
    """Where the options are declared: each flag's attributes (what ``--help`` lists)."""

    def __init__(self) -> None:
        self.options: dict[str, dict[str, Any]] = {}

    def addoption(self, *flags: str, **attributes: Any) -> None:
        for flag in flags:
            self.options[flag] = attributes

    def addini(self, name: str, help: str, type: Any = None, default: Any = None) -> None:
        pass


def test_the_timeout_option_is_listed_and_checked(project: BenchProject) -> None:
    declared = _Declared()
    declare_options(declared, declared)
    assert declared.options["--snap-timeout"]["metavar"] == "SECONDS"  # --help: --snap-timeout=SECONDS
    with pytest.raises(ValueError, match="--snap-timeout"):
        project.session("--model=fake-model", "--snap-timeout=0")
