"""The political compass instrument: everything it knows lives in this package."""

from snap_bench.instruments.compass.instrument import CompassInstrument

__all__ = ["CompassInstrument"]
