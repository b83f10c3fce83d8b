"""A model's request pace and in-flight window, adapted to what the provider says, shared by a session's processes.

Per-minute limits are enforced smoothly (a token bucket): a burst is refused long before the minute's count is
reached, so requests are *paced*, one start every ``interval`` seconds, never sent in bursts.

- The provider's rate-limit headers (:mod:`snap_bench.asking.rate_headers`) set the pace: a little under the rate
  they state (``margin``). With nothing left (remaining 0) the next start waits for one request's refill. Without
  headers nothing is paced until a refusal.
- A 429 whose headers state requests remaining is no rate limit of the key (an upstream's refusal: a provider
  behind a router, an overloaded model): only its own retry waits; the pace is not cut.
- A 429 without rate-limit headers is the key's limit only as part of a sustained pattern: at least half of the
  last ``sustained_of`` responses (answers and refusals) refused, or refused again (a request paced after a cut)
  before that cut is undone. Fewer are sporadic, as a flaky upstream's are, and only their own retries wait
  their Retry-After: the pace is neither set nor cut, and no later start waits. A limit the provider states (its
  headers say nothing remains, or the pace is the headers') is a limit at its first 429.
- A limit starts an *episode*: the pace drops to ``decrease`` times itself (without a pace yet, times the rate
  that got through: the rate sent times the share of recent responses answered), once per episode: the
  refusals of requests paced before the cut are of the same episode (where that is not known, those within a
  cooldown of at least the Retry-After). Every later start waits at least the Retry-After. Successes of
  requests paced before the cut say nothing of the new pace.
- A cut is undone after ``undo_after`` answers of requests paced after it (the pace back to the
  rate it was cut from): an upstream's run of refusals is over, and a limit refusing again is found again.
- A success of a request paced after the cut, while the pace holds requests back, raises the refusal-found pace
  a little (additive increase: ``increase``, only while none of the recent responses was refused;
  ``increase_under_headers`` when the headers state a rate, up to it).
- The in-flight window starts at 1 and grows by one per success (slow start: it doubles per round trip) until
  the first limit (a sporadic 429 is none), then by one per window of successes, up to the ceiling
  (``--snap-concurrency``). It keeps the first requests, sent before the provider has said anything, from being
  a burst.

The state is a small JSON document in the session's state folder (:class:`snap_bench.asking.throttle.SharedState`),
so xdist workers share one pace per model; :func:`pace_summary` reads it at the end of the session.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snap_bench.asking.client import parse_retry_after
from snap_bench.asking.rate_headers import RateHeaders, read_rate_headers
from snap_bench.asking.throttle import SharedState

PACE_FILE_PREFIX = "pace-"
# How many recent request starts the state keeps: what the rate being sent is measured over at a refusal (few:
# the rate of the moment, not the average of a slow start).
RECENT_STARTS = 8
# The fewest answers among the recent responses that measure the rate getting through a limit found without a pace.
MEASURED_ANSWERS = 3


@dataclass(frozen=True)
class PaceSettings:
    """How a model's pace adapts. ``ceiling``: the session's in-flight ceiling (None: no window is kept);
    ``fixed_per_minute``: a rate never to exceed (--snap-rate-limit), whatever the provider allows."""

    ceiling: int | None = None
    fixed_per_minute: float | None = None
    # False (--snap-pace=fixed): the ceiling in flight and the fixed rate only; responses are only counted.
    adaptive: bool = True
    # Pace at this share of the rate the headers state: the provider's clock and ours differ a little.
    margin: float = 0.97
    decrease: float = 0.85
    # A success raises a refusal-found rate by this share (while nothing recent was refused), on from where an
    # undone cut left it: faster refuses more, slower stays longer under the limit
    # (tests/unit/asking/test_pacing.py simulates both).
    increase: float = 0.001
    # Under a pace from headers a refusal is a bunch of requests that arrived together (a busy machine, another
    # client of the key), not a wrong rate: back to the headers' pace within about ten successes.
    increase_under_headers: float = 0.02
    cooldown_s: float = 2.0
    # A 429 without rate-limit headers is the key's limit only when at least half of the last ``sustained_of``
    # responses (answers and refusals) were refused: a flaky upstream refuses a few in a hundred whatever the
    # pace (a 429 of 3 to 9 % of its answers and refusals at 20 to 50 % faults), a limit the pace is well above
    # refuses most. Fewer than half may be either, and is left to each request's own Retry-After.
    sustained_of: int = 10
    # A cut is undone (the pace back to the rate it was cut from) after this many answers of requests paced
    # after it: an upstream's burst of refusals is over, and a limit is found again if it refuses again.
    undo_after: int = 32


@dataclass(frozen=True)
class Signal:
    """What one response said of the limit: its status, its rate-limit headers, its Retry-After (seconds)."""

    status: int
    headers: RateHeaders | None = None
    retry_after_s: float | None = None
    # When the request took its start slot (the state's clock): whether it was paced before or after a cut.
    reserved_at: float | None = None


def reserve(state: dict[str, Any], settings: PaceSettings, now: float) -> tuple[dict[str, Any], float]:
    """Take the next start slot; return the new state and the seconds to wait for it."""
    interval = current_interval(state, settings)
    slot = max(now, float(state.get("next_slot", 0.0)))
    starts = [*state.get("starts", [])[-(RECENT_STARTS - 1) :], slot]
    taken = {"next_slot": slot + interval, "starts": starts, "sent": int(state.get("sent", 0)) + 1}
    return {**state, **taken, "fixed_per_minute": settings.fixed_per_minute, "adaptive": settings.adaptive}, slot - now


def current_interval(state: dict[str, Any], settings: PaceSettings) -> float:
    """Seconds between request starts: the slowest of the fixed rate, the headers' and the refusals' pace."""
    rates = [float(state[key]) for key in ("header_rate", "refusal_rate") if state.get(key)]
    interval = 1.0 / min(rates) if rates else 0.0
    if settings.fixed_per_minute:
        interval = max(interval, 60.0 / settings.fixed_per_minute)
    return interval


def note(state: dict[str, Any], settings: PaceSettings, signal: Signal, now: float) -> dict[str, Any]:
    """The state after a response: its headers set the pace; a 429 that is a limit cuts it; answers undo a cut
    and may raise the pace."""
    state = dict(state)
    if not settings.adaptive:
        counted = "refused" if signal.status == 429 else "answered" if signal.status == 200 else None
        if counted is not None:
            state[counted] = int(state.get(counted, 0)) + 1
        return state
    if signal.headers is not None:
        state["header_rate"] = signal.headers.per_second() * settings.margin
        state["header_limit_per_minute"] = signal.headers.per_second() * 60.0
        if signal.headers.remaining == 0 and signal.headers.reset_s:
            # Nothing left: the next request waits for one request's worth of refill.
            state["next_slot"] = max(float(state.get("next_slot", 0.0)), now + 1.0 / signal.headers.per_second())
    cooling = _before_cut(state, signal.reserved_at, now)
    if signal.status == 429:
        state["refused"] = int(state.get("refused", 0)) + 1
        if signal.headers is not None and signal.headers.remaining:
            return state  # the key has requests left: an upstream's refusal, only its own retry waits
        state["recent"] = _heard(state, settings, refused=True)
        if not (_stated(state, signal) or _sustained(state, settings, cooling)):
            return state  # sporadic, as a flaky upstream's are: only its own retry waits its Retry-After
        wait = signal.retry_after_s or 0.0
        state["next_slot"] = max(float(state.get("next_slot", 0.0)), now + wait)
        if not cooling:
            state = _cut(state, settings, now)
            state["cut_at"] = now
            state["cooldown_until"] = now + max(settings.cooldown_s, wait)
        return state
    if signal.status != 200:
        return state  # a 5xx or a timeout says nothing of the rate limit
    state["answered"] = int(state.get("answered", 0)) + 1
    state["recent"] = _heard(state, settings, refused=False)
    if cooling:
        return state  # sent before the cut: nothing to learn of the new pace
    if state.get("cut_from") is not None:
        state["since_cut"] = int(state.get("since_cut", 0)) + 1
        if state["since_cut"] >= settings.undo_after:
            # Answers kept coming: the cut is undone (a limit refusing again is found again).
            if state.get("refusal_rate"):
                state["refusal_rate"] = max(float(state["refusal_rate"]), float(state["cut_from"]))
            state["cut_from"] = None
    if state.get("refusal_rate"):
        paced = float(state.get("next_slot", 0.0)) >= now - current_interval(state, settings)
        header = state.get("header_rate")
        if not header and any(state["recent"]):
            paced = False  # a pace still refused, however sporadically, has not shown it can go faster
        if paced:  # only a pace that holds requests back has shown it can go faster
            increase = settings.increase_under_headers if header else settings.increase
            raised = float(state["refusal_rate"]) * (1.0 + increase)
            # Back to the headers' pace (or, without headers, on up while nothing is refused).
            state["refusal_rate"] = None if header and raised >= float(header) else raised
    if settings.ceiling is not None:
        window = float(state.get("window", 1.0))
        step = 1.0 if not state.get("cut") else 1.0 / window
        state["window"] = min(float(settings.ceiling), window + step)
    return state


def _before_cut(state: dict[str, Any], reserved_at: float | None, now: float) -> bool:
    """Whether a response is of a request paced before the last cut: its refusal is of the episode that cut, its
    success says nothing of the new pace. Where its start is not known, whether the cooldown still runs."""
    cut_at = state.get("cut_at")
    if reserved_at is not None and cut_at is not None:
        return reserved_at <= float(cut_at)
    return now < float(state.get("cooldown_until", 0.0))


def _heard(state: dict[str, Any], settings: PaceSettings, *, refused: bool) -> list[int]:
    """The last ``sustained_of`` answers and refusals heard (1: refused), this one last."""
    return [*state.get("recent", [])[-(settings.sustained_of - 1) :], int(refused)]


def _stated(state: dict[str, Any], signal: Signal) -> bool:
    """Whether a refusal is the key's limit by what the provider states: its headers say nothing remains, or the
    pace is the headers' (a refusal under it is requests that arrived together: cut, and back within a few)."""
    return bool(state.get("header_rate")) or (signal.headers is not None and signal.headers.remaining == 0)


