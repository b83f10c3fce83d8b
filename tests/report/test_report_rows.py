"""observation_html: the extra of one benchmark test's row."""

from __future__ import annotations

import dataclasses
import html

import pytest

from snap_bench.observation import Observation
from snap_bench.report import observation_html
from tests.report.fake_data import XSS_PAYLOADS, fake_observations


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
    markup = observation_html(observation)
    for expected in (
        "Fake system prompt NEU.",
        "Fake statement M01, paraphrase P1. Answer 1-5.",
        "4 - mostly agree",
        "<b>item</b> M01 (care)",
        "<b>score</b> 4",
        "<b>keyed</b> 2",  # reversed item
        "<b>code</b> scored",
        "<b>latency</b> 1.234 s",
        "<b>replayed</b> yes",
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
    markup = observation_html(failed)
    assert "-3 (API error)" in markup
    assert "timeout" in markup
    assert "(no answer)" in markup
    assert "<b>replayed</b> no, asked live" in markup
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
    markup = observation_html(poisoned)
    assert payload not in markup
    assert html.escape(payload, quote=True) in markup
    assert "<script" not in markup
    assert "<img" not in markup
    assert "<svg" not in markup


def test_without_messages_only_the_question_is_shown(observation: Observation) -> None:
    markup = observation_html(observation, with_messages=False)
    assert "Fake system prompt" not in markup
    assert html.escape(observation.messages[-1]["content"]) in markup
    assert "4 - mostly agree" in markup
