"""Write a file so that a reader (or a kill -9) never sees half of it: a temporary file, then os.replace."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

TEMPORARY_SUFFIX = ".tmp"


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``.NAME.PID.RANDOM.tmp`` beside it.

    The writer's pid in the temporary name lets a later session tell a killed writer's leftover from a
    write in progress (:func:`snap_bench.recordings.cassettes.remove_stale_temporaries`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=TEMPORARY_SUFFIX
    )
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a writer or claimer named by its pid may be gone: kill -9)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, but another user's
    return True
