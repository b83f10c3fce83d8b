"""The temperature factor: the levels a design lists and the label each has in condition ids."""

from __future__ import annotations

from snap_bench.design.config import Node


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
