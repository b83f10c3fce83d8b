"""An exclusive lock across a session's processes and the threads of each, cheap enough to take per request.

The shared limits (:mod:`snap_bench.asking.throttle`) are updated twice per request by the asking-ahead event
loop, which blocks meanwhile. ``filelock.FileLock`` opens and closes its lock file at every acquisition and
polls while another process holds it: 0.22 ms per acquisition on this project's ext4 test machine, more than
the JSON read it guards, and a polling waiter sleeps past the release. Here each process opens the lock file
once and waits in ``flock``, which returns the moment the holder releases (1.5 us an acquisition uncontended).
``flock`` does not exclude two threads sharing one descriptor, so a thread lock comes first.

Where ``fcntl`` is missing (Windows) it falls back to ``filelock.FileLock``.
"""

from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path
from types import TracebackType

from filelock import FileLock

try:
    import fcntl
except ImportError:  # pragma: no cover - not a POSIX system
    fcntl = None  # type: ignore[assignment]

# How often the fallback's waiter looks again: filelock's default of 50 ms would stall the event loop.
FALLBACK_POLL_S = 0.001


class KeptFile:
    """A file each process opens once for reading and writing (made if missing) and keeps open until this object
    is collected. A forked child opens its own: flock locks belong to the open file, so a child using its
    parent's descriptor would hold the parent's lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._descriptor: int | None = None
        self._owner_pid = 0

    def descriptor(self) -> int:
        if self._descriptor is None or self._owner_pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            weakref.finalize(self, os.close, self._descriptor)
            self._owner_pid = os.getpid()
        return self._descriptor


class ProcessLock:
    """``with ProcessLock(path):`` holds ``path`` locked against every other process and thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._threads = threading.Lock()
        self._file = KeptFile(path)
        self._fallback = FileLock(str(path), poll_interval=FALLBACK_POLL_S) if fcntl is None else None

    def __enter__(self) -> ProcessLock:
        self._threads.acquire()
        try:
            if self._fallback is not None:  # pragma: no cover - not a POSIX system
                self._fallback.acquire()
            else:
                fcntl.flock(self._file.descriptor(), fcntl.LOCK_EX)
        except BaseException:
            self._threads.release()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            if self._fallback is not None:  # pragma: no cover - not a POSIX system
                self._fallback.release()
            else:
                fcntl.flock(self._file.descriptor(), fcntl.LOCK_UN)
        finally:
            self._threads.release()
