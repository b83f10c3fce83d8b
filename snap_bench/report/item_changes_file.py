"""reports/item_changes.csv: per model, instrument and item against the baseline, how many conditions changed
their answer, the item's mean shift, its permutation p-value, its Benjamini-Hochberg q-value and whether the
change is reliable (beyond the run-to-run noise, false discovery rate 5 %)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from snap_bench.judging.item_changes import ItemChange
from snap_bench.wire.atomic import write_atomically

ITEM_CHANGES_FILE = "item_changes.csv"
COLUMNS = ("model", "baseline", "instrument", "item", "conditions", "changed_conditions", "shift", "p", "q", "reliable")


def write_item_changes(path: Path, changes: Sequence[ItemChange]) -> None:
    # Built whole in memory, then written atomically: an interrupt or a kill leaves no half of the file.
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    writer.writerow(COLUMNS)
    for change in changes:
        writer.writerow(
            [
                change.model,
                change.baseline,
                change.instrument,
                change.item,
                change.conditions,
                change.changed_conditions,
                _number(change.shift, "+.4f"),
                _number(change.p, ".4g"),
                _number(change.q, ".4g"),
                "true" if change.reliable else "false",
            ]
        )
    write_atomically(path, handle.getvalue().encode("utf-8"))


def _number(value: float | None, spec: str) -> str:
    """Empty where the item had no scored pair to test."""
    return "" if value is None else format(value, spec)
