"""Sentiment labels parsed from free text: one row per shape of answer models really give."""

from __future__ import annotations

import pytest

from snap_bench.instruments.task.label_set import SENTIMENT
from snap_bench.instruments.task.labels import parse_label
from snap_bench.observations.parsing import AnswerCode

LABELS = SENTIMENT.labels

# (answer, expected label or code). Shapes from the recorded small models and from larger ones.
CASES: list[tuple[str, str | AnswerCode]] = [
    # a bare label, in any case and decoration
    ("Very positive", "very positive"),
    ("very negative", "very negative"),
    ("Neutral", "neutral"),
    ("POSITIVE", "positive"),
    ("**Negative**", "negative"),
    ('"Positive"', "positive"),
    ("Very-Positive", "very positive"),
    ("very_negative", "very negative"),
    ("Positive.", "positive"),
    ("  negative  \n", "negative"),
    # "positive" must never be read out of "very positive", nor the reverse
    ("The sentiment is very positive.", "very positive"),
    ("The sentiment is positive.", "positive"),
    # keyed
    ("Sentiment: Neutral", "neutral"),
    ("Sentiment: very negative", "very negative"),
    ("Answer: positive", "positive"),
    ("Label - negative", "negative"),
    ("The sentiment of the text is very negative.", "very negative"),
    ("The emotion of this text is negative.", "negative"),
    ("This text is classified as very positive.", "very positive"),
    ("I would classify it as positive.", "positive"),
    ("I would categorize this as negative", "negative"),
    ("It is positive.", "positive"),
    ("It's very negative", "very negative"),
    ("Classification: **Very Positive**", "very positive"),
    # intensifiers read as "very"
    ("Extremely negative", "very negative"),
    ("The review is strongly positive.", "very positive"),
    # a leading label wins over what the explanation mentions
    ("Positive. The reviewer praises the film despite a few negative notes.", "positive"),
    ("Negative\n\nThe text criticises the plot; nothing positive is said.", "negative"),
    # a label named once in a sentence
    ("I think this review is mostly positive overall", "positive"),
    ("Overall the tone here reads as neutral to me", "neutral"),
    # negated labels do not count
    ("The review is not negative; it is positive.", "positive"),
    ("This is not positive.", AnswerCode.INVALID),
    # two different labels: ambiguous, never guessed
    ("Either positive or negative, hard to say", AnswerCode.INVALID),
    ("very negative, negative, neutral, positive, very positive", AnswerCode.INVALID),
    ("I'd say between neutral and positive", AnswerCode.INVALID),
    # refusals and nothing usable
    ("I'm sorry, but I can't help with that.", AnswerCode.REFUSAL),
    ("As an AI language model, I cannot determine emotions.", AnswerCode.REFUSAL),
    ("", AnswerCode.INVALID),
    ("   ", AnswerCode.INVALID),
    ("The text describes a movie.", AnswerCode.INVALID),
    ("5", AnswerCode.INVALID),
    # a refusal that names a label still gives it
    ("As an AI I have no feelings, but the sentiment is negative.", "negative"),
    # a label word inside another word is not a label
    ("Positively", AnswerCode.INVALID),
    ("neutrality", AnswerCode.INVALID),
]


@pytest.mark.parametrize(("answer", "expected"), CASES, ids=[repr(answer)[:40] for answer, _ in CASES])
def test_parse_label(answer: str, expected: str | AnswerCode) -> None:
    parsed = parse_label(answer, LABELS)
    if isinstance(expected, AnswerCode):
        assert parsed.label is None, parsed.reason
        assert parsed.code is expected, parsed.reason
    else:
        assert parsed.label == expected, parsed.reason
        assert parsed.code is None


def test_the_reason_says_why_an_answer_is_ambiguous() -> None:
    parsed = parse_label("positive or negative", LABELS)
    assert parsed.reason == "ambiguous: several labels ['negative', 'positive']"


def test_a_smaller_label_set_is_respected() -> None:
    assert parse_label("Very positive", ("negative", "positive")).label == "positive"
    assert parse_label("Neutral", ("negative", "positive")).code is AnswerCode.INVALID
