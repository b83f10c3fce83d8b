"""Each threshold check is a pytest test outcome, under xdist: its line in the terminal, its test case (with its
figures as properties) in the JUnit XML, its row in the HTML report, whose counts are the terminal's. One pytest
run asks the fake server; what the checks decide is tests/session/test_gate.py's."""

from __future__ import annotations

import html
import re

import pytest

from tests.conftest import BenchProject
from tests.fake_openai_server import FakeOpenAIServer
from tests.session.gate_projects import statement_score

# Two moral and two personality items, one prompt, two temperatures: 2x3x1x2x2x3 + 2x3x1x2x1x3 = 108 conditions.
SLICE = ("--snap-items=M01,M02,P01,P03", "--snap-prompts=NEU", "--snap-temperatures=0,1", "--snap-resamples=200")
SLICE_SIZE = 108


def test_each_threshold_is_a_test_outcome_in_the_terminal_junit_and_html_under_xdist(
    bench: BenchProject, fake_server: FakeOpenAIServer
) -> None:
    fake_server.script.answer = statement_score
    junit = bench.root / "junit.xml"
    result = bench.run("--model=fake-model", *SLICE, "-n", "2", f"--junitxml={junit}", "-rA", gate=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    for line in (
        "FAILED snap-bench::thresholds[[]fake-model-profile-dependability[[]t0[]][]]*",
        "FAILED snap-bench::thresholds[[]fake-model-profile-dependability[[]t1[]][]]*",
        "PASSED snap-bench::thresholds[[]fake-model-profile-unscored_rate[]]",
    ):
        result.stdout.fnmatch_lines([line])
    result.stdout.fnmatch_lines(["exit status 1: * threshold check(s) failed*"])
    xml = junit.read_text(encoding="utf-8")
    assert 'name="thresholds[fake-model-profile-dependability[t1]]"' in xml
    # the original design's figures are reported, not judged
    assert 'name="thresholds[fake-model-profile-icc2_1]"' not in xml
    # every check carries its figures as JUnit properties, a passing one too
    scored = re.search(r'name="thresholds\[fake-model-profile-unscored_rate\]".*?</testcase>', xml, re.S)
    assert scored is not None
    assert '<property name="decision" value="pass"' in scored.group(0)
    assert re.search(r'<property name="value" value="0(\.0)?"', scored.group(0))
    assert f'<property name="n_designed" value="{SLICE_SIZE}"' in scored.group(0)
    # the HTML report has the checks as rows (in its data) and as a table, and counts what the terminal counts
    report = (bench.out / "report.html").read_text(encoding="utf-8")
    assert "snap-bench::thresholds[fake-model-profile-dependability[t0]]" in html.unescape(report)
    assert 'id="snap-check-fake-model-profile-dependability[t0]"' in report
    counts = {label.lower(): int(n) for n, label in re.findall(r">(\d+) (Failed|Passed|Unscored),?<", report)}
    terminal = result.parseoutcomes()
    assert counts == {outcome: terminal.get(outcome, 0) for outcome in ("failed", "passed", "unscored")}
