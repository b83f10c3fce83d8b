"""Ctrl-C reaches every process that asks: a flag file in the session's shared state folder.

A terminal's Ctrl-C signals every process of the foreground group, but a Ctrl-C sent to the controller
alone (``kill -INT``, a CI runner cancelling the job) does not reach the xdist workers: their controller
tears them down only after they have had seconds to go on asking (execnet waits before it signals them).
So whichever process sees the interrupt raises the flag, and every asker looks at it before each
request it would send (a ``stat``, cheap beside a request), in each test process and its asking-ahead
thread alike. The controller lowers it when a session starts.
"""

from __future__ import annotations

import os
from pathlib import Path

from snap_bench.asking.state_folder import state_folder

FLAG_FILE = "interrupted"


class Interrupted(Exception):
    """The session was interrupted (Ctrl-C): nothing more is asked."""


class InterruptFlag:
    def __init__(self, out_dir: Path) -> None:
        self.path = state_folder(out_dir) / FLAG_FILE

    def raise_flag(self) -> None:
        """Tell every process of the session to send nothing more."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The pid says who saw the interrupt; the file's presence is all that counts.
        self.path.write_text(f"{os.getpid()}\n", encoding="utf-8")

    def is_raised(self) -> bool:
        return self.path.exists()

    def check(self) -> None:
        """Raise :class:`Interrupted` once the flag is up (called before each request is sent)."""
        if self.is_raised():
            raise Interrupted("the session was interrupted (Ctrl-C): nothing more is asked")

    def lower(self) -> None:
        """Forget a previous session's interrupt (run by the controller before any worker starts)."""
        self.path.unlink(missing_ok=True)
