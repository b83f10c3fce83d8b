"""What one paired comparison found (:class:`Result`), why one could not be made (:class:`NotCompared`), and
the names its methods print: the types every pairing method shares (snap_bench.judging.pairing_methods)."""

from __future__ import annotations

from dataclasses import dataclass

# What a fixed-design interval says it is (printed with every comparison).
FIXED_DESIGN = "fixed design: answers resampled within cells"
FIXED_DESIGN_RATE = "fixed design: run-to-run variance within cells"
# Why a metric fell back on its pairing's own method (said after that method's name).
NO_REPEATED_CELL = "no cell asked twice: no run noise to resample"
# Refits of a G study on within-cell resamples: each costs one REML fit, so few, with a t quantile on
# REFITS - 1 degrees of freedom for the SE's own uncertainty (docs/gate.md; measured in docs/measured.md).
REFITS = 15


@dataclass(frozen=True)
class Result:
    """What a method found: both values, the difference with its interval, and what it rests on.
    ``noise``: what the interval's width comes from, and so what more of would narrow it: ``runs`` (the
    models' run-to-run noise on the design both answered) or ``items`` (a resampling of the design's units)."""

    new_value: float
    old_value: float
    difference: tuple[float, float, float]
    method: str
    n: int
    compared: int
    designed: int
    unit: str

    @property
    def noise(self) -> str:
        """``runs`` where the interval reads the models' run-to-run noise on the fixed design (more runs narrow
        it), ``items`` where it resamples the design's units (more of those narrow it)."""
        return "runs" if self.method.startswith("fixed design") else "items"


class NotCompared(Exception):
    """Why a metric could not be compared; carries the coverage reached so far."""

    def __init__(self, reason: str, compared: int = 0, designed: int = 0, unit: str = "conditions") -> None:
        super().__init__(reason)
        self.reason, self.compared, self.designed, self.unit = reason, compared, designed, unit
