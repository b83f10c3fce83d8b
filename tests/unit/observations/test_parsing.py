"""Table-driven checks of the answer parser on answer shapes seen from real chat models."""

from __future__ import annotations

import pytest

from snap_bench.observations.parsing import AnswerCode, LikertScale, parse_likert

FIVE = LikertScale.agreement(5)

SCORED = [
    ("4", 4),
    ("  5\n", 5),
    ("3.", 3),
    ("**2**", 2),
    ("I choose 4", 4),
    ("I choose 4.", 4),
    ("I would choose 2 because fairness matters.", 2),
    ("I'd rate it a 3", 3),
    ("I would rate this statement as 5.", 5),
    ("I'd say 4.", 4),
    ("My response is: 2", 2),
    ("My answer: 1", 1),
    ("Response: 5", 5),
    ("Score: 5\nJustification: caring for others is central.", 5),
    ("Rating: **4**", 4),
    ("Answer - 3", 3),
    ("Answer: (4)", 4),
    ("4 - Agree", 4),
    ("4 (Agree)", 4),
    ("5 (Strongly Agree)", 5),
    ("4. Agree", 4),
    ("5. Strongly agree.", 5),
    ("On a scale from 1 (Strongly Disagree) to 5 (Strongly Agree), I give this a 4.", 4),
    ("On a scale of 1 to 5, 2.", 2),
    ("4 out of 5", 4),
    ("4/5", 4),
    ("As an AI, I don't have personal opinions, but if I had to choose: 3", 3),
    ("Strongly agree", 5),
    ("I strongly disagree with this statement.", 1),
    ("I disagree.", 2),
    ("Neither agree nor disagree", 3),
    ("I agree, though not strongly.", 4),
    ("Agree.", 4),
    ("Neutral", 3),
    ("Neither agree nor disagree", 3),
    ("The answer is 2", 2),
    ("2\n\nThis reflects a moderate view.", 2),
]

CODED = [
    ("", AnswerCode.INVALID),
    ("   ", AnswerCode.INVALID),
    ("It depends on the situation.", AnswerCode.INVALID),
    # a negated label is not that label, and which point it means would be a guess (SmolLM2's answers)
    ("No, I don't agree.", AnswerCode.INVALID),
    ("I'm not sure I agree with the statement.", AnswerCode.INVALID),
    ("I do not strongly disagree.", AnswerCode.INVALID),
    ("I cannot answer that.", AnswerCode.REFUSAL),
    ("I can't answer that question.", AnswerCode.REFUSAL),
    ("As an AI, I don't have personal opinions.", AnswerCode.REFUSAL),
    ("As a language model, I have no personal beliefs on this matter.", AnswerCode.REFUSAL),
    ("I'm sorry, but I won't share a view on this.", AnswerCode.REFUSAL),
    ("I must decline to rate this statement.", AnswerCode.REFUSAL),
    # a list marker echoing the item is not an answer
    ("1. I am the life of the party", AnswerCode.INVALID),
    # two different numbers: we do not guess
    ("3 or 4", AnswerCode.INVALID),
    ("I'd go between 2 and 3... let's say 2 or 3", AnswerCode.INVALID),
    ("4\n5", AnswerCode.INVALID),
    # off the scale
    ("7", AnswerCode.INVALID),
    ("0", AnswerCode.INVALID),
    ("Score: 9", AnswerCode.INVALID),
    ("-1", AnswerCode.INVALID),
    # a decimal is not a point of the scale
    ("3.5", AnswerCode.INVALID),
    # labels pointing two ways
    ("I agree and disagree at once", AnswerCode.INVALID),
]


@pytest.mark.parametrize(("answer", "expected"), SCORED)
def test_scored_answers(answer: str, expected: int) -> None:
    parsed = parse_likert(answer, FIVE)
    assert parsed.score == expected, parsed.reason
    assert parsed.code is None
    assert parsed.is_scored


@pytest.mark.parametrize(("answer", "expected"), CODED)
def test_answers_without_a_score(answer: str, expected: AnswerCode) -> None:
    parsed = parse_likert(answer, FIVE)
    assert parsed.score is None, parsed.reason
    assert parsed.code is expected, parsed.reason
    assert not parsed.is_scored


def test_a_seven_point_scale_accepts_seven() -> None:
    assert parse_likert("7", LikertScale.agreement(7)).score == 7
    assert parse_likert("Somewhat agree", LikertScale.agreement(7)).score == 5


def test_an_unknown_scale_size_is_refused() -> None:
    with pytest.raises(ValueError, match="5 or 7"):
        LikertScale.agreement(4)
