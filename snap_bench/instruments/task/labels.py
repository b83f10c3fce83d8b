"""Turn a model's free-text answer into one label of a closed set (the sentiment labels), or a code.

The rules, in the order they are tried (each has rows in tests/test_label_parsing.py):

1. An empty answer is invalid.
2. The text is normalised: lower case, markdown emphasis, quotes and underscores removed, hyphens
   read as spaces ("Very-Positive" is "very positive"), intensifiers read as "very" ("extremely
   negative", "strongly positive" are the extreme labels).
3. A *leading* label wins: an answer whose first line is a label, alone or followed by a sentence
   ("Positive. The reviewer praises..."), is that label, whatever the explanation mentions later.
   A comma does not end it: "negative, neutral, positive" is a list of the options, not an answer.
4. A *keyed* label wins next: "Sentiment: Neutral", "The sentiment is negative.", "Answer - very
   positive", "I would classify it as positive", "the emotion of this text is negative". The first
   keyed label is taken.
5. Otherwise every label named anywhere is collected, longest first, so "very positive" is not also
   read as "positive"; a label right after "not", "neither" or "nor" is not counted ("not negative"
   says what the answer is not). One distinct label is the answer; two or more different labels are
   *ambiguous* and invalid (we never guess which one the model meant).
6. With no label: a refusal ("I'm sorry, but I can't", "As an AI ...") is coded as a refusal;
   anything else is invalid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from snap_bench.observations.parsing import AnswerCode

_INTENSIFIERS = re.compile(r"\b(?:extremely|strongly|highly|really|very\s+very|super|overwhelmingly)\s+")
_DECORATION = re.compile(r"[*_`\"\u201c\u201d\u2018\u2019#]")
_NEGATORS = ("not", "neither", "nor", "isn't", "isnt", "never")
_KEYS = (
    r"(?:sentiment|emotion|label|classification|category|answer|response|rating|prediction|verdict|tone)"
    r"(?:\s+(?:of|for)\s+(?:the|this)\s+(?:text|review|sentence|statement|snippet|above\s+text|following\s+text))?"
    r"\s*(?:is|would\s+be|:|-|=|\u2013)\s*(?:a\s+|an\s+|clearly\s+|likely\s+|probably\s+)?",
    r"\b(?:classify|categori[sz]e|label|rate|evaluate|consider|call|see)\s+(?:it|this|the\s+\w+)\s+as\s+"
    r"(?:a\s+|an\s+|being\s+)?",
    r"\b(?:it|this|that)\s+(?:is|'s|seems|appears|sounds)\s+(?:to\s+be\s+)?(?:a\s+|an\s+|clearly\s+)?",
)
_REFUSAL = re.compile(
    r"""\b(?:I\s+(?:cannot|can\s*not|can't|won't|will\s+not|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable))
             \s+(?:answer|respond|provide|determine|classify|analy[sz]e|evaluate|help|assist|comply|do)
        |as\s+an\s+(?:AI|artificial\s+intelligence|language\s+model|assistant)
        |I\s+(?:must|have\s+to)\s+decline
        |I(?:'m|\s+am)\s+sorry)""",
    re.IGNORECASE | re.VERBOSE,
)


@dataclass(frozen=True)
class ParsedLabel:
    """A label of the set, or a code and the reason there is none."""

    label: str | None
    code: AnswerCode | None
    reason: str


def normalise(text: str) -> str:
    """Lower case, no markdown or quotes, hyphens and underscores as spaces, intensifiers as "very"."""
    lowered = _DECORATION.sub(" ", text.lower()).replace("-", " ")
    lowered = _INTENSIFIERS.sub("very ", lowered)
    return re.sub(r"[ \t]+", " ", lowered)


def parse_label(text: str, labels: Sequence[str]) -> ParsedLabel:
    """Parse ``text`` to one of ``labels`` (lower case, e.g. "very negative"); rules in the module docstring."""
    if not text.strip():
        return ParsedLabel(None, AnswerCode.INVALID, "empty answer")
    ordered = sorted(labels, key=len, reverse=True)  # "very positive" before "positive"
    alternatives = "|".join(re.escape(label) for label in ordered)
    answer = normalise(text).strip()

    first_line = answer.splitlines()[0].strip() if answer else ""
    leading = re.match(rf"^(?:{alternatives})(?=\s*(?:[.!:;)\]]|$))", first_line)
    if leading:
        return ParsedLabel(leading.group(0), None, f"leading label {leading.group(0)!r}")

    for key in _KEYS:
        keyed = re.search(rf"{key}({alternatives})\b", answer)
        if keyed and not _negated(answer, keyed.start(1)):
            return ParsedLabel(keyed.group(1), None, f"keyed label {keyed.group(1)!r}")

    named = _labels_named(answer, ordered)
    if len(named) == 1:
        label = named.pop()
        return ParsedLabel(label, None, f"single label {label!r}")
    if len(named) > 1:
        return ParsedLabel(None, AnswerCode.INVALID, f"ambiguous: several labels {sorted(named)}")
    if _REFUSAL.search(text):
        return ParsedLabel(None, AnswerCode.REFUSAL, "refusal without a label")
    return ParsedLabel(None, AnswerCode.INVALID, "no label or refusal found")


def _negated(answer: str, start: int) -> bool:
    before = answer[:start].split()
    return bool(before) and before[-1] in _NEGATORS


def _labels_named(answer: str, ordered: Sequence[str]) -> set[str]:
    found: set[str] = set()
    remaining = answer
    for label in ordered:
        pattern = re.compile(rf"(?<![\w]){re.escape(label)}(?![\w])")
        for match in pattern.finditer(remaining):
            if not _negated(remaining, match.start()):
                found.add(label)
        remaining = pattern.sub(" # ", remaining)
    return found
