"""A classification task's closed set of labels, and how far a wrong one is from the gold.

Two kinds of label set exist. A *weighted* set gives each label a number on one signed axis (the
sentiment study's polarity weights: very negative -3, negative -2, neutral 0, positive +2, very positive
+3), so a mistake costs its squared distance to the gold (an intensity slip costs 1, the wrong polarity
16) and gold may name only a side of the axis ("polarity" gold: negative or positive). A *nominal* set
has no weights (topics, intents): a label is its position, every wrong label costs 1, and the custom
accuracy is the share of right answers.

Two kinds of gold: ``label`` gold names one label of the set; ``polarity`` gold (weighted sets only)
names ``negative`` or ``positive``, and every label on that side of zero is right.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported on use: the plugin imports the instruments in every worker
    import numpy as np
    import numpy.typing as npt

LABEL_GOLD = "label"
POLARITY_GOLD = "polarity"
GOLD_KINDS = (LABEL_GOLD, POLARITY_GOLD)
# The name the sentiment study's config used for label gold before tasks had their own label sets.
GOLD_SYNONYMS = {"five_class": LABEL_GOLD}
POLARITIES = ("negative", "positive")


@dataclass(frozen=True)
class LabelSet:
    """The labels in the order a prompt lists them (lower case), and their whole-number weights (None: nominal;
    a recorded answer's score is its label's number, so the weights are whole numbers as the scores are)."""

    labels: tuple[str, ...]
    weights: Mapping[str, int] | None = None
    encoding: Mapping[str, int] = field(init=False)

    def __post_init__(self) -> None:
        positions = {label: i for i, label in enumerate(self.labels)}
        encoding = dict(self.weights) if self.weights is not None else positions
        object.__setattr__(self, "encoding", encoding)

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    @property
    def has_polarity(self) -> bool:
        """Whether gold may name a side: weights on both sides of zero."""
        values = self.encoding.values()
        return self.weighted and any(v > 0 for v in values) and any(v < 0 for v in values)

    def gold_labels(self, gold_kind: str) -> tuple[str, ...]:
        """What gold of this kind may say."""
        return self.labels if gold_kind == LABEL_GOLD else POLARITIES

    def label_of(self, value: float) -> str | None:
        return next((label for label, v in self.encoding.items() if v == value), None)

    def gold_interval(self, gold_kind: str, gold: str) -> tuple[float, float]:
        """The values a right answer may have: one label's for label gold, a side's labels' for polarity gold.

        Polarity gold does not say how strong the sentiment is, so "positive" and "very positive" are
        both right for a fresh review, and the error of a wrong answer is its distance to the nearer.
        """
        if gold_kind == LABEL_GOLD:
            value = float(self.encoding[gold])
            return value, value
        values = [float(v) for v in self.encoding.values() if (v > 0 if gold == "positive" else v < 0)]
        return min(values), max(values)

    def max_error(self, gold_kind: str) -> float:
        """The worst penalty the gold allows: 1 for a nominal set; for the sentiment weights 36 (very negative
        for very positive) with label gold, 25 (-3 for [+2, +3]) with polarity gold."""
        if not self.weighted:
            return 1.0
        values = [float(v) for v in self.encoding.values()]
        if gold_kind == LABEL_GOLD:
            return (max(values) - min(values)) ** 2
        worst_for_positive = min(v for v in values if v > 0) - min(values)
        worst_for_negative = max(values) - max(v for v in values if v < 0)
        return max(worst_for_positive, worst_for_negative) ** 2

    def errors(self, values: npt.ArrayLike, low: npt.ArrayLike, high: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Each answer's penalty: its squared distance to the gold interval (weighted), 0 or 1 (nominal)."""
        import numpy as np

        from snap_bench.stats.categorical import interval_squared_errors

        if self.weighted:
            return interval_squared_errors(values, low, high)
        given, low_, high_ = (np.asarray(a, dtype=np.float64) for a in (values, low, high))
        outside: npt.NDArray[np.float64] = ((given < low_) | (given > high_)).astype(np.float64)
        return outside


SENTIMENT = LabelSet(
    ("very negative", "negative", "neutral", "positive", "very positive"),
    # The study's polarity-weighted encoding: polarity mistakes cost more than intensity mistakes.
    {"very negative": -3, "negative": -2, "neutral": 0, "positive": 2, "very positive": 3},
)
