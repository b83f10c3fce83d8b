"""snap-bench: measure how consistently a language model answers, as a pytest suite.

The names a benchmark test module needs: the ``case`` it is parametrised with, the ``ask`` fixture's
type, and :func:`expect_valid`.
"""

from snap_bench.observation import Condition, Observation
from snap_bench.plugin import Ask, expect_valid
from snap_bench.session import Case

__all__ = ["Ask", "Case", "Condition", "Observation", "expect_valid"]
