"""A provider's rate limit met by xdist's workers together, through pytest in a process of its own: the pace the
provider's headers state is shared by the workers (few refusals, every condition answered once), and
--snap-concurrency stays the ceiling of the requests all of them have in flight. The session's own pacing,
in-process: tests/session/test_rate_limit.py."""

from __future__ import annotations

import re

import pytest

from snap_bench.asking.pacing import PaceSettings
from snap_bench.observations.export import read_jsonl
from tests.conftest import FAKE_KEY, SLICE, SLICE_SIZE, BenchProject
from tests.fake_rate_limited import rate_limited_server

# 10 requests a second: the slice's 18 conditions take about two seconds at the limit.
PER_MINUTE = 600


def test_the_workers_share_the_stated_pace_and_the_ceiling_of_requests_in_flight(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Answers taking 0.3 s: keeping 10 a second asks for 3 in flight, one more than the ceiling allows.
    server, limit = rate_limited_server(PER_MINUTE, "openai", latency_s=0.3)
    monkeypatch.setenv("FAKE_OPENAI_KEY", FAKE_KEY)
    with server:
        bench = BenchProject(pytester, server.base_url)
        result = bench.run("--model=fake-model", *SLICE, "--snap-concurrency=2", "-n", "2")
    assert not server.script.errors
    result.assert_outcomes(passed=SLICE_SIZE)
    assert all(o.score == 4 for o in read_jsonl(bench.out / "observations.jsonl"))  # no API error
    assert limit.admitted == SLICE_SIZE  # each condition answered once
    # One pace for both workers, a little under the stated rate: a refusal would be a pacing defect ("few": <= 2).
    assert limit.refused <= 2
    found = re.search(r"pace: fake-model: .*; (\d+) requests? refused \(429\)", result.stdout.str())
    assert found is not None, result.stdout.str()
    assert int(found.group(1)) == limit.refused
    paced = PER_MINUTE * PaceSettings().margin
    result.stdout.fnmatch_lines([f"pace: fake-model: paced at {paced:.0f} req/min from the provider's headers; *"])
    # Two workers, one ceiling: never more than 2 requests in flight at once.
    assert server.script.max_in_flight <= 2
