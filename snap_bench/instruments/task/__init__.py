"""Classification tasks asked through rewordings (the prompt perturbation, sentiment robustness, is one):
everything they know lives in this package."""

from snap_bench.instruments.task.instrument import TaskInstrument, task_kind
from snap_bench.instruments.task.task import KIND_KEY as TASK_KEY

__all__ = ["TASK_KEY", "TaskInstrument", "task_kind"]
