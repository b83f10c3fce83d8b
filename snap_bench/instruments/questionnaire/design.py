"""What a questionnaire is made of: Likert items on one scale, asked under crossed factors.

Every questionnaire, the packaged psychometric profile and political compass among them, is written in YAML
and read by :mod:`snap_bench.instruments.questionnaire.reader` into a :class:`QuestionnaireDesign`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from snap_bench.design.config import Node
from snap_bench.observations.parsing import LikertScale


@dataclass(frozen=True)
class LikertItem:
    id: str
    construct: str
    reverse_scored: bool
    paraphrases: dict[str, str]
    contexts: tuple[str, ...]
    # The item bank the original profile design groups it in ("" where a questionnaire has none).
    bank: str = ""


@dataclass(frozen=True)
class ItemNorm:
    mean: float
    sd: float
    n: int


@dataclass(frozen=True)
class TraitNorm:
    """A construct's score (the mean of its keyed items) among the human respondents, and its alpha (None
    where the source reports none: published norms often give mean, SD and n alone)."""

    mean: float
    sd: float
    alpha: float | None
    n: int


@dataclass(frozen=True)
class Norms:
    """Human figures a model's answers are set beside: per item, and per construct."""

    source: str
    respondents: int
    items: dict[str, ItemNorm]
    traits: dict[str, TraitNorm]


@dataclass(frozen=True)
class QuestionnaireDesign:
    """Items x paraphrase x system prompt x temperature x context x run, every condition one test."""

    name: str
    title: str
    scale: LikertScale
    # The text of the question around the item: {statement} is the item's text, {points} the top point.
    instruction: str
    items: dict[str, LikertItem]
    system_prompts: dict[str, str | None]
    contexts: dict[str, str | None]
    temperatures: list[float]
    runs: int
    max_tokens: int
    # Every file the design was read from (its digest is the instrument's version).
    files: list[Path]
    # The kind of questionnaire the registry builds from it ("likert"; "compass": signed answers placing the
    # model on the axes its constructs name).
    kind: str = "likert"
    # The factor whose levels are put before the question ("context"), or are the question ("choice").
    context_factor: str = "context"
    # The questionnaire's own thresholds (a thresholds.yaml section), or None for the defaults.
    thresholds: Node | None = None
    norms: Norms | None = None
    # What the report says of it (where the items come from, what the scale is).
    description: str = ""
