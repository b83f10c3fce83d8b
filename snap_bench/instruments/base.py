"""What every instrument provides; everything else in snap-bench is shared and instrument-agnostic."""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from snap_bench.observation import Condition
from snap_bench.parsing import AnswerCode

EXPERIMENT_FILE = "experiment.yaml"


@dataclass(frozen=True)
class Selection:
    """A subset of the design asked for on the command line; empty means everything.

    ``levels`` maps a factor name to the level labels to keep (``{"system_prompt": {"NEU"}}``).
    """

    items: frozenset[str] = frozenset()
    levels: dict[str, frozenset[str]] = field(default_factory=dict)
    runs: int | None = None
    # Ask the stage of the design that depends on each model's recorded answers as well
    # (perturbation: the few-shot phase 2 on the model's best baseline variant).
    follow_up: bool = False


@dataclass(frozen=True)
class Scored:
    """An answer scored by an instrument: the raw score, the score the analysis uses, and why."""

    score: int | None
    keyed_score: float | None
    code: AnswerCode | None
    reason: str
    construct: str | None
    # Facts about the answer particular to the instrument (e.g. "no_opinion"), kept in Observation.extra.
    extra: dict[str, Any] = field(default_factory=dict)


class Instrument(ABC):
    """An instrument knows its items and factors, renders a condition, and scores an answer."""

    name: str
    max_tokens: int

    @abstractmethod
    def conditions(self, selection: Selection) -> list[Condition]:
        """The conditions of the design in a stable order, restricted to ``selection``."""

    def conditions_for(self, model: str, selection: Selection, recordings: Path) -> list[Condition]:
        """The conditions asked of ``model``: the same for every model, unless a stage of the design
        depends on the model's earlier answers (read from ``recordings``, the cassette folder)."""
        return self.conditions(selection)

    def audit(self, models: list[str], selection: Selection, recordings: Path) -> dict[str, Any] | None:
        """What the instrument chose from the data while building the conditions (JSON), or None.

        Written to <out>/<instrument>-audit.json at the end of a session, so a reader can check it."""
        return None

    @abstractmethod
    def messages(self, condition: Condition) -> list[dict[str, str]]:
        """The chat messages that ask ``condition``."""

    @abstractmethod
    def score(self, condition: Condition, answer: str) -> Scored:
        """Parse ``answer`` to a score (or a code) for ``condition``."""

    def question(self, condition: Condition) -> str:
        """The part of the prompt that is this condition's own (the item's text); the report shows it per row."""
        return self.messages(condition)[-1]["content"]

    @abstractmethod
    def construct(self, condition: Condition) -> str | None:
        """The construct the condition's item measures, where the instrument has constructs."""

    @property
    @abstractmethod
    def source_files(self) -> list[Path]:
        """The files the design is read from; their digest is the instrument's version."""

    @property
    def version(self) -> str:
        """A short digest of the item bank and design files, recorded with every run.

        Of the shared experiment.yaml only the instrument's own section counts, so that editing one
        instrument's design leaves the others' versions alone.
        """
        digest = hashlib.sha256()
        for path in sorted(self.source_files):
            digest.update(path.name.encode())
            if path.name == EXPERIMENT_FILE:
                section = yaml.safe_load(path.read_text(encoding="utf-8")).get(self.name)
                digest.update(json.dumps(section, sort_keys=True).encode())
            else:
                digest.update(path.read_bytes())
        return digest.hexdigest()[:12]
