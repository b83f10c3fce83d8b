"""reports/item_changes.csv: per model, instrument and item against the baseline, how many conditions changed
their answer, the item's mean shift, its permutation p-value, its Benjamini-Hochberg q-value and whether the
change is reliable (beyond the run-to-run noise, false discovery rate 5 %)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from snap_bench.judging.item_changes import ItemChange

ITEM_CHANGES_FILE = "item_changes.csv"
COLUMNS = ("model", "baseline", "instrument", "item", "conditions", "changed_conditions", "shift", "p", "q", "reliable")


def write_item_changes(path: Path, changes: Sequence[ItemChange]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
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


def _number(value: float | None, spec: str) -> str:
    """Empty where the item had no scored pair to test."""
    return "" if value is None else format(value, spec)
