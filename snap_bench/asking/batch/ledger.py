"""The batches of a model, kept with its recordings: ``cassettes/MODEL/.batches/<batch-id>.json``.

Each file names the batch, its API, when it was submitted and, per custom_id, the condition's cassette
(relative to the model's folder) and the request sent (uri and body: what its recording must hold). So a
killed session, or a CI job on another machine with the same ``cassettes/``, collects the batch without
submitting it again. Once collected the file stays, with each item's outcome and cost: the record of what
the batch spent. No key is ever written here (the body holds none; it is scrubbed as a cassette is).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snap_bench.wire.atomic import write_atomically

BATCHES_FOLDER = ".batches"
PENDING, COLLECTED = "pending", "collected"
# Why a condition of a pending batch has no observation yet (the exit status and the coverage count it so).
PENDING_IN_A_BATCH = "pending in a batch"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class LedgerItem:
    cassette: str  # relative to the model's folder: INSTRUMENT/CONDITION.json
    uri: str
    body: str


@dataclass
class BatchRecord:
    batch_id: str
    api: str
    model: str
    submitted_at: str
    items: dict[str, LedgerItem]
    status: str = PENDING
    # custom_id -> {"outcome": "recorded" | "errored" | "already recorded", "why"?, "cost_usd"?}
    collected: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "api": self.api,
            "model": self.model,
            "submitted_at": self.submitted_at,
            "status": self.status,
            "items": {cid: vars(item) for cid, item in self.items.items()},
            "collected": self.collected,
        }

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> BatchRecord:
        return cls(
            batch_id=str(document["batch_id"]),
            api=str(document["api"]),
            model=str(document["model"]),
            submitted_at=str(document["submitted_at"]),
            items={cid: LedgerItem(**item) for cid, item in document["items"].items()},
            status=str(document.get("status", PENDING)),
            collected=dict(document.get("collected") or {}),
        )


def batches_folder(cassette_root: Path, model: str) -> Path:
    return cassette_root / model / BATCHES_FOLDER


def ledger_path(cassette_root: Path, model: str, batch_id: str) -> Path:
    return batches_folder(cassette_root, model) / f"{_UNSAFE.sub('_', batch_id)}.json"


def write_record(cassette_root: Path, record: BatchRecord) -> None:
    text = json.dumps(record.to_json(), indent=2, ensure_ascii=False) + "\n"
    write_atomically(ledger_path(cassette_root, record.model, record.batch_id), text.encode("utf-8"))


def read_records(cassette_root: Path, model: str) -> list[BatchRecord]:
    """The model's batches, oldest first; a file that is not a ledger is an error naming it (never skipped:
    skipping it would submit its conditions a second time)."""
    folder = batches_folder(cassette_root, model)
    records = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            records.append(BatchRecord.from_json(json.loads(path.read_text(encoding="utf-8"))))
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(
                f"{path}: not a batch ledger ({type(error).__name__}: {error}). It names a submitted batch; "
                "restore it from version control, or delete it to submit its conditions again"
            ) from None
    return sorted(records, key=lambda record: record.submitted_at)


def pending_cassettes(cassette_root: Path, models: list[str]) -> dict[Path, str]:
    """The cassette of every condition in a batch not collected yet -> that batch's id."""
    pending: dict[Path, str] = {}
    for model in models:
        for record in read_records(cassette_root, model):
            if record.status == PENDING:
                for item in record.items.values():
                    pending[cassette_root / model / item.cassette] = record.batch_id
    return pending
