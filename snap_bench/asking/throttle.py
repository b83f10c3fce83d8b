"""Limits shared by every process of a session (the xdist workers): the spending budget, and the state file
every shared limit keeps (the budget, and each model's pace: :mod:`snap_bench.asking.pacing`).

Each limit keeps its state in a small JSON file guarded by a file lock in the session's output folder,
so eight workers together keep one pace per model, and together stop asking once the budget is spent.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snap_bench.asking.process_lock import KeptFile, ProcessLock
from snap_bench.wire.atomic import write_atomically


class SharedState:
    """A JSON document that processes read and update under one lock.

    ``durable`` (the budget, the stops): every write replaces the file whole
    (:func:`snap_bench.wire.atomic.write_atomically`), so a reader that takes no lock (:meth:`peek`) sees one
    complete state, the one before or after an update, and a process killed at any moment leaves one.

    Not ``durable`` (a model's pace, updated twice per request and forgotten at the next session): the file is
    rewritten in place through a descriptor the process keeps, 9 us against 0.4 ms for a new file renamed
    over the old on ext4 (where the rename also starts the new file's writeback), and read only under the lock
    (:meth:`read`; :meth:`peek` takes it too). A process killed between writing and truncating leaves a
    document that does not parse, which the next reader takes as empty: the pace starts over, never wrong.
    """

    def __init__(self, path: Path, *, durable: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.durable = durable
        self._lock = ProcessLock(Path(str(path) + ".lock"))
        self._file = KeptFile(path)  # written in place where not durable

    def update(self, change: Any) -> Any:
        """Apply ``change(state) -> (new_state, result)`` atomically across processes; return result."""
        with self._lock:
            new_state, result = change(self._unlocked_read())
            data = json.dumps(new_state).encode("utf-8")
            if self.durable:
                write_atomically(self.path, data)
            else:
                descriptor = self._file.descriptor()
                os.pwrite(descriptor, data, 0)
                os.ftruncate(descriptor, len(data))
            return result

    def read(self) -> dict[str, Any]:
        with self._lock:
            return self._unlocked_read()

    def peek(self) -> dict[str, Any]:
        """The state as last written, without waiting for the lock where the state is durable (a decision taken
        under the lock may land just after)."""
        return self._unlocked_read() if self.durable else self.read()

    def _unlocked_read(self) -> dict[str, Any]:
        try:
            value = json.loads(self.path.read_bytes())
        except (FileNotFoundError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class BudgetLimits:
    max_requests: int | None = None
    max_usd: float | None = None

    @property
    def unlimited(self) -> bool:
        return self.max_requests is None and self.max_usd is None


class Budget:
    """Counts the requests sent (and their cost) in this session, across processes."""

    def __init__(self, state: SharedState, limits: BudgetLimits) -> None:
        self._state = state
        self.limits = limits

    def reserve(self, worst_usd: float = 0.0) -> str | None:
        """Claim one request and hold its worst-case cost, atomically across processes; return why not
        when the budget is spent.

        Every attempt is claimed before it is sent (retries too), so the request count is a hard cap. The
        cost limit holds with many requests in flight: each holds its worst case (its price times its token
        limit) until :meth:`settle` puts the real cost in its place.
        """
        if self.limits.unlimited:
            return None

        def claim(state: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
            requests, usd = int(state.get("requests", 0)), float(state.get("usd", 0.0))
            held = float(state.get("held", 0.0))
            if self.limits.max_requests is not None and requests >= self.limits.max_requests:
                return state, f"request budget reached ({requests} of {self.limits.max_requests} requests)"
            limit = self.limits.max_usd
            if limit is not None and (usd >= limit or usd + held + worst_usd > limit):
                return state, (
                    f"cost budget reached (${usd:.4f} spent and ${held:.4f} held for requests in flight, "
                    f"of ${limit:.2f})"
                )
            return {"requests": requests + 1, "usd": usd, "held": held + worst_usd}, None

        reason: str | None = self._state.update(claim)
        return reason

    def settle(self, held_usd: float, usd: float) -> None:
        """Release what the requests of one ask held and add what they turned out to cost."""
        if self.limits.unlimited:
            return

        def add(state: dict[str, Any]) -> tuple[dict[str, Any], None]:
            held = max(0.0, float(state.get("held", 0.0)) - held_usd)
            return {**state, "usd": float(state.get("usd", 0.0)) + usd, "held": held}, None

        self._state.update(add)

    def spent(self) -> dict[str, Any]:
        return self._state.read()
