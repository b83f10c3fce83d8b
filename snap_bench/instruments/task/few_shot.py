"""Phase 2 of the perturbation design: each model's best baseline variant, and the few-shot examples.

The examples are chosen once, from a pool disjoint from the test samples, by a deterministic
diversity rule, so that every model sees the same examples and a rerun picks them again.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from snap_bench.instruments.task.labelled_data import Sample
from snap_bench.instruments.task.prompt_variants import Variant

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


# The factor of phase 2's conditions: where the examples go (before or after the prompt), and its levels.
EXAMPLES_FACTOR = "examples"
EXAMPLE_POSITIONS = ("pre", "suf")
ACCURACY_WEIGHT = 0.7  # the study's weighted index: 0.7 x variant accuracy + 0.3 x model consistency
TOKEN = re.compile(r"[a-z0-9']+")
# Phase 2's gain is measured on inputs the choice of variant did not see: a seeded half of the test
# samples chooses, the other half measures (choosing and measuring on the same inputs is the winner's curse).
SPLIT_SEED = 20261123


def split_samples(sample_ids: list[str], seed: int = SPLIT_SEED) -> tuple[list[str], list[str]]:
    """(selection half, held-out half) of the sample ids, by a seeded shuffle; each half sorted."""
    import random

    shuffled = sorted(sample_ids)
    random.Random(seed).shuffle(shuffled)
    half = len(shuffled) // 2
    return sorted(shuffled[:half]), sorted(shuffled[half:])


def answered_accuracy(accuracy: float | None, n_scored: int, n_asked: int) -> float:
    """A variant's custom accuracy over every answer asked of it, an unscored answer counted as the worst.

    The worst answer scores 0 on the MSE accuracy, so this is the scored answers' accuracy times their
    share. It ranks the variants (the best one is phase 2's prompt): a variant that gives a label to
    one input in three must not come first for being right on those few.
    """
    if accuracy is None or n_asked == 0:
        return 0.0
    return accuracy * n_scored / n_asked


def variant_index(accuracy: float | None, n_scored: int, n_asked: int, model_consistency: float) -> float:
    """The study's weighted index of one variant: 0.7 x its accuracy + 0.3 x the model's consistency."""
    return ACCURACY_WEIGHT * answered_accuracy(accuracy, n_scored, n_asked) + (1 - ACCURACY_WEIGHT) * model_consistency


@dataclass(frozen=True)
class BestVariant:
    variant: Variant
    weighted_index: float
    custom_accuracy: float | None  # over its scored answers
    consistency: float
    n_scored: int
    n_asked: int

    def to_json(self) -> dict[str, Any]:
        return {
            "variant": self.variant.id,
            "weighted_index": self.weighted_index,
            "custom_accuracy": self.custom_accuracy,
            "consistency": self.consistency,
            "n_scored": self.n_scored,
            "n_asked": self.n_asked,
        }


def tfidf(texts: list[str]) -> npt.NDArray[np.float64]:
    """L2-normalised TF-IDF rows: raw term counts x smooth idf ln((1 + n) / (1 + df)) + 1 (scikit-learn's default)."""
    import numpy as np

    documents = [Counter(TOKEN.findall(text.lower())) for text in texts]
    vocabulary = sorted({term for document in documents for term in document})
    index = {term: column for column, term in enumerate(vocabulary)}
    counts = np.zeros((len(texts), len(vocabulary)))
    for row, document in enumerate(documents):
        for term, count in document.items():
            counts[row, index[term]] = count
    document_frequency = (counts > 0).sum(axis=0)
    weights = counts * (np.log((1 + len(texts)) / (1 + document_frequency)) + 1)
    norms = np.linalg.norm(weights, axis=1, keepdims=True)
    result: npt.NDArray[np.float64] = weights / np.where(norms == 0, 1.0, norms)
    return result


def diverse_examples(pool: list[Sample], per_label: int) -> list[Sample]:
    """``per_label`` examples of every gold label in ``pool``, as different from each other as possible.

    Rule (deterministic): the distance of two texts is the mean of their TF-IDF cosine distance
    (over the whole pool's vocabulary) and their length difference in characters divided by the
    pool's length range, both in [0, 1]. Per label, the first example is the text whose length is
    nearest the label's median length; each next one is the text farthest from those already
    chosen (greedy farthest-point: maximise the smallest distance). Ties go to the smaller id. The
    result comes in rounds of the pool's label order (pos, neg, pos, ...); the prompt shows the
    examples in :func:`seeded_order` instead.
    """
    import numpy as np

    if not pool:
        raise ValueError("no examples to choose from")
    vectors = tfidf([sample.text for sample in pool])
    lengths = np.array([len(sample.text) for sample in pool], dtype=np.float64)
    span = float(lengths.max() - lengths.min()) or 1.0
    distance = 0.5 * (1.0 - vectors @ vectors.T) + 0.5 * np.abs(lengths[:, None] - lengths[None, :]) / span
    chosen_by_label: dict[str, list[int]] = {}
    for label in dict.fromkeys(sample.gold for sample in pool):
        candidates = sorted((i for i, s in enumerate(pool) if s.gold == label), key=lambda i: pool[i].id)
        if len(candidates) < per_label:
            raise ValueError(f"only {len(candidates)} examples labelled {label!r}; {per_label} are needed")
        median = float(np.median(lengths[candidates]))
        chosen = [min(candidates, key=lambda i: (abs(lengths[i] - median), pool[i].id))]
        while len(chosen) < per_label:
            rest = [i for i in candidates if i not in chosen]
            chosen.append(max(rest, key=lambda i: (float(distance[i, chosen].min()), _reverse_id(pool[i].id))))
        chosen_by_label[label] = chosen
    ordered: list[Sample] = []
    for round_index in range(per_label):
        ordered += [pool[chosen[round_index]] for chosen in chosen_by_label.values()]
    return ordered


def seeded_order(examples: list[Sample], seed: int) -> list[Sample]:
    """``examples`` in a random order that ``seed`` fixes (numpy's PCG64): the same for every model and input.

    Not the label rounds of :func:`diverse_examples`: labels that strictly alternate are a pattern a
    model can continue instead of reading the input, and the gain would then measure that pattern.
    """
    import numpy as np

    permutation = np.random.default_rng(seed).permutation(len(examples))
    return [examples[int(index)] for index in permutation]


def _reverse_id(sample_id: str) -> tuple[int, ...]:
    """A key under which max() prefers the smaller id on a tie."""
    return tuple(-ord(character) for character in sample_id)
