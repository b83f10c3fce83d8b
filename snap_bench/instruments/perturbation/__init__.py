"""Classification tasks asked through rewordings (the prompt perturbation, sentiment robustness, is one):
everything they know lives in this package."""

from snap_bench.instruments.perturbation.instrument import PerturbationInstrument, task_kind
from snap_bench.instruments.perturbation.task import KIND_KEY as TASK_KEY

__all__ = ["TASK_KEY", "PerturbationInstrument", "task_kind"]
