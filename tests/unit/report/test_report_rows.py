"""observation_log: the extra of one benchmark test's row."""

from __future__ import annotations

import dataclasses
import html

import pytest

from snap_bench.observations.observation import Observation
from snap_bench.report import observation_log
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE, QUESTION_ATTRIBUTE, drop_links_column, row_log
from tests.unit.report.fake_data import XSS_PAYLOADS, fake_observations


@pytest.fixture
def observation() -> Observation:
    first = fake_observations(("fake-model",))[0]
    return dataclasses.replace(
        first,
        raw_answer="4 - mostly agree",
        score=4,
        keyed_score=2.0,
        code=None,
        reason="",
        latency_s=1.234,
        replayed=True,
    )


def test_the_row_shows_what_was_asked_and_what_came_back(observation: Observation) -> None:
    markup = observation_log(observation)
    for expected in (
        "Fake system prompt NEU.",
        "Fake statement M01, paraphrase P1. Answer 1-5.",
        "4 - mostly agree",
        "item M01 (care)",
        "score 4, keyed 2",  # reversed item
        "1.234 s",
        "replayed",
    ):
        assert expected in markup


def test_an_unscored_answer_shows_its_code_and_reason(observation: Observation) -> None:
    failed = dataclasses.replace(
        observation,
        raw_answer=None,
        score=None,
        keyed_score=None,
        code=-3,
        reason="timeout",
        replayed=False,
        attempts=5,
    )
    markup = observation_log(failed)
    assert "code -3 (API error): timeout" in markup
    assert "(no answer)" in markup
    assert "asked live" in markup
    assert "replayed" not in markup
    assert "after 5 attempts" in markup


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_model_output_is_shown_as_text(observation: Observation, payload: str) -> None:
    poisoned = dataclasses.replace(
        observation,
        raw_answer=payload,
        reason=payload,
        model=payload,
        messages=[{"role": payload, "content": payload}],
        construct=payload,
    )
    markup = observation_log(poisoned)
    assert payload not in markup
    assert html.escape(payload, quote=True) in markup
    assert "<script" not in markup
    assert "<img" not in markup
    assert "<svg" not in markup


def test_a_valid_answer_with_its_question_shows_only_the_question(observation: Observation) -> None:
    markup = observation_log(observation, question="Fake statement M01 <b>as written</b>")
    assert "Fake system prompt" not in markup
    assert "asked: Fake statement M01 &lt;b&gt;as written&lt;/b&gt;" in markup
    assert "4 - mostly agree" in markup


def test_an_unscored_answer_shows_the_whole_prompt_even_with_a_question(observation: Observation) -> None:
    failed = dataclasses.replace(observation, score=None, keyed_score=None, code=-2, reason="no number")
    markup = observation_log(failed, question="Fake statement M01")
    assert "Fake system prompt NEU." in markup
    assert "asked:" not in markup


def test_pytest_html_rows_lose_the_links_column_and_benchmark_rows_get_their_text(
    observation: Observation,
) -> None:
    header = ["<th>Result</th>", "<th>Test</th>", "<th>Duration</th>", "<th>Links</th>"]
    row = ['<td class="col-result">Passed</td>', '<td class="col-testId">x</td>', '<td class="col-links"></td>']
    drop_links_column(header)
    drop_links_column(row)
    assert header == ["<th>Result</th>", "<th>Test</th>", "<th>Duration</th>"]
    assert row == ['<td class="col-result">Passed</td>', '<td class="col-testId">x</td>']

    class FakeReport:
        pass

    benchmark = FakeReport()
    setattr(benchmark, OBSERVATION_ATTRIBUTE, observation.to_dict())
    setattr(benchmark, QUESTION_ATTRIBUTE, "The item's own text")
    log = ["[gw0] linux -- Python 3"]
    row_log(benchmark, log)
    assert log == [observation_log(observation, question="The item's own text")]
    other = ["a plain test's own log"]
    row_log(FakeReport(), other)
    assert other == ["a plain test's own log"]


def test_no_line_of_model_text_starts_with_e(observation: Observation) -> None:
    """pytest-html paints log lines starting with "E" as errors; model text is indented."""
    failed = dataclasses.replace(
        observation, raw_answer="Error: none\nEverything", code=-2, score=None, keyed_score=None
    )
    lines = html.unescape(observation_log(failed)).splitlines()
    assert not [line for line in lines if line.startswith("E")]
