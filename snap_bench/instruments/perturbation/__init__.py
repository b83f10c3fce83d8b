"""The prompt perturbation (sentiment robustness) instrument: everything it knows lives in this package."""

from snap_bench.instruments.perturbation.instrument import PerturbationInstrument

__all__ = ["PerturbationInstrument"]
