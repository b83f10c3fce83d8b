"""Pieces of a design that several instruments read the same way: temperatures and texts by level."""

from __future__ import annotations

from pathlib import Path

from snap_bench.config import Node


def temperature_level(temperature: float) -> str:
    """The level label of a temperature as it appears in condition ids: ``t0``, ``t0.5``."""
    return f"t{temperature:g}"


def temperatures(node: Node) -> list[float]:
    values = [element.number(0.0, 2.0, "temperature") for element in node.elements()]
    if not values:
        raise node.error("no temperatures", "list at least one temperature, e.g. [0.0]")
    if len(set(values)) != len(values):
        raise node.error("duplicate temperature", "list each temperature once")
    return values


def texts_by_level(node: Node, config_dir: Path, files: list[Path]) -> dict[str, str | None]:
    """level -> the text of the file it names (None for a null entry); each file read is added to ``files``."""
    texts: dict[str, str | None] = {}
    for level, file_node in node.items():
        relative = file_node.optional_text()
        if relative is None:
            texts[level] = None
            continue
        path = config_dir / relative
        if not path.is_file():
            raise file_node.error(f"{relative} does not exist", f"create {path} or fix the path")
        files.append(path)
        texts[level] = path.read_text(encoding="utf-8").strip()
    if not texts:
        raise node.error("no levels", "list at least one level")
    return texts
