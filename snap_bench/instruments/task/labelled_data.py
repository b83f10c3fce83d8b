"""Labelled texts for a classification task: read from CSV or JSONL, gold mapped to the task's label set.

Two kinds of gold exist (label_set.py): ``label`` data (SST-5 and the like) name one label of the set
per text; ``polarity`` data (fresh/rotten, pos/neg) only say whether the text is positive or negative.
Metrics that need one gold label per text are computed only for the first kind.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from snap_bench.design.config import ConfigError, Node
from snap_bench.instruments.task.label_set import GOLD_KINDS, GOLD_SYNONYMS, LABEL_GOLD, POLARITY_GOLD, LabelSet

FORMATS = ("csv", "jsonl")


@dataclass(frozen=True)
class Sample:
    """One labelled text: ``gold`` is a label of the set (label gold) or negative / positive (polarity)."""

    id: str
    text: str
    gold: str
    raw_label: str


@dataclass(frozen=True)
class DataSpec:
    """How a data file is read: its format, columns, the kind of gold and the map to it."""

    format: str
    text_column: str
    label_column: str
    id_column: str | None
    gold_kind: str
    label_map: dict[str, str]
    allowed: tuple[str, ...]  # what the gold may say, after label_map

    @classmethod
    def from_node(cls, node: Node, label_set: LabelSet) -> DataSpec:
        gold_node = node.get("gold", LABEL_GOLD)
        gold_kind = GOLD_SYNONYMS.get(str(gold_node.value), None) or gold_node.choice(GOLD_KINDS)
        if gold_kind == POLARITY_GOLD and not label_set.has_polarity:
            raise gold_node.error(
                "polarity gold needs labels weighted on both sides of zero",
                "give the labels weights (negative ones below 0, positive ones above), or use gold: label",
            )
        allowed = label_set.gold_labels(gold_kind)
        label_map: dict[str, str] = {}
        for raw, target in node.get("label_map", {}).items():
            label_map[raw] = target.choice(allowed)
        id_node = node.get("id_column", None)
        return cls(
            format=node.get("format", "csv").choice(FORMATS),
            text_column=node.get("text_column", "text").text(),
            label_column=node.get("label_column", "label").text(),
            id_column=id_node.text() if id_node.value is not None else None,
            gold_kind=gold_kind,
            label_map=label_map,
            allowed=allowed,
        )

    def gold(self, raw: str) -> str | None:
        """The gold label of a raw label, or None when it is not one we know."""
        value = self.label_map.get(raw, raw if not self.label_map else None)
        if value is None:
            return None
        value = value.strip().lower()
        return value if value in self.allowed else None


def load_samples(path: Path, spec: DataSpec, id_prefix: str) -> list[Sample]:
    """Read ``path`` as ``spec`` says; any problem is a ConfigError naming the file, the row and the fix."""
    if not path.is_file():
        raise ConfigError(path, "", "data file not found", "create it, or fix the path under data")
    rows = _csv_rows(path) if spec.format == "csv" else _jsonl_rows(path)
    samples: list[Sample] = []
    seen: set[str] = set()
    for line, row in rows:
        where = f"row {line}"
        for column in (spec.text_column, spec.label_column, *([spec.id_column] if spec.id_column else [])):
            if column not in row or row[column] is None or not str(row[column]).strip():
                raise ConfigError(
                    path,
                    where,
                    f"no value in column {column!r}",
                    f"give every row a {column!r}, or name the right column under data",
                )
        raw = str(row[spec.label_column]).strip()
        gold = spec.gold(raw)
        if gold is None:
            known = sorted(spec.label_map) or list(spec.allowed)
            raise ConfigError(
                path,
                where,
                f"label {raw!r} is not {'a polarity' if spec.gold_kind == POLARITY_GOLD else 'one of the labels'}",
                f"use one of {', '.join(known)}, or map it under data.label_map",
            )
        sample_id = str(row[spec.id_column]).strip() if spec.id_column else f"{id_prefix}{len(samples) + 1:03d}"
        if not sample_id.isalnum():
            raise ConfigError(path, where, f"id {sample_id!r} is not alphanumeric", "use ids like S017")
        if sample_id in seen:
            raise ConfigError(path, where, f"duplicate id {sample_id!r}", "give every row its own id")
        seen.add(sample_id)
        samples.append(Sample(sample_id, " ".join(str(row[spec.text_column]).split()), gold, raw))
    if not samples:
        raise ConfigError(path, "", "no rows", "add labelled texts (a header row and at least one row)")
    return samples


def _csv_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle)
            rows = [(index, dict(row)) for index, row in enumerate(reader, start=2)]
    except UnicodeDecodeError:
        raise ConfigError(path, "", "not UTF-8 text", "save the file as UTF-8") from None
    except csv.Error as error:
        raise ConfigError(
            path, "", f"malformed CSV ({error})", "write a header row and one quoted row per text"
        ) from None
    return rows


def _jsonl_rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise ConfigError(path, "", "not UTF-8 text", "save the file as UTF-8") from None
    for index, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise ConfigError(
                path, f"line {index}", f"not JSON ({error.msg})", 'write one object per line, e.g. {"text": ...}'
            ) from None
        if not isinstance(value, dict):
            raise ConfigError(path, f"line {index}", "not a JSON object", 'write one object per line: {"text": ...}')
        rows.append((index, {str(k): v for k, v in value.items()}))
    return rows


GOLD_PREFIX = {"label": "gold:", "polarity": "polarity:"}


def gold_construct(sample: Sample, gold_kind: str) -> str:
    """How an observation carries its gold: ``gold:very positive`` (label gold) or ``polarity:positive``."""
    return f"{GOLD_PREFIX[gold_kind]}{sample.gold}"


def read_gold(construct: str | None) -> tuple[str, str] | None:
    """(gold kind, gold label) from :func:`gold_construct`'s text; None for anything else."""
    for kind, prefix in GOLD_PREFIX.items():
        if construct and construct.startswith(prefix):
            return kind, construct[len(prefix) :]
    return None
