"""What a stored row says of its session's coverage: complete, incomplete (with conditions answered / designed),
or unknown (written before the store kept it, schema version 3).

An incomplete session's figures rest on part of the design (a stale replay with recordings missing, a budget
spent), so the history keeps them but never as an ordinary point: the trend draws them apart from the line and
the tables mark them. A row whose coverage is unknown is drawn as rows always were: the store cannot tell, and
the sessions it kept before were judged as complete ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from snap_bench.analysis.coverage import INCOMPLETE, Coverage


@dataclass(frozen=True)
class StoredCoverage:
    """The coverage columns of one row (None: not known)."""

    complete: bool | None = None
    answered: int | None = None
    designed: int | None = None

    @classmethod
    def of(cls, coverage: Coverage | None, verdict: str = "") -> StoredCoverage:
        """From the session's coverage of the model; without it, incomplete only if the verdict says so."""
        if coverage is not None:
            return cls(coverage.complete, coverage.answered, coverage.designed)
        return cls(False) if verdict == INCOMPLETE else cls()

    @classmethod
    def stored(cls, complete: object, answered: object, designed: object) -> StoredCoverage:
        """From the columns as a backend returns them (integers or NULL)."""
        return cls(
            None if complete is None else bool(complete),
            None if answered is None else int(str(answered)),
            None if designed is None else int(str(designed)),
        )

    def columns(self) -> tuple[int | None, int | None, int | None]:
        """The values to store: an integer flag, as PostgreSQL takes no Python bool into an INTEGER column."""
        return (None if self.complete is None else int(self.complete), self.answered, self.designed)

    @property
    def incomplete(self) -> bool:
        return self.complete is False

    def label(self) -> str:
        """``incomplete: 648/1620 conditions``; '' for a complete session or one whose coverage is unknown."""
        if not self.incomplete:
            return ""
        if self.answered is None or self.designed is None:
            return "incomplete: coverage unknown"
        return f"incomplete: {self.answered}/{self.designed} conditions"

    def short_label(self) -> str:
        """``648/1620`` (conditions measured / designed) beside a point on a narrow chart; '' when complete."""
        if not self.incomplete:
            return ""
        return "?" if self.answered is None or self.designed is None else f"{self.answered}/{self.designed}"
