"""Write a file so that a reader (or a kill -9) never sees half of it: a temporary file, then os.replace."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

TEMPORARY_SUFFIX = ".tmp"


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``.NAME.PID.RANDOM.tmp`` beside it.

    The writer's pid in the temporary name lets a later session tell a killed writer's leftover from a
    write in progress (:func:`snap_bench.recordings.cassettes.remove_stale_temporaries`). The file gets the
    permissions any file the user writes gets (the umask's), not ``mkstemp``'s owner-only ones: a report or a
    baseline others read stays readable.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        temporary = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMPORARY_SUFFIX}"
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
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
