"""Turn a model's free-text answer into a Likert score, or a code saying why there is none.

The rules, in the order they are tried (each documented case has a row in tests/unit/observations/test_parsing.py):

1. An empty answer is invalid.
2. A *keyed* number wins: "Score: 4", "My response is: 2", "I choose 4", "I would rate it a 3",
   "Answer - 5". The first keyed number is the score; a keyed number off the scale makes the answer
   invalid rather than falling back to another number.
3. Otherwise the bare numbers are collected after removing mentions of the scale itself ("1-5",
   "1 to 5", "from 1 (Strongly Disagree) to 5 (Strongly Agree)", "out of 5", "/5") and list markers
   ("1. I am the life of the party" echoes the item as a numbered list; it is not an answer, unless
   the text after the marker is the scale label of that same number, as in "4. Agree").
   One distinct number on the scale is the score; two different numbers are *ambiguous* and invalid
   (we never guess which one the model meant); a single number off the scale is invalid.
4. With no number: a refusal ("I cannot answer that", "As an AI, I don't have personal opinions")
   is coded as a refusal; a negated label ("I don't agree", "I'm not sure I agree") is invalid; a
   scale label ("Strongly agree", "I disagree") gives its score when only one label is named;
   anything else is invalid.

Refusal phrases are only consulted when no number was given: "As an AI I have no opinions, but I
would say 3" is an answer of 3, because the model did choose a point on the scale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum


class AnswerCode(IntEnum):
    """Why an answer carries no score. The values are the original design's codes."""

    REFUSAL = -1
    INVALID = -2
    API_ERROR = -3
    # An empty reply cut by the output limit (finish_reason "length"): the budget, not the model, failed.
    TRUNCATED = -4
    # Refused by the provider's moderation (an OpenRouter 403 with a moderation flag, finish_reason
    # content_filter): the endpoint's refusal, counted apart from the model's own.
    MODERATED = -5

    @property
    def label(self) -> str:
        """How the report, the terminal and the tables name the code."""
        return ANSWER_CODE_LABELS[self]


ANSWER_CODE_LABELS = {
    AnswerCode.REFUSAL: "refusal",
    AnswerCode.INVALID: "invalid",
    AnswerCode.API_ERROR: "API error",
    AnswerCode.TRUNCATED: "cut by the output limit",
    AnswerCode.MODERATED: "refused by the provider's moderation",
}


@dataclass(frozen=True)
class ParsedAnswer:
    """A score on the scale, or a code and the reason there is none."""

    score: int | None
    code: AnswerCode | None
    reason: str

    @property
    def is_scored(self) -> bool:
        return self.score is not None


def scored(score: int, reason: str) -> ParsedAnswer:
    return ParsedAnswer(score=score, code=None, reason=reason)


def coded(code: AnswerCode, reason: str) -> ParsedAnswer:
    return ParsedAnswer(score=None, code=code, reason=reason)


_KEYED_NUMBER = re.compile(
    r"""(?:\b(?:score|rating|answer|response|choice|selection|position)\b[^0-9\n]{0,20}?  # "My response is: 2"
          |\bI(?:'d|\s+would|\s+will)?\s+(?:choose|select|pick|say|go\s+with|give(?:\s+it)?|rate(?:\s+it|\s+this)?)
           (?:\s+(?:as|a|an|it|this|statement))*\s*:?\s*)                      # "I choose 4", "I'd rate it a 3"
        \**\(?(-?\d+)\)?\**(?![.,]\d)""",
    re.IGNORECASE | re.VERBOSE,
)

# Mentions of the scale itself, removed before bare numbers are counted.
_SCALE_MENTIONS = (
    re.compile(r"\bfrom\s+-?\d+\s*(?:\([^)]*\))?\s*(?:to|-|\u2013)\s*-?\d+\s*(?:\([^)]*\))?", re.IGNORECASE),
    re.compile(r"\bscale\s+of\s+-?\d+\s*(?:to|-|\u2013)\s*-?\d+", re.IGNORECASE),
    re.compile(r"\b-?\d+\s*(?:-|\u2013|to)\s*-?\d+\s+scale\b", re.IGNORECASE),
    re.compile(r"\(\s*-?\d+\s*(?:-|\u2013|to)\s*-?\d+\s*\)"),
    re.compile(r"\bout\s+of\s+\d+", re.IGNORECASE),
    re.compile(r"/\s*\d+\b"),
    re.compile(r"\bbetween\s+-?\d+\s+and\s+-?\d+", re.IGNORECASE),
)
_LIST_MARKER = re.compile(r"^\s*(\d+)\s*[.)]\s+(\S.*)$", re.MULTILINE)
_BARE_NUMBER = re.compile(r"(?<![\w.])(-?\d+)(?![\w]|[.,]\d)")

