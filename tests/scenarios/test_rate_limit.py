"""A run against a provider's rate limit (tests/fake_rate_limited.py): the pace comes from the provider's headers
or its refusals, every condition is answered, few requests are refused, the terminal says what pace was found,
and --snap-concurrency stays the ceiling of requests in flight.

The bounds hold at any speed: a slow machine only sends more slowly than the limit allows."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from snap_bench.asking.pacing import PaceSettings
from snap_bench.observations.export import read_jsonl
from tests.conftest import FAKE_KEY, SLICE, SLICE_SIZE, WORKERS, BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.fake_rate_limited import FakeRateLimit, rate_limited_server

# 10 requests a second: the slice's 18 conditions take about two seconds at the limit.
PER_MINUTE = 600


@pytest.fixture
def limited(request: pytest.FixtureRequest) -> Iterator[tuple[FakeOpenAIServer, FakeRateLimit]]:
    style, per_minute, latency_s = request.param
    server, limit = rate_limited_server(per_minute, style, latency_s=latency_s)
    with server:
        yield server, limit
    assert not server.script.errors


def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, server: FakeOpenAIServer) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    return BenchProject(pytester, server.base_url)


def refused_said(output: str) -> int:
    """The count of refused requests the terminal's pace line states."""
    found = re.search(r"pace: fake-model: .*; (\d+) requests? refused \(429\)", output)
    assert found is not None, output
    return int(found.group(1))


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize(
    "limited",
    [("openai", PER_MINUTE, 0.05), ("anthropic", PER_MINUTE, 0.05)],
    indirect=True,
    ids=["openai", "anthropic"],
)
def test_a_run_at_a_stated_limit_is_paced_by_the_headers_and_answers_everything(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    limited: tuple[FakeOpenAIServer, FakeRateLimit],
    workers: tuple[str, ...],
) -> None:
    server, limit = limited
    bench = project(pytester, monkeypatch, server)
    result = bench.run("--model=fake-model", *SLICE, "--snap-concurrency=8", *workers)
    result.assert_outcomes(passed=SLICE_SIZE)
    observations = read_jsonl(bench.out / "observations.jsonl")
    assert len(observations) == SLICE_SIZE
    assert all(o.score == 4 for o in observations)  # no condition became an API error
    assert limit.admitted == SLICE_SIZE  # each condition answered once
    # Paced a little under the stated rate from the first answer on: the bucket's second's worth absorbs what
    # a busy machine bunches together, so a refusal would be a pacing defect ("few": at most 2).
    assert limit.refused <= 2
    assert refused_said(result.stdout.str()) == limit.refused
    paced = PER_MINUTE * PaceSettings().margin  # a little under the stated rate
    result.stdout.fnmatch_lines([f"pace: fake-model: paced at {paced:.0f} req/min from the provider's headers; *"])


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("limited", [("none", 240, 0.0)], indirect=True, ids=["no-headers"])
def test_a_limit_stated_only_by_refusals_loses_no_answer(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    limited: tuple[FakeOpenAIServer, FakeRateLimit],
    workers: tuple[str, ...],
) -> None:
    server, limit = limited
    bench = project(pytester, monkeypatch, server)
    result = bench.run("--model=fake-model", *SLICE, "--snap-concurrency=8", *workers)
    result.assert_outcomes(passed=SLICE_SIZE)
    # Every refused request was asked again (Retry-After, then the pace) until answered: nothing lost.
    assert all(o.score == 4 for o in read_jsonl(bench.out / "observations.jsonl"))
    assert limit.admitted == SLICE_SIZE
    assert refused_said(result.stdout.str()) == limit.refused
    if limit.refused:
        # Found from a sustained pattern of refusals; a few sporadic ones (a busy machine's timing) find no limit.
        line = re.search(r"pace: fake-model: (.*);", result.stdout.str())
        assert line is not None
        assert re.fullmatch(r"paced at \d+ req/min after refusals|not paced \(.*sporadic, no limit\)", line[1])


@pytest.mark.parametrize("workers", WORKERS)
@pytest.mark.parametrize("limited", [("openai", 60_000, 0.3)], indirect=True, ids=["generous"])
def test_snap_concurrency_stays_the_ceiling(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    limited: tuple[FakeOpenAIServer, FakeRateLimit],
    workers: tuple[str, ...],
) -> None:
    server, limit = limited
    bench = project(pytester, monkeypatch, server)
    bench.run("--model=fake-model", *SLICE, "--snap-concurrency=2", *workers).assert_outcomes(passed=SLICE_SIZE)
    assert limit.admitted == SLICE_SIZE
    # A limit of 1,000 a second allows far more; the ceiling does not.
    assert server.script.max_in_flight <= 2


@pytest.mark.parametrize("limited", [("openai", 60_000, 0.0)], indirect=True, ids=["generous"])
def test_a_fixed_pace_keeps_the_concurrency_of_before(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, limited: tuple[FakeOpenAIServer, FakeRateLimit]
) -> None:
    server, limit = limited
    # The first requests are held until 4 are in flight: no slow start under --snap-pace=fixed.
    server.script.hold_until = 4
    bench = project(pytester, monkeypatch, server)
    result = bench.run("--model=fake-model", *SLICE, "--snap-concurrency=4", "--snap-pace=fixed")
    result.assert_outcomes(passed=SLICE_SIZE)
    assert server.script.max_in_flight == 4
    assert limit.admitted == SLICE_SIZE
    result.stdout.fnmatch_lines(["pace: fake-model: not adapted (--snap-pace=fixed); 0 requests refused (429)"])
