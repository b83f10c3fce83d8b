"""The controller cuts a benchmark report's observation down to its answer code once every plugin has read it
(snap_bench.plugin.reporting): not before its teardown report, when pytest-html draws the row."""

from __future__ import annotations

from typing import Any

import pytest

from snap_bench.plugin.reporting import ReportSlimmer, in_conditions_table, is_unscored
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE, QUESTION_ATTRIBUTE

NODEID = "benchmarks/test_profile.py::test_likert[m-M01-P1-NEU-t0-C0-r1]"


def _report(when: str, observation: dict[str, Any] | None = None, outcome: str = "passed") -> pytest.TestReport:
    location = ("benchmarks/test_profile.py", 1, "test_likert")
    keywords = {"test_likert[m-M01-P1-NEU-t0-C0-r1]": 1, "instrument": 1, "benchmarks": 1}
    report = pytest.TestReport(NODEID, location, keywords, outcome, None, when)  # type: ignore[arg-type]
    if observation is not None:
        setattr(report, OBSERVATION_ATTRIBUTE, observation)
        setattr(report, QUESTION_ATTRIBUTE, "It is wrong to harm an innocent person.")
    return report


def _through_every_plugin(slimmer: ReportSlimmer, report: pytest.TestReport) -> None:
    """What pluggy does with the wrapper: run it up to its yield, let the other plugins read, resume it."""
    wrapper = slimmer.pytest_runtest_logreport(report)
    next(wrapper)
    with pytest.raises(StopIteration):
        wrapper.send(None)


def test_the_observation_stays_whole_until_the_teardown_then_only_its_code_is_kept() -> None:
    slimmer = ReportSlimmer()
    observation = {"model": "m", "code": -1, "reason": "refused", "messages": [{"role": "user", "content": "q"}]}
    setup, call, teardown = _report("setup"), _report("call", observation), _report("teardown")
    _through_every_plugin(slimmer, setup)
    _through_every_plugin(slimmer, call)
    assert getattr(call, OBSERVATION_ATTRIBUTE) == observation  # pytest-html has not drawn the row yet
    assert hasattr(call, QUESTION_ATTRIBUTE)
    assert call.keywords
    _through_every_plugin(slimmer, teardown)
    assert getattr(call, OBSERVATION_ATTRIBUTE) == {"code": -1}
    assert not hasattr(call, QUESTION_ATTRIBUTE)
    # keywords are read afterwards only of a skipped test (the terminal's folded skips)
    assert [report.keywords for report in (setup, call, teardown)] == [{}, {}, {}]
    assert len({id(report.keywords) for report in (setup, call, teardown)}) == 1  # one mapping, not one each
    # what is asked of the report afterwards still reads the same
    assert is_unscored(call)
    assert in_conditions_table(call)


def test_a_scored_answer_keeps_its_none_code_and_a_report_without_an_observation_is_left_alone() -> None:
    slimmer = ReportSlimmer()
    scored = _report("call", {"model": "m", "code": None, "messages": []})
    _through_every_plugin(slimmer, scored)
    _through_every_plugin(slimmer, _report("teardown"))
    assert getattr(scored, OBSERVATION_ATTRIBUTE) == {"code": None}
    assert not is_unscored(scored)
    other = _report("call")
    _through_every_plugin(slimmer, other)
    _through_every_plugin(slimmer, _report("teardown"))
    assert not hasattr(other, OBSERVATION_ATTRIBUTE)
    assert other.keywords  # not a benchmark condition: left as pytest made it


def test_a_skipped_condition_keeps_its_keywords() -> None:
    slimmer = ReportSlimmer()
    skipped = _report("call", {"model": "m", "code": None}, outcome="skipped")
    _through_every_plugin(slimmer, skipped)
    _through_every_plugin(slimmer, _report("teardown"))
    assert "instrument" in skipped.keywords