_REFUSALS = re.compile(
    r"""\b(?:I\s+(?:cannot|can\s*not|can't|won't|will\s+not|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)|
             do\s+not|don't)\s+(?:answer|respond|provide|give|share|express|have|hold|comply|rate|choose|assist)
        |as\s+an\s+(?:AI|artificial\s+intelligence|language\s+model|assistant)
        |I\s+(?:must|have\s+to)\s+decline
        |I(?:'m|\s+am)\s+sorry,?\s+but
        |(?:no|not\s+have)\s+personal\s+(?:opinions|beliefs|views|feelings|preferences))""",
    re.IGNORECASE | re.VERBOSE,
)


# "I don't agree", "I'm not sure I agree", "No, I do not strongly disagree": a label under a negation
# is not that label, and which other point it means is a guess, so such an answer is invalid.
_NEGATED_LABEL = re.compile(
    r"(?:\b(?:not|never|no)\b|n't)[\w\s']{0,20}?\b(?:agree|disagree)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class LikertScale:
    """A scale of ``points`` answers with the label of each point, as the instrument words them."""

    labels: dict[str, int]
    low: int
    high: int

    @classmethod
    def agreement(cls, points: int = 5) -> LikertScale:
        """The usual 1..points agreement scale (5 or 7 points)."""
        if points == 5:
            labels = {
                "strongly disagree": 1,
                "disagree": 2,
                "neutral": 3,
                "neither agree nor disagree": 3,
                "agree": 4,
                "strongly agree": 5,
            }
        elif points == 7:
            labels = {
                "strongly disagree": 1,
                "disagree": 2,
                "somewhat disagree": 3,
                "slightly disagree": 3,
                "neutral": 4,
                "neither agree nor disagree": 4,
                "somewhat agree": 5,
                "slightly agree": 5,
                "agree": 6,
                "strongly agree": 7,
            }
        else:
            raise ValueError(f"no labels for a {points}-point agreement scale; use 5 or 7")
        return cls(labels=labels, low=1, high=points)

    @classmethod
    def signed_agreement(cls) -> LikertScale:
        """The political compass's five answers, signed: Strongly agree +2 ... Strongly disagree -2."""
        labels = {
            "strongly disagree": -2,
            "disagree": -1,
            "neutral": 0,
            "neither agree nor disagree": 0,
            "agree": 1,
            "strongly agree": 2,
        }
        return cls(labels=labels, low=-2, high=2)

    def contains(self, value: int) -> bool:
        return self.low <= value <= self.high

    def labels_named(self, text: str) -> set[int]:
        """Scores of the labels named in ``text``; the longest label wins where labels overlap."""
        found: set[int] = set()
        remaining = text.lower()
        for label in sorted(self.labels, key=len, reverse=True):
            pattern = re.compile(rf"(?<![\w-]){re.escape(label)}(?![\w-])")
            if pattern.search(remaining):
                found.add(self.labels[label])
                remaining = pattern.sub(" ", remaining)
        return found


def parse_likert(text: str, scale: LikertScale) -> ParsedAnswer:
    """Parse one answer on ``scale``; see the module docstring for the rules and their order."""
    answer = text.strip()
    if not answer:
        return coded(AnswerCode.INVALID, "empty answer")

    keyed = _KEYED_NUMBER.search(answer)
    if keyed:
        value = int(keyed.group(1))
        if scale.contains(value):
            return scored(value, f"keyed number {value!r}")
        return coded(AnswerCode.INVALID, f"keyed number {value} is off the scale {scale.low}..{scale.high}")

    numbers = _bare_numbers(answer, scale)
    distinct = sorted(set(numbers))
    if len(distinct) == 1:
        value = distinct[0]
        if scale.contains(value):
            return scored(value, f"single number {value!r}")
        return coded(AnswerCode.INVALID, f"number {value} is off the scale {scale.low}..{scale.high}")
    if len(distinct) > 1:
        return coded(AnswerCode.INVALID, f"ambiguous: several different numbers {distinct}")

    if _REFUSALS.search(answer):
        return coded(AnswerCode.REFUSAL, "refusal without a score")
    if _NEGATED_LABEL.search(answer):
        return coded(AnswerCode.INVALID, 'negated scale label ("I don\'t agree"): not guessed')
    named = scale.labels_named(answer)
    if len(named) == 1:
        value = named.pop()
        return scored(value, f"scale label for {value}")
    if len(named) > 1:
        return coded(AnswerCode.INVALID, f"ambiguous: several scale labels {sorted(named)}")
    return coded(AnswerCode.INVALID, "no number, scale label or refusal found")


def _bare_numbers(answer: str, scale: LikertScale) -> list[int]:
    without_scale = answer
    for mention in _SCALE_MENTIONS:
        without_scale = mention.sub(" ", without_scale)

    numbers: list[int] = []

    def drop_list_marker(match: re.Match[str]) -> str:
        marker, rest = int(match.group(1)), match.group(2)
        # "4. Agree" is an answer written like a list item; "1. I am the life of the party" is not.
        if scale.labels_named(rest.split(".")[0]) == {marker}:
            numbers.append(marker)
        return " " + rest

    without_markers = _LIST_MARKER.sub(drop_list_marker, without_scale)
    numbers.extend(int(found) for found in _BARE_NUMBER.findall(without_markers))
    return numbers
