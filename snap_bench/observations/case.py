"""One benchmark test's parameter: a model and a condition of an instrument."""

from __future__ import annotations

from dataclasses import dataclass

from snap_bench.observations.observation import Condition


@dataclass(frozen=True)
class Case:
    """One benchmark test: a model and a condition of an instrument."""

    model: str
    instrument: str
    condition: Condition

    @property
    def id(self) -> str:
        return f"{self.model}-{self.condition.id}"
