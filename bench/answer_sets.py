"""Simulated answer sets at the shipped designs, scored by the real instruments, as Observations.

Each answerer writes the *text* a model would send ("4", "Strongly agree"); the instrument's own
``score`` turns it into a score, so the answer sets go through the real scoring, analysis and verdicts.
Used by bench/validity.py and by the tests that prove no degenerate answerer can pass.

Answerers:

- ``constant(k)``: the same answer to everything (any k of the 5 points);
- ``uniform``: each answer drawn uniformly from the 5 points;
- ``agree``: agrees with every statement (agree or strongly agree, drawn for each answer);
- ``agree_by_item``: agrees with every statement, as strongly for a statement every time it is asked
  (only a bank with statements of opposite direction can tell it from a model that holds the views);
- ``latent(...)``: a model with item views and known components, rounded to the scale.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from snap_bench.analysis.planner import scored_observation
from snap_bench.design.config import ConfigFiles
from snap_bench.instruments.base import Instrument, Selection
from snap_bench.observations.observation import Condition, Observation

REPO = Path(__file__).resolve().parent.parent
# The packaged defaults: what a session of this repository reads (it has no config/ of its own).
CONFIG = ConfigFiles.shipped()
# The five points as the compass's answer options, from -2 (strongly disagree) to +2.
COMPASS_LABELS = ("Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree")

# An answerer: (condition, whether its statement is reverse keyed, rng) -> a point of the scale, 1..5.
Answerer = Callable[[Condition, bool, np.random.Generator], int]


def constant(point: int) -> Answerer:
    return lambda condition, reverse, rng: point


def uniform(condition: Condition, reverse: bool, rng: np.random.Generator) -> int:
    return int(rng.integers(1, 6))


def agree(condition: Condition, reverse: bool, rng: np.random.Generator) -> int:
    return int(rng.integers(4, 6))


def agree_by_item(condition: Condition, reverse: bool, rng: np.random.Generator) -> int:
    return 4 + sum(map(ord, condition.item)) % 2


def latent(item_sd: float, facet_sd: float, noise_sd: float, seed: int, position: float = 0.0) -> Answerer:
    """Views per item: ``position`` points towards agreement (away from it for a reverse-keyed statement,
    so the views are coherent) plus SD ``item_sd``; shifted per (item, paraphrase, system prompt) by
    ``facet_sd`` and per answer by ``noise_sd``; rounded and clipped to 1..5."""
    views: dict[str, float] = {}
    shifts: dict[tuple[str, ...], float] = {}
    state = np.random.default_rng(seed)

    def answer(condition: Condition, reverse: bool, rng: np.random.Generator) -> int:
        lean = -position if reverse else position
        view = views.setdefault(condition.item, 3 + lean + state.normal(0, item_sd))
        key = (condition.item, condition.level("paraphrase"), condition.level("system_prompt"))
        shift = shifts.setdefault(key, state.normal(0, facet_sd))
        return int(np.clip(np.rint(view + shift + rng.normal(0, noise_sd)), 1, 5))

    return answer


def answer_text(instrument: Instrument, point: int) -> str:
    """How the instrument's answer instruction asks for the point: a digit, or the compass's label."""
    return COMPASS_LABELS[point - 1] if instrument.name == "compass" else str(point)


def reverse_items(instrument: Instrument) -> frozenset[str]:
    """The ids of the instrument's reverse-keyed statements."""
    items = getattr(instrument, "items", {})
    return frozenset(
        name
        for name, item in items.items()
        if getattr(item, "reverse", False) or getattr(item, "reverse_scored", False)
    )


def observations(
    instrument: Instrument,
    answerer: Answerer,
    seed: int,
    model: str = "simulated",
    selection: Selection | None = None,
    reverse: frozenset[str] | None = None,
) -> list[Observation]:
    """Every condition of the design answered by ``answerer``, scored by ``instrument``."""
    rng = np.random.default_rng(seed)
    reversed_items = reverse_items(instrument) if reverse is None else reverse
    return [
        scored_observation(
            instrument,
            model,
            condition,
            answer_text(instrument, answerer(condition, condition.item in reversed_items, rng)),
        )
        for condition in instrument.conditions(selection or Selection())
    ]
