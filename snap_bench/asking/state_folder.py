"""The session's shared state folder (``<snap-out>/.state``): what the processes of one session share while they
ask (budget, paces, stops, claims of conditions asked ahead, the interrupt flag), set anew by the controller
when a session starts, before any worker does."""

from __future__ import annotations

from pathlib import Path

from snap_bench.asking.claims import clear_claims
from snap_bench.asking.interruption import InterruptFlag
from snap_bench.asking.pacing import clear_paces
from snap_bench.asking.stops import clear_stops
from snap_bench.recordings.cassettes import remove_stale_temporaries

STATE_FOLDER = ".state"
BUDGET_FILE = "budget.json"


def state_folder(out_dir: Path) -> Path:
    return out_dir / STATE_FOLDER


def start_session_state(out_dir: Path) -> None:
    """What an earlier session left: half-written temporaries (writers killed mid-write), its budget (each
    session has its own), its paces, stops, claims and interrupt flag."""
    remove_stale_temporaries(state_folder(out_dir))
    (state_folder(out_dir) / BUDGET_FILE).unlink(missing_ok=True)
    clear_paces(state_folder(out_dir))
    clear_stops(out_dir)
    clear_claims(out_dir)
    InterruptFlag(out_dir).lower()
