"""Copying a results store into another: a SQLite file into PostgreSQL, or back (``snap-bench history --copy``).

Every row of both tables that the target lacks is added, in the source's order, in one transaction under the
target's write lock; a row counts as present when the target holds one equal in every column but the key
(``id``, each store's own). Copying again adds nothing, and a target that already holds rows of its own keeps
them: the copy is the union of the two.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from snap_bench.history import schema
from snap_bench.history.database import StoreError, StoreLike, insert, opened


@dataclass(frozen=True)
class Copied:
    """One table's copy: rows added to the target, and rows it held already."""

    table: str
    added: int
    present: int


def copy_store(source: StoreLike, target: StoreLike) -> list[Copied]:
    """Add to ``target`` every row of ``source`` it lacks (the target is created if need be)."""
    with opened(source) as origin, opened(target) as destination:
        if not origin.exists():
            raise StoreError(f"{origin}: no results store there")
        rows = {
            table: origin.read(f"SELECT {', '.join(columns)} FROM {table} ORDER BY recorded_at, id")
            for table, columns in schema.COLUMNS.items()
        }
        copied = []
        with destination.writing() as database:
            for table, columns in schema.COLUMNS.items():
                held = Counter(tuple(row) for row in database.execute(f"SELECT {', '.join(columns)} FROM {table}"))
                missing = []
                for row in rows[table]:
                    if held[row] > 0:
                        held[row] -= 1
                    else:
                        missing.append(row)
                database.executemany(insert(table, columns), missing)
                copied.append(Copied(table, len(missing), len(rows[table]) - len(missing)))
    return copied
