"""The temperature factor: the levels a design lists and the label each has in condition ids.

A model that does not take a temperature (its endpoint would drop it) is asked without one: its
temperature factor has the one level ``tdefault``, the provider's default, judged like any other level.
"""

from __future__ import annotations

from snap_bench.design.config import Node

DEFAULT = "default"
DEFAULT_LEVEL = f"t{DEFAULT}"


def temperature_level(temperature: float | None) -> str:
    """The level label of a temperature as it appears in condition ids: ``t0``, ``t0.5``, ``tdefault``."""
    return DEFAULT_LEVEL if temperature is None else f"t{temperature:g}"


def temperatures(node: Node) -> list[float]:
    values = [element.number(0.0, 2.0, "temperature") for element in node.elements()]
    if not values:
        raise node.error("no temperatures", "list at least one temperature, e.g. [0.0]")
    if len(set(values)) != len(values):
        raise node.error("duplicate temperature", "list each temperature once")
    return values


def level_order(level: str) -> float:
    """Temperatures in increasing order, the provider's default after them."""
    try:
        return float(level.removeprefix("t"))
    except ValueError:
        return float("inf")
