"""A Ctrl-C while an interrupted session ends: it stops the end between whole files, never inside one.

After the first Ctrl-C, pytest renders its traceback and ends the session (the session end writes the
summary, observations.csv, session.json, ...), which takes seconds. Python's own handler would raise a second
KeyboardInterrupt wherever that end happened to be: inside pytest's handling of the first (the session then
ended with the status of a run never interrupted, and Python's status 130 and a traceback), or inside a file
being written. So from the first Ctrl-C on, a further one raises nothing: it is recorded, and the session end
writes no further file of its own (each is written whole, atomically), names those it did not write, and the
session exits interrupted (status 2) as it would have after one Ctrl-C.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType


class LaterCtrlC:
    """Records the Ctrl-C that come after the first, in place of Python's KeyboardInterrupt."""

    def __init__(self) -> None:
        self.seen = False
        self._replaced: Callable[[int, FrameType | None], object] | None = None

    def take_over(self) -> None:
        """From now on SIGINT is recorded. Only where Python's own handler is in place (a handler of the user's
        or an ignored SIGINT stays as it was) and only from the main thread (where Python runs handlers)."""
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._replaced = signal.default_int_handler
            signal.signal(signal.SIGINT, self._record)

    def give_back(self) -> None:
        """Python's handler again (pytest run in-process by a test goes on after the session)."""
        if self._replaced is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self._replaced)
            self._replaced = None

    def _record(self, signum: int, frame: FrameType | None) -> None:
        self.seen = True


class EndFiles:
    """The session end's own files, each written whole, in order, until a later Ctrl-C is seen: the files
    left then are not written, and named."""

    def __init__(self, later: LaterCtrlC) -> None:
        self._later = later
        self.not_written: list[str] = []

    def write(self, name: str, write: Callable[[], object]) -> None:
        if self._later.seen:
            self.not_written.append(name)
        else:
            write()

    def reason(self) -> str:
        """What the exit reason adds, when files were not written."""
        if not self.not_written:
            return ""
        return f"; a second Ctrl-C ended the session before it wrote {', '.join(self.not_written)}"
