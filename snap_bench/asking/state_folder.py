"""The session's shared state folder (``<snap-out>/.state``): what the processes of one session share while they
ask (budget, paces, stops, claims of conditions asked ahead, the interrupt flag). The one place its name is
spelled: everything kept there asks this module where it is. The controller sets it anew when a session starts,
before any worker does (:func:`snap_bench.asking.session_asker.start_session_state`)."""

from __future__ import annotations

from pathlib import Path

STATE_FOLDER = ".state"
BUDGET_FILE = "budget.json"


def state_folder(out_dir: Path) -> Path:
    return out_dir / STATE_FOLDER
