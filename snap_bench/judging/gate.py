"""What the exit status follows (``--snap-gate``), parsed once into a value every stage reads.

The option is a comma list of ``thresholds``, ``baseline``, ``both`` and ``drift``: ``both`` is thresholds and
baseline, ``drift`` adds whether a construct's position moved from the baseline's. Nothing downstream compares
the option's text: the session, the judgement, the terminal, the CI summary and the exit status read a ``Gate``.
"""

from __future__ import annotations

from dataclasses import dataclass

THRESHOLDS = "thresholds"
BASELINE = "baseline"
BOTH = "both"
DRIFT = "drift"
# Every value the option takes, in the order its help and its error name them.
GATE_VALUES = (THRESHOLDS, BASELINE, BOTH, DRIFT, "baseline,drift", "both,drift", "thresholds,drift")


@dataclass(frozen=True)
class Gate:
    """Which kinds of check may fail the run; the others are reported as ``ungated``."""

    thresholds: bool = True
    baseline: bool = False
    drift: bool = False

    @classmethod
    def parse(cls, value: str) -> Gate:
        """A --snap-gate value; a ValueError naming the legal values for anything else."""
        parts = [part.strip() for part in value.split(",") if part.strip()]
        unknown = [part for part in parts if part not in (THRESHOLDS, BASELINE, BOTH, DRIFT)]
        if unknown or not parts or len(parts) != len(set(parts)):
            raise ValueError(f"{value!r} is not what the exit status can follow; use one of: {', '.join(GATE_VALUES)}")
        thresholds = THRESHOLDS in parts or BOTH in parts
        baseline = BASELINE in parts or BOTH in parts
        return cls(thresholds=thresholds, baseline=baseline, drift=DRIFT in parts)

    @property
    def kinds(self) -> frozenset[str]:
        """The kinds of check record (snap_bench.judging.checks) the exit status follows."""
        named = (("threshold", self.thresholds), ("baseline", self.baseline), ("drift", self.drift))
        return frozenset(kind for kind, followed in named if followed)

    @property
    def needs_baseline(self) -> bool:
        """A comparison with a baseline is part of the gate (baseline or drift)."""
        return self.baseline or self.drift

    def describe(self) -> str:
        """``the thresholds, the baseline comparison and drift``: what the exit status follows, in words."""
        parts = [
            *(["the thresholds"] if self.thresholds else []),
            *(["the baseline comparison"] if self.baseline else []),
            *(["drift from the baseline"] if self.drift else []),
        ]
        if not parts:
            return "nothing"
        return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"

    def option_value(self) -> str:
        """The --snap-gate value that gives this gate (for messages and session.json)."""
        kinds = [BOTH] if self.thresholds and self.baseline else []
        kinds += [] if kinds else [*([THRESHOLDS] if self.thresholds else []), *([BASELINE] if self.baseline else [])]
        return ",".join([*kinds, *([DRIFT] if self.drift else [])])


# What the exit status follows when --snap-gate is not given and there is no baseline.
THRESHOLDS_ONLY = Gate()
