"""reports/changes.csv: every condition whose answer changed between the baseline and a new model, with both
answers (the baseline's as parsed; the new model's parsed and as it said it)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from snap_bench.judging.changes import ChangeSummary
from snap_bench.wire.atomic import write_atomically

CHANGES_FILE = "changes.csv"


def write_changes(path: Path, summaries: Sequence[ChangeSummary]) -> None:
    changes = [change for summary in summaries for change in summary.changes]
    factors = sorted({factor for change in changes for factor in change.factors})
    # Built whole in memory, then written atomically: an interrupt or a kill leaves no half of the file.
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    writer.writerow(
        [
            "model",
            "baseline",
            "instrument",
            "condition_id",
            "item",
            *factors,
            "baseline_answer",
            "new_answer",
            "new_answer_text",
        ]
    )
    for change in changes:
        writer.writerow(
            [
                change.model,
                change.baseline,
                change.instrument,
                change.condition_id,
                change.item,
                *(change.factors.get(factor, "") for factor in factors),
                change.baseline_answer,
                change.new_parsed,
                change.new_answer or "",
            ]
        )
    write_atomically(path, handle.getvalue().encode("utf-8"))
