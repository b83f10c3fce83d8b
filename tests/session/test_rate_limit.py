"""A session against a provider's rate limit (tests/fake_rate_limited.py), run in-process: the pace comes from the
provider's headers or its refusals, every condition is answered, few requests are refused, the terminal's pace
line says what pace was found, and --snap-concurrency stays the ceiling of requests in flight. (The pace and the
ceiling shared by xdist's workers: tests/contract/test_rate_limit_xdist.py.)

The bounds hold at any speed: a slow machine only sends more slowly than the limit allows."""

from __future__ import annotations

import re
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

import pytest

from snap_bench.asking.pacing import PaceSettings
from snap_bench.session.run import SessionResult
from tests.conftest import FAKE_KEY, SLICE, SLICE_SIZE, BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.fake_rate_limited import FakeRateLimit, rate_limited_server
from tests.session.asking_checks import observations, outcomes, pace_lines

# 10 requests a second: the slice's 18 conditions take about two seconds at the limit.
PER_MINUTE = 600


@pytest.fixture
def limited(request: pytest.FixtureRequest) -> Iterator[tuple[FakeOpenAIServer, FakeRateLimit]]:
    style, per_minute, latency_s = request.param
    server, limit = rate_limited_server(per_minute, style, latency_s=latency_s)
    with server:
        yield server, limit
    assert not server.script.errors


def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: FakeOpenAIServer) -> BenchProject:
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    root = tmp_path / "project"
    root.mkdir()
    return BenchProject(root, server.base_url)


def pace_line(result: SessionResult) -> str:
    """The terminal summary's pace line of fake-model."""
    lines = pace_lines(result)
    assert len(lines) == 1, lines
    return lines[0]


def refused_said(line: str) -> int:
    """The count of refused requests the terminal's pace line states."""
    found = re.search(r"pace: fake-model: .*; (\d+) requests? refused \(429\)", line)
    assert found is not None, line
    return int(found.group(1))


@pytest.mark.parametrize(
    "limited",
    [("openai", PER_MINUTE, 0.05), ("anthropic", PER_MINUTE, 0.05)],
    indirect=True,
    ids=["openai", "anthropic"],
)
def test_a_run_at_a_stated_limit_is_paced_by_the_headers_and_answers_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: tuple[FakeOpenAIServer, FakeRateLimit]
) -> None:
    server, limit = limited
    bench = project(tmp_path, monkeypatch, server)
    result = bench.session("--model=fake-model", *SLICE, "--snap-concurrency=8")
    assert outcomes(result) == {"passed": SLICE_SIZE}
    written = observations(bench)
    assert len(written) == SLICE_SIZE
    assert all(o.score == 4 for o in written)  # no condition became an API error
    assert limit.admitted == SLICE_SIZE  # each condition answered once
    # Paced a little under the stated rate from the first answer on: the bucket's second's worth absorbs what
    # a busy machine bunches together, so a refusal would be a pacing defect ("few": at most 2).
    assert limit.refused <= 2
    line = pace_line(result)
    assert refused_said(line) == limit.refused
    paced = PER_MINUTE * PaceSettings().margin  # a little under the stated rate
    assert fnmatch(line, f"pace: fake-model: paced at {paced:.0f} req/min from the provider's headers; *"), line


@pytest.mark.parametrize("limited", [("none", 240, 0.0)], indirect=True, ids=["no-headers"])
def test_a_limit_stated_only_by_refusals_loses_no_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: tuple[FakeOpenAIServer, FakeRateLimit]
) -> None:
    server, limit = limited
    bench = project(tmp_path, monkeypatch, server)
    result = bench.session("--model=fake-model", *SLICE, "--snap-concurrency=8")
    assert outcomes(result) == {"passed": SLICE_SIZE}
    # Every refused request was asked again (Retry-After, then the pace) until answered: nothing lost.
    assert all(o.score == 4 for o in observations(bench))
    assert limit.admitted == SLICE_SIZE
    line = pace_line(result)
    assert refused_said(line) == limit.refused
    if limit.refused:
        # Found from a sustained pattern of refusals; a few sporadic ones (a busy machine's timing) find no limit.
        found = re.search(r"pace: fake-model: (.*);", line)
        assert found is not None
        assert re.fullmatch(r"paced at \d+ req/min after refusals|not paced \(.*sporadic, no limit\)", found[1])


@pytest.mark.parametrize("limited", [("openai", 60_000, 0.3)], indirect=True, ids=["generous"])
def test_snap_concurrency_stays_the_ceiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: tuple[FakeOpenAIServer, FakeRateLimit]
) -> None:
    server, limit = limited
    bench = project(tmp_path, monkeypatch, server)
    assert outcomes(bench.session("--model=fake-model", *SLICE, "--snap-concurrency=2")) == {"passed": SLICE_SIZE}
    assert limit.admitted == SLICE_SIZE
    # A limit of 1,000 a second allows far more; the ceiling does not.
    assert server.script.max_in_flight <= 2


@pytest.mark.parametrize("limited", [("openai", 60_000, 0.0)], indirect=True, ids=["generous"])
def test_a_fixed_pace_keeps_the_concurrency_of_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limited: tuple[FakeOpenAIServer, FakeRateLimit]
) -> None:
    server, limit = limited
    # The first requests are held until 4 are in flight: no slow start under --snap-pace=fixed.
    server.script.hold_until = 4
    bench = project(tmp_path, monkeypatch, server)
    result = bench.session("--model=fake-model", *SLICE, "--snap-concurrency=4", "--snap-pace=fixed")
    assert outcomes(result) == {"passed": SLICE_SIZE}
    assert server.script.max_in_flight == 4
    assert limit.admitted == SLICE_SIZE
    assert pace_line(result) == "pace: fake-model: not adapted (--snap-pace=fixed); 0 requests refused (429)"
