"""The x axis of a chart over stored sessions: one step per session, its date only the label.

Against a matplotlib date axis one session (or a few minutes apart) autoscales to a span of years, and
sessions months apart squeeze a day's reruns into one blot. A trend is read session by session, so the
sessions sit at 0, 1, 2, ... in time order, and a chart's series share the positions of the same session.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

# More date labels than this on one axis would overlap; the others are left unlabelled.
MOST_LABELS = 6
# Half a step either side: one session is centred, never stretched to the width of the axis.
PAD = 0.5


def session_order(recorded_at: Iterable[str]) -> list[str]:
    """The distinct session times, oldest first (ISO 8601 strings sort in time order within one zone)."""
    return sorted(set(recorded_at))


def session_labels(recorded_at: Sequence[str]) -> list[str]:
    """Each session's date, as short as still tells the sessions apart (day, then minute, then second)."""
    times: list[dt.datetime] = []
    for value in recorded_at:
        try:
            times.append(dt.datetime.fromisoformat(value))
        except ValueError:  # a hand-edited store: show what it holds
            return [raw[:19] for raw in recorded_at]
    for form in ("%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S"):
        labels = [time.strftime(form) for time in times]
        if len(set(labels)) == len(labels):
            return labels
    return [time.isoformat() for time in times]


def set_session_axis(axes: Axes, recorded_at: Sequence[str], *, label: bool = True) -> None:
    """Sessions at 0..n-1 with their dates as tick labels (at most :data:`MOST_LABELS`, newest always)."""
    count = len(recorded_at)
    axes.set_xlim(-PAD, max(count - 1, 0) + PAD)
    if not count:
        axes.set_xticks([])
        return
    step = math.ceil(count / MOST_LABELS)
    # counted back from the newest session: the latest result is the one a reader looks for
    positions = sorted(range(count - 1, -1, -step))
    names = session_labels(recorded_at)
    axes.set_xticks(positions, [names[p] for p in positions] if label else [])
    if label:
        axes.tick_params(axis="x", labelrotation=30, labelsize=6)
        for tick in axes.get_xticklabels():
            tick.set_horizontalalignment("right")
