"""Pieces of a design that several instruments read the same way: item ids and paraphrases, temperatures,
texts by level, and which levels a selection keeps."""

from __future__ import annotations

from collections.abc import Container, Iterable
from pathlib import Path
from typing import Protocol

from snap_bench.design.config import ConfigFiles, Node
from snap_bench.instruments.base import Selection


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


def texts_by_level(node: Node, config: ConfigFiles, files: list[Path]) -> dict[str, str | None]:
    """level -> the text of the file it names (None for a null entry), the project's or the packaged one;
    each file read is added to ``files``."""
    texts: dict[str, str | None] = {}
    for level, file_node in node.items():
        relative = file_node.optional_text()
        if relative is None:
            texts[level] = None
            continue
        path = config.path(relative)
        if not path.is_file():
            raise file_node.error(f"{relative} does not exist", f"create {path} or fix the path")
        files.append(path)
        texts[level] = path.read_text(encoding="utf-8").strip()
    if not texts:
        raise node.error("no levels", "list at least one level")
    return texts


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
