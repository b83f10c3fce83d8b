"""The instruments snap-bench knows, by the name a test module's ``instrument`` marker uses."""

from __future__ import annotations

from pathlib import Path

from snap_bench.instruments.base import Instrument, Scored, Selection
from snap_bench.instruments.compass import CompassInstrument
from snap_bench.instruments.perturbation import PerturbationInstrument
from snap_bench.instruments.snap import SnapInstrument

INSTRUMENTS: dict[str, type[Instrument]] = {
    "snap": SnapInstrument,
    "compass": CompassInstrument,
    "perturbation": PerturbationInstrument,
}

__all__ = ["INSTRUMENTS", "Instrument", "Scored", "Selection", "load_instrument"]


def load_instrument(name: str, config_dir: Path) -> Instrument:
    """Build the instrument ``name`` from the files in ``config_dir``; KeyError for an unknown name."""
    return INSTRUMENTS[name](config_dir)  # type: ignore[call-arg]