def _sustained(state: dict[str, Any], settings: PaceSettings, cooling: bool) -> bool:
    """Whether a refusal without headers is a limit: at least half of the recent responses refused, or refused
    again after a cut that is not undone yet (of a request paced after it: the cut was not enough)."""
    recent = state.get("recent", [])
    again = state.get("cut_from") is not None and not cooling
    return again or 2 * sum(recent) >= settings.sustained_of


def _cut(state: dict[str, Any], settings: PaceSettings, now: float) -> dict[str, Any]:
    """One refusal episode: the pace to ``decrease`` times itself, never a send rate that slow answers or backoffs
    held down. Without a pace yet, times the rate that got through: the rate being sent times the share of the
    recent responses answered (at a limit, about the limit; the send rate is the limit's and the refused
    retries' together). Fewer than ``MEASURED_ANSWERS`` answered: nothing measured (an upstream refusing every
    request for a while lets nothing through whatever the pace), so no pace, only the Retry-After waits.
    (The window is not cut: a per-minute limit is a rate, and the pace holds it; the window only grows more
    slowly from here on.)"""
    interval = current_interval(state, settings)
    base: float | None = 1.0 / interval if interval > 0 else None
    if base is None:
        sending = _rate_of([float(start) for start in state.get("starts", []) if float(start) <= now])
        recent = state.get("recent", [])
        answered = len(recent) - sum(recent)
        if sending is not None and answered >= MEASURED_ANSWERS:
            base = sending * answered / len(recent)
    if base:
        state["refusal_rate"] = settings.decrease * base
        state["cut_from"] = base
        state["since_cut"] = 0
    state["cut"] = True
    return state


