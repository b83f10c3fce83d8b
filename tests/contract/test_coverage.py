"""A budget-limited run under xdist, as pytest shows it: the budget is the session's, shared by the workers (two
requests in all), the conditions it left unasked are skipped (never failed), the checks not judged, and the HTML
report carries the INCOMPLETE badge with the coverage. What the session decides is tests/session/test_coverage.py's."""

from __future__ import annotations

from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer

SMALL = ("--snap-items=M01", "--snap-prompts=NEU", "--snap-temperatures=0", "--snap-runs=1")
SMALL_SIZE = 6


def test_a_budget_limited_run_under_xdist_is_incomplete_in_pytests_outcomes_and_the_report(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    result = bench.run("--model=fake-model", *SMALL, "--snap-max-requests=2", "-n", "2", gate=True)
    assert result.ret == 6  # could not measure
    assert len(fake_server.script.requests) == 2
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0  # no check was judged on a third of the design
    assert outcomes["skipped"] >= SMALL_SIZE - 2  # the 4 not asked
    result.stdout.fnmatch_lines(["* not judged*"])  # and the checks, never passed
    result.stdout.fnmatch_lines(
        [
            "*fake-model: INCOMPLETE*",
            "fake-model: INCOMPLETE: 2/6 conditions answered (4 budget spent)",
            "exit status 6: could not measure*",
        ]
    )
    html = (bench.out / "report.html").read_text(encoding="utf-8")
    assert "snap-badge-incomplete" in html
    assert "2/6 conditions answered (4 budget spent)" in html
