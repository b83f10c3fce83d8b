"""Log-probabilities of an answer over the scale points, where the endpoint returned them.

With ``logprobs: true`` in a model's entry, an OpenAI-compatible endpoint (llama.cpp's server too)
returns, for each answer token, the most likely alternatives. The token that carries the chosen point
tells how sure the model was: the probability of each scale point (renormalised over the points found
among the alternatives), the expected score under it, and the probability of the point it chose.
Nothing is computed where the endpoint sent none, or where the answer token holds no scale point.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from statistics import fmean
from typing import Any

from snap_bench.observations.observation import Observation


def answer_logprobs(instrument: object, content: Sequence[Any] | None, score: int | None) -> dict[str, Any] | None:
    """What observation.logprobs keeps: the answer tokens with their alternatives, and the point summary."""
    if not content:
        return None
    read = [_token(entry) for entry in content if isinstance(entry, dict)]
    tokens = [token for token in read if token is not None]
    if not tokens:
        return None
    kept: dict[str, Any] = {"tokens": tokens}
    points = scale_points(instrument)
    if points:
        kept.update(point_summary(tokens, points, score))
    return kept


def scale_points(instrument: object) -> list[int]:
    """An instrument's Likert points (1..5), if it has a non-negative scale whose points are single tokens.

    A signed scale (the compass's -2..+2) is left out: its sign and digit are often separate tokens.
    """
    scale = getattr(instrument, "scale", None)
    low, high = getattr(scale, "low", None), getattr(scale, "high", None)
    if not isinstance(low, int) or not isinstance(high, int) or low < 0 or high > 9:
        return []
    return list(range(low, high + 1))


def point_summary(tokens: Sequence[dict[str, Any]], points: Sequence[int], score: int | None) -> dict[str, Any]:
    """The first token naming a scale point (the chosen one if known): the distribution over the points."""
    names = {str(point): point for point in points}
    wanted = [str(score)] if score is not None else list(names)
    for index, token in enumerate(tokens):
        if token["token"].strip() not in wanted:
            continue
        # Distinct token strings (" 4" and "4") are distinct outcomes of the same point: their
        # probabilities add up. The chosen token is counted once, whether or not it is among its alternatives.
        alternatives = dict(token["top"])
        alternatives.setdefault(token["token"], token["logprob"])
        mass: dict[int, float] = {}
        for text, logprob in alternatives.items():
            point = names.get(text.strip())
            if point is not None:
                mass[point] = mass.get(point, 0.0) + math.exp(logprob)
        total = sum(mass.values())
        if total <= 0:
            return {}
        probabilities = {point: value / total for point, value in sorted(mass.items())}
        chosen = names[token["token"].strip()]
        return {
            "answer_token": index,
            "point_probabilities": {str(point): p for point, p in probabilities.items()},
            "scale_mass": min(total, 1.0),
            "expected_score": sum(point * p for point, p in probabilities.items()),
            "chosen_probability": probabilities.get(chosen, 0.0),
        }
    return {}


def logprob_summaries(observations: Iterable[Observation]) -> dict[tuple[str, str], dict[str, Any]]:
    """(model, instrument) -> the mean probability of the chosen point and the mean expected score, over
    the answers whose endpoint gave log-probabilities; pairs without any are absent."""
    chosen: dict[tuple[str, str], list[float]] = defaultdict(list)
    expected: dict[tuple[str, str], list[float]] = defaultdict(list)
    for observation in observations:
        entry = observation.logprobs or {}
        if "chosen_probability" in entry:
            key = (observation.model, observation.instrument)
            chosen[key].append(float(entry["chosen_probability"]))
            expected[key].append(float(entry["expected_score"]))
    return {
        key: {
            "n": len(values),
            "mean_chosen_probability": fmean(values),
            "mean_expected_score": fmean(expected[key]),
        }
        for key, values in chosen.items()
    }


def _token(entry: dict[str, Any]) -> dict[str, Any] | None:
    token, logprob = entry.get("token"), entry.get("logprob")
    if not isinstance(token, str) or not isinstance(logprob, int | float):
        return None
    top = [
        (str(alternative["token"]), float(alternative["logprob"]))
        for alternative in entry.get("top_logprobs") or []
        if isinstance(alternative, dict) and isinstance(alternative.get("logprob"), int | float)
    ]
    return {"token": token, "logprob": float(logprob), "top": top}