def signal_of(status: int, headers: Mapping[str, str], now: float) -> Signal:
    """What a response's status and headers say of the limit."""
    lower = {name.lower(): value for name, value in headers.items()}
    return Signal(status, read_rate_headers(lower, now), parse_retry_after(lower.get("retry-after")))


def _rate_of(times: list[float]) -> float | None:
    """Events per second over ``times`` (in order), or None for fewer than two or no span."""
    if len(times) < 2 or times[-1] <= times[0]:
        return None
    return (len(times) - 1) / (times[-1] - times[0])


def window_share(state: dict[str, Any], settings: PaceSettings, share: int) -> int:
    """How many of this process's ``share`` of the ceiling may be in flight now: the same part of it as the
    session's window is of the ceiling, at least one."""
    if settings.ceiling is None or not settings.adaptive:
        return share
    window = float(state.get("window", 1.0))
    return max(1, min(share, int(share * window / settings.ceiling)))


class Pacer:
    """A model's pace, shared by every process of the session through ``state``; await it before each attempt
    (:meth:`__call__`) and tell it every response (:meth:`hear`)."""

    def __init__(
        self,
        state: SharedState,
        settings: PaceSettings,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._state = state
        self.settings = settings
        self._clock = clock
        self._sleep = sleep
        self._known: dict[str, Any] = {}  # the state as this process last saw it (for the window, without a read)

    def reserve(self) -> tuple[float, float]:
        """Take the next start slot; return when it was taken and the seconds to wait for it."""

        def take(state: dict[str, Any]) -> tuple[dict[str, Any], tuple[float, float]]:
            now = self._clock()
            new_state, wait = reserve(state, self.settings, now)
            self._known = new_state
            return new_state, (now, wait)

        taken: tuple[float, float] = self._state.update(take)
        return taken

    async def __call__(self) -> float:
        """Wait for the next start slot; return when it was taken (for :meth:`hear_response`)."""
        reserved_at, wait = self.reserve()
        if wait > 0:
            await self._sleep(wait)
        return reserved_at

    def hear_response(self, status: int, headers: Mapping[str, str], reserved_at: float | None = None) -> None:
        """Tell the pace what one response said (every response, failures included), of a request that took its
        slot at ``reserved_at``."""
        signal = signal_of(status, headers, self._clock())
        self.hear(dataclasses.replace(signal, reserved_at=reserved_at))

    def hear(self, signal: Signal) -> None:
        def change(state: dict[str, Any]) -> tuple[dict[str, Any], None]:
            self._known = note(state, self.settings, signal, self._clock())
            return self._known, None

        self._state.update(change)

    def in_flight_room(self, share: int) -> int:
        """This process's room in flight (of its ``share`` of the ceiling), as the window last seen allows."""
        return window_share(self._known, self.settings, share)


def pace_file(state_dir: Path, model: str) -> Path:
    return state_dir / f"{PACE_FILE_PREFIX}{model}.json"


def clear_paces(state_dir: Path) -> None:
    """Each session finds its own pace: an earlier session's counts and pace are not this one's."""
    if state_dir.is_dir():
        for path in state_dir.glob(f"{PACE_FILE_PREFIX}*.json"):
            path.unlink(missing_ok=True)


def pace_summary(state_dir: Path, models: list[str]) -> list[str]:
    """One line per model that sent requests this session: the pace found and the requests refused."""
    lines = []
    for model in models:
        state = SharedState(pace_file(state_dir, model), durable=False).read()
        if not state.get("sent"):
            continue
        refused = int(state.get("refused", 0))
        said = f"{refused} request{'' if refused == 1 else 's'} refused (429)"
        header, refusal = state.get("header_limit_per_minute"), state.get("refusal_rate")
        fixed = state.get("fixed_per_minute")
        if not state.get("adaptive", True):
            lines.append(f"{model}: not adapted (--snap-pace=fixed); {said}")
            continue
        slowest = 60.0 / max(current_interval(state, PaceSettings()), 1e-9)
        if fixed and float(fixed) <= slowest:
            found = f"paced at {float(fixed):.0f} req/min (--snap-rate-limit)"
        elif refusal:
            found = f"paced at {float(refusal) * 60:.0f} req/min after refusals"
            if header:
                found += f" (the provider's headers state {float(header):.0f})"
        elif header:
            found = f"paced at {float(state['header_rate']) * 60:.0f} req/min from the provider's headers"
        elif refused:
            found = "not paced (no rate-limit headers; its refusals sporadic, no limit)"
        else:
            found = "not paced (no rate-limit headers, nothing refused)"
        lines.append(f"{model}: {found}; {said}")
    return lines
