"""What the exit status follows (``--snap-gate``), parsed once into a value every stage reads.

The option is a comma list of ``thresholds``, ``baseline``, ``both``, ``drift`` and ``items``: ``both`` is
thresholds and baseline, ``drift`` adds whether a construct's position moved from the baseline's, ``items``
whether an item's answers moved beyond the run-to-run noise (snap_bench.judging.item_changes). Nothing
downstream compares the option's text: the session, the judgement, the terminal, the CI summary and the exit
status read a ``Gate``.
"""

from __future__ import annotations

from dataclasses import dataclass

THRESHOLDS = "thresholds"
BASELINE = "baseline"
BOTH = "both"
DRIFT = "drift"
ITEMS = "items"
# The words the comma list is made of, in the order its help and its error name them.
GATE_WORDS = (THRESHOLDS, BASELINE, BOTH, DRIFT, ITEMS)
# Examples of whole values, for the help: what a team upgrading a model gates on comes last.
GATE_VALUES = (THRESHOLDS, BASELINE, BOTH, DRIFT, "both,drift", "baseline,drift,items")


@dataclass(frozen=True)
class Gate:
    """Which kinds of check may fail the run; the others are reported as ``ungated``."""

    thresholds: bool = True
    baseline: bool = False
    drift: bool = False
    items: bool = False

    @classmethod
    def parse(cls, value: str) -> Gate:
        """A --snap-gate value; a ValueError naming the legal values for anything else."""
        parts = [part.strip() for part in value.split(",") if part.strip()]
        unknown = [part for part in parts if part not in GATE_WORDS]
        if unknown or not parts or len(parts) != len(set(parts)):
            raise ValueError(
                f"{value!r} is not what the exit status can follow; use a comma list of {', '.join(GATE_WORDS)} "
                f"(e.g. {' or '.join(GATE_VALUES[-2:])})"
            )
        thresholds = THRESHOLDS in parts or BOTH in parts
        baseline = BASELINE in parts or BOTH in parts
        return cls(thresholds=thresholds, baseline=baseline, drift=DRIFT in parts, items=ITEMS in parts)

    @property
    def kinds(self) -> frozenset[str]:
        """The kinds of check record (snap_bench.judging.checks) the exit status follows."""
        named = (
            ("threshold", self.thresholds),
            # A serving factor's flip rate is judged against a threshold of the instrument's.
            ("serving", self.thresholds),
            ("baseline", self.baseline),
            ("drift", self.drift),
            ("items", self.items),
        )
        return frozenset(kind for kind, followed in named if followed)

    @property
    def needs_baseline(self) -> bool:
        """A comparison with a baseline is part of the gate (baseline, drift or items)."""
        return self.baseline or self.drift or self.items

    def describe(self) -> str:
        """``the thresholds, the baseline comparison and drift``: what the exit status follows, in words."""
        parts = [
            *(["the thresholds"] if self.thresholds else []),
            *(["the baseline comparison"] if self.baseline else []),
            *(["drift from the baseline"] if self.drift else []),
            *(["the items' change from the baseline"] if self.items else []),
        ]
        if not parts:
            return "nothing"
        return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"

    def option_value(self) -> str:
        """The --snap-gate value that gives this gate (for messages and session.json)."""
        kinds = [BOTH] if self.thresholds and self.baseline else []
        kinds += [] if kinds else [*([THRESHOLDS] if self.thresholds else []), *([BASELINE] if self.baseline else [])]
        return ",".join([*kinds, *([DRIFT] if self.drift else []), *([ITEMS] if self.items else [])])


# What the exit status follows when --snap-gate is not given and there is no baseline.
THRESHOLDS_ONLY = Gate()
