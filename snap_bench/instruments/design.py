"""Pieces of a design that several instruments read the same way: item ids and paraphrases, temperatures,
texts by level, and which levels a selection keeps."""

from __future__ import annotations

from collections.abc import Container, Iterable
from pathlib import Path
from typing import Any, Protocol

from snap_bench.design.config import ConfigFiles, Node, load_yaml
from snap_bench.instruments.base import Selection
from snap_bench.judging.verdicts import THRESHOLDS_FILE


def item_id(node: Node, taken: Container[str], example: str) -> str:
    """An item's id: alphanumeric (it is part of every condition id) and not ``taken`` by another item."""
    value = node.text()
    if value in taken:
        raise node.error(f"duplicate item id {value!r}", "give every item its own id")
    if not value.isalnum():
        raise node.error(f"item id {value!r} is not alphanumeric", f"use ids like {example}")
    return value


def paraphrases(node: Node, levels: list[str] | None) -> dict[str, str]:
    """An item's paraphrases by level; every item has the ``levels`` of the first (None for the first)."""
    texts = {level: text.text() for level, text in node.items()}
    if levels is not None and list(texts) != levels:
        missing = sorted(set(levels) - set(texts))
        problem = (
            f"missing paraphrase {', '.join(missing)}"
            if missing
            else f"paraphrases {list(texts)} differ from the other items' {levels}"
        )
        raise node.error(problem, f"give every item the paraphrases {', '.join(levels)}")
    return texts


def selected(selection: Selection, levels: Iterable[tuple[str, str]]) -> bool:
    """Whether a condition with these (factor, level) pairs is in ``selection`` (no levels named: all are)."""
    chosen = dict(levels)
    return all(not wanted or chosen.get(factor) in wanted for factor, wanted in selection.levels.items())


class BankItem(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def construct(self) -> str: ...

    @property
    def bank(self) -> str: ...


def selectable_names(items: Iterable[BankItem]) -> list[str]:
    """What --snap-items may name of an item bank: item ids, constructs and bank names."""
    names: set[str] = set()
    for item in items:
        names |= {item.id, item.construct, item.bank}
    return sorted(names)


def instrument_name(node: Node) -> str:
    """The name a file gives its instrument: an identifier (it names cassette folders and report sections)."""
    name = node.text()
    if not name.isidentifier() or not name.isascii():
        raise node.error(f"{name!r} is not a name", "use letters, digits and underscores, e.g. calm or bfi25")
    return name


def file_beside(node: Node, written_in: Path, config: ConfigFiles) -> Path:
    """A file an instrument file names: beside it where one is, else the project's or packaged config file.
    A file of the config itself (the packaged profile.yaml, or a project's config/profile.yaml) names config
    files: the project's copy of one wins over the packaged one, as for any config file."""
    relative = node.text()
    local = written_in.parent / relative
    if config.relative(written_in) != written_in:
        local = config.path(config.relative(written_in.parent) / relative)
    path = local if local.is_file() else config.path(relative)
    if not path.is_file():
        raise node.error(f"{relative} does not exist", f"create {local} or fix the path")
    return path


# Where a section's metrics are named: a file's own entries replace the defaults' by name.
MERGED_BY_NAME = ("metrics", "non_inferiority")


def overlaid_thresholds(config: ConfigFiles, section: str, own: Node) -> dict[str, Any]:
    """An instrument file's own `thresholds:` laid over ``section`` of thresholds.yaml (the defaults for its
    kind): ``metrics`` and ``non_inferiority`` entries replace the defaults' by name, other keys whole."""
    thresholds = load_yaml(config.path(THRESHOLDS_FILE))
    if not thresholds.has(section):  # a project's thresholds.yaml written before instrument files
        thresholds = load_yaml(ConfigFiles.shipped().path(THRESHOLDS_FILE))
    defaults = thresholds.get(section).mapping()
    merged: dict[str, Any] = {**defaults, **own.mapping()}
    for key in MERGED_BY_NAME:
        if isinstance(own.mapping().get(key), dict):
            merged[key] = {**defaults.get(key, {}), **own.mapping()[key]}
    return merged
