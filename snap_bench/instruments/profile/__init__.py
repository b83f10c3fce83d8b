"""The psychometric profile instrument: everything it knows lives in this package."""

from snap_bench.instruments.profile.instrument import ProfileInstrument

__all__ = ["ProfileInstrument"]
