"""What a stored row says of its session's design: the whole design, a subset of it (what was left out), or unknown
(written before the store kept it, schema version 4).

A subset's figures answer a question about part of the design (``--snap-items=M01,M02``: two items of 25), so the
history keeps them but never as a step of the whole design's trend: the chart draws them apart and the tables mark
them, as it does an incomplete session's (:mod:`snap_bench.history.session_coverage`). A row whose design is unknown
is drawn as rows always were. The rule of what counts as a subset: :mod:`snap_bench.analysis.design_subset`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from snap_bench.analysis.design_subset import DesignSubset


@dataclass(frozen=True)
class StoredSubset:
    """The ``subset`` column of one row."""

    known: bool = False  # False: the row was written before the store kept it
    subset: DesignSubset | None = None  # None: the whole design (when known)

    @classmethod
    def of(cls, subset: DesignSubset | None) -> StoredSubset:
        """A session's own: known, whole when ``subset`` is None."""
        return cls(True, subset)

    @classmethod
    def stored(cls, column: object) -> StoredSubset:
        """From the column as a backend returns it: NULL (not known), '' (the whole design) or JSON."""
        if column is None:
            return cls()
        if not column:
            return cls(True)
        try:
            values = json.loads(str(column))
            return cls(True, DesignSubset.from_json(values))
        except (ValueError, TypeError, AttributeError):
            return cls(True, DesignSubset((str(column),), 0, 0))  # (written by hand: kept as its words)

    def column(self) -> str | None:
        """The value to store."""
        if not self.known:
            return None
        return "" if self.subset is None else json.dumps(self.subset.to_json(), sort_keys=True)

    @property
    def is_subset(self) -> bool:
        return self.subset is not None

    def label(self) -> str:
        """``subset: items M01,M02 of 25; 120 of 1620 conditions``; '' for the whole design or unknown."""
        return "" if self.subset is None else f"subset: {self.subset.label()}"

    def short_label(self) -> str:
        """``120/1620`` (the design's conditions asked / designed) beside a point on a narrow chart; '' if none."""
        return "" if self.subset is None else self.subset.short_label()
