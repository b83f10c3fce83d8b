"""Retries on the progress: each condition whose ask took more than one attempt, as its report arrives.

Under xdist a worker's own output is not shown, so the note rides on the test report (as the observation
does) and the controller writes it through the terminal reporter: a wait between retries is never a silent
stall, and the summary counts them.
"""

from __future__ import annotations

from typing import Any

import pytest

RETRIES_ATTRIBUTE = "snap_retries"
RETRIES_KEY = pytest.StashKey[str]()


def retries_to_report(item: pytest.Item, report: pytest.TestReport) -> None:
    """Carry the item's retry note (if its ask was retried) on its call report."""
    note = item.stash.get(RETRIES_KEY, None)
    if note is not None and report.when == "call":
        setattr(report, RETRIES_ATTRIBUTE, note)


class RetryLog:
    """The retried conditions of the session, kept and shown by the controller."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, str]] = []  # (node id, note)

    def take(self, report: pytest.TestReport, terminal: Any | None) -> None:
        note = getattr(report, RETRIES_ATTRIBUTE, None)
        if not isinstance(note, str):
            return
        self.notes.append((report.nodeid, note))
        if terminal is not None:
            # Under xdist the progress dots leave the line open (write_line ends only a file name's line).
            if getattr(getattr(terminal, "_tw", None), "width_of_current_line", 0):
                terminal.write("\n")
            terminal.write_line(f"snap-bench: retried {_short_id(report.nodeid)}: {note}")

    def summary(self) -> str | None:
        """One line for the terminal summary, or None when nothing was retried."""
        if not self.notes:
            return None
        return f"retries: {len(self.notes)} condition(s) asked more than once (listed above as they reported)"


def _short_id(nodeid: str) -> str:
    """The condition's parameter id (``fake-model-M01-P1-NEU-t0-C0-r1``), or the node id without one."""
    start = nodeid.find("[")
    return nodeid[start + 1 : -1] if start >= 0 and nodeid.endswith("]") else nodeid
