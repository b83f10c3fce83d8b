"""Which process asks which condition, when several ask ahead at once (``--snap-concurrency``).

A condition is asked by the one process that *claims* it: a small file under the session's state
folder, created atomically with the claimer's pid (``os.link`` fails if it exists). When the ask ends
the claimer *settles* the claim with its outcome (the reply, or why it was not asked), after the
cassette is written; a process whose test needs that condition reads the outcome instead of asking
again. A claim whose process is gone (killed) is free again; the session clears every claim when it
starts (a new session asks what has no recording).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from snap_bench.asking.state_folder import state_folder
from snap_bench.wire.atomic import process_alive, write_atomically

FOLDER = "claims"

Key = tuple[str, str, str]  # model, instrument, condition id


class ClaimBoard:
    def __init__(self, out_dir: Path) -> None:
        self.root = state_folder(out_dir) / FOLDER

    def _path(self, key: Key) -> Path:
        model, instrument, condition = key
        return self.root / model / instrument / f"{condition}.json"

    def claim(self, key: Key) -> bool:
        """Take the condition for this process; False if another process (or this one) has it."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".claim.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump({"pid": os.getpid()}, file)
            os.link(temporary, path)
        except FileExistsError:
            return False
        finally:
            Path(temporary).unlink(missing_ok=True)
        return True

    def settle(self, key: Key, outcome: dict[str, Any]) -> None:
        """Publish the outcome of a claimed condition (its cassette, if any, is written already)."""
        write_atomically(self._path(key), json.dumps({"pid": os.getpid(), "outcome": outcome}).encode("utf-8"))

    def release(self, key: Key) -> None:
        """Give a claimed condition up unasked (cancelled): another process may claim it."""
        self._path(key).unlink(missing_ok=True)

    def outcome(self, key: Key) -> tuple[bool, dict[str, Any] | None]:
        """(still claimed by a live process, its outcome once settled). A dead claimer's claim is removed."""
        path = self._path(key)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False, None
        except ValueError:
            return True, None  # being replaced right now
        outcome = document.get("outcome")
        if isinstance(outcome, dict):
            return True, outcome
        pid = document.get("pid")
        if isinstance(pid, int) and not process_alive(pid):
            path.unlink(missing_ok=True)
            return False, None
        return True, None


def clear_claims(out_dir: Path) -> None:
    """Forget the previous session's claims (run by the controller before any worker starts)."""
    shutil.rmtree(state_folder(out_dir) / FOLDER, ignore_errors=True)
