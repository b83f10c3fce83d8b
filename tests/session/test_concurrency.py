"""--snap-concurrency (and models.yaml's concurrency), the session run in-process: several requests in flight per
model, with the live path's guarantees: each condition asked once, recordings written as answers arrive, an
interrupt stops the asking and keeps whole recordings, Retry-After, the request budget as a hard cap, and stops.
(Across xdist's workers, and a kill -9: tests/contract/test_concurrency_xdist.py.)"""

from __future__ import annotations

import json
from collections import deque
from fnmatch import fnmatch

import pytest

from snap_bench.asking.interruption import InterruptFlag
from snap_bench.session.settings import UsageProblem
from tests.conftest import SLICE, SLICE_SIZE, BenchProject
from tests.fake_openai_server import Failure, FakeOpenAIServer
from tests.session.asking_checks import asked, bodies, exit_line, observations, outcomes

INTERRUPTED = 2  # pytest.ExitCode.INTERRUPTED, which the session keeps


def test_every_condition_is_asked_once_with_up_to_n_in_flight(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    # The first requests are held until 4 are in flight at once: asking one at a time would never get there. The
    # fixed pace sends all 4 from the first request (the adaptive pace starts at one and grows to the ceiling as
    # answers come: tests/session/test_rate_limit.py).
    fake_server.script.hold_until = 4
    result = project.session("--model=fake-model", *SLICE, "--snap-concurrency=4", "--snap-pace=fixed")
    assert outcomes(result) == {"passed": SLICE_SIZE}
    assert fake_server.script.max_in_flight == 4
    assert sorted(asked(fake_server)) == sorted(bodies(project.cassettes).values())
    written = observations(project)
    assert len(written) == SLICE_SIZE
    assert not any(o.replayed for o in written)
    assert all(o.score == 4 for o in written)
    # Every recording replays: the second run sends nothing.
    assert outcomes(project.session("--model=fake-model", *SLICE, "--snap-concurrency=4")) == {"passed": SLICE_SIZE}
    assert len(fake_server.script.requests) == SLICE_SIZE
    assert all(o.replayed for o in observations(project))


def test_concurrency_from_models_yaml_and_a_bad_value_named(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    models = project.root / "config" / "models.yaml"
    models.write_text(
        models.read_text(encoding="utf-8").replace("    id: fake/model\n", "    id: fake/model\n    concurrency: 3\n")
    )
    fake_server.script.hold_until = 3
    assert outcomes(project.session("--model=fake-model", *SLICE, "--snap-pace=fixed")) == {"passed": SLICE_SIZE}
    assert fake_server.script.max_in_flight == 3
    models.write_text(models.read_text(encoding="utf-8").replace("concurrency: 3", "concurrency: 2.5"))
    with pytest.raises(UsageProblem) as problem:
        project.session("--model=fake-model", *SLICE)
    assert fnmatch(str(problem.value), "*models.yaml*concurrency*whole number*"), problem.value


def test_the_request_budget_stays_a_hard_cap_with_many_in_flight(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.failures = deque([Failure(503, retry_after="0")] * 200)
    limit = 5
    # The fixed pace: 8 in flight from the first request (the adaptive window grows only with answers, and there
    # are none here).
    many = ("--snap-concurrency=8", "--snap-pace=fixed")
    result = project.session("--model=fake-model", *SLICE, *many, f"--snap-max-requests={limit}")
    assert len(fake_server.script.requests) <= limit
    assert outcomes(result) == {"skipped": SLICE_SIZE}


def test_retry_after_is_honoured_and_the_attempts_are_recorded_in_order(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.failures = deque([Failure(429, retry_after="0"), Failure(503, retry_after="0")])
    assert outcomes(project.session("--model=fake-model", *SLICE, "--snap-concurrency=4")) == {"passed": SLICE_SIZE}
    assert len(fake_server.script.requests) == SLICE_SIZE + 2
    codes = sorted(
        [i["response"]["status"]["code"] for i in json.loads(path.read_text(encoding="utf-8"))["interactions"]]
        for path in project.cassettes.rglob("*.json")
    )
    # Each failed attempt sits before the answer that followed it, in its condition's own recording.
    assert codes.count([200]) == SLICE_SIZE - 2 or codes.count([200]) == SLICE_SIZE - 1
    assert all(attempts[-1] == 200 and all(code != 200 for code in attempts[:-1]) for attempts in codes)
    assert sum(len(attempts) for attempts in codes) == SLICE_SIZE + 2
    for path in project.cassettes.rglob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert "authorization" not in text.lower()
        assert "sk-fake" not in text


def test_a_refused_key_stops_the_model_with_many_in_flight(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.failures = deque([Failure(401)] * 200)
    result = project.session("--model=fake-model", *SLICE, "--snap-concurrency=4", "--snap-max-attempts=1")
    # Two hopeless conditions stop the model; at most the other requests already in flight went out.
    assert len(fake_server.script.requests) <= 2 + 4
    assert outcomes(result) == {"unscored": SLICE_SIZE}
    assert fnmatch(exit_line(result), "*fake-model stopped at*")
    assert not list(project.cassettes.rglob("*.json"))


def test_an_interrupt_stops_asking_keeps_whole_recordings_and_resumes(
    project: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    """Ctrl-C as every process of the session sees it: the flag the signal's process raises, looked at before each
    request (snap_bench.asking.interruption). The signal itself, which also ends the wait for the requests in
    flight: tests/contract/test_concurrency_xdist.py."""
    concurrency = 4
    flagged: list[int] = []

    def interrupt(number: int) -> None:
        if number >= 6 and not flagged:
            flagged.append(number)
            InterruptFlag(project.out).raise_flag()

    fake_server.script.on_request = interrupt
    result = project.session("--model=fake-model", *SLICE, f"--snap-concurrency={concurrency}")
    assert result.exit_status == INTERRUPTED
    # Nothing sent once the flag was up: the 6th request and at most the others already in flight.
    assert len(fake_server.script.requests) <= 6 + concurrency - 1
    recorded = bodies(project.cassettes)  # every file left behind is a whole cassette
    assert len(recorded) <= len(fake_server.script.requests) < SLICE_SIZE
    assert not list(project.cassettes.rglob("*.tmp"))
    first_run = len(fake_server.script.requests)
    fake_server.script.on_request = None
    result = project.session("--model=fake-model", *SLICE, f"--snap-concurrency={concurrency}")
    assert outcomes(result) == {"passed": SLICE_SIZE}
    # Each missing condition asked once, and nothing recorded asked again.
    asked_again, missing = len(fake_server.script.requests) - first_run, SLICE_SIZE - len(recorded)
    assert asked_again == missing
    after = bodies(project.cassettes)
    assert all(after[name] == body for name, body in recorded.items())


def test_concurrency_option_value_is_checked(project: BenchProject) -> None:
    with pytest.raises(ValueError, match=r"--snap-concurrency.*0.*whole number"):
        project.session("--model=fake-model", "--snap-concurrency=0")
