"""What runs around each attempt of one ask: the session's interruption, the budget's claim and the model's pace.

Each attempt claims its worst-case cost before it is sent (the first was claimed when the ask began), so the
budget holds however many retries there are; the pace hears every response, so a 429 or the provider's
rate-limit headers slow the model's next starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx

    from snap_bench.asking.interruption import InterruptFlag
    from snap_bench.asking.pacing import Pacer
    from snap_bench.asking.throttle import Budget


class BudgetReached(Exception):
    """The session's request or cost budget is spent: the condition is left for a later run."""


@dataclass
class AttemptGuard:
    """The attempts of one ask of ``model`` whose worst case is ``worst`` dollars (already claimed once)."""

    model: str
    worst: float
    budget: Budget
    pacer: Pacer | None
    interrupt: InterruptFlag | None
    # What each claim holds (settled when the ask ends), and when each attempt took its start slot.
    held: list[float] = field(default_factory=list)
    paced_at: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.held.append(self.worst)

    async def before_attempt(self, attempt: int) -> None:
        """Stop if the session was interrupted (``Interrupted``), claim a retry from the budget, then wait our
        turn in the model's pace."""
        if self.interrupt is not None:
            self.interrupt.check()  # Ctrl-C in any process of the session: nothing more is sent
        if attempt > 1:
            exhausted = self.budget.reserve(self.worst)
            if exhausted:
                raise BudgetReached(f"{exhausted} while retrying {self.model}. Run again to continue.")
            self.held.append(self.worst)
        if self.pacer is not None:
            self.paced_at.append(await self.pacer())
            if self.interrupt is not None:
                self.interrupt.check()

    def on_response(self) -> Callable[[httpx.Response], None] | None:
        """What tells the model's pace of each response (its status and rate-limit headers), of the attempt that
        took the last slot."""
        pacer = self.pacer
        if pacer is None:
            return None
        return lambda response: pacer.hear_response(
            response.status_code, response.headers, self.paced_at[-1] if self.paced_at else None
        )
