"""The x axis of a chart over stored sessions: one step per session, its date only the label.

Against a matplotlib date axis one session (or a few minutes apart) autoscales to a span of years, and
sessions months apart squeeze a day's reruns into one blot. A trend is read session by session, so the
sessions sit at 0, 1, 2, ... in time order, and a chart's series share the positions of the same session.

The tick labels stay readable however many sessions there are (thirty reruns of one day on a panel 2 inches
wide): horizontal, the date above the time and said once per day, and only as many as fit side by side
with a gap, counted from the axis's width (rotated labels of a day's reruns fanned out over the neighbouring
panel and each other).
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes

# At most this many labels on one axis, however wide; the others are left unlabelled.
MOST_LABELS = 6
# The tick labels' size (points), the width of one of their characters (inches: DejaVu Sans digits are 0.64 em,
# its hyphen and colon narrower) and the least gap between two labels (inches).
LABEL_SIZE = 6
CHARACTER_WIDTH = 0.62 * LABEL_SIZE / 72
GAP = 0.1
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


def tick_texts(names: Sequence[str]) -> list[str]:
    """The labels of the labelled sessions: a time under its date, the date only where the day changes."""
    texts, day = [], None
    for name in names:
        date, _, time = name.partition(" ")
        texts.append(name if not time else f"{date}\n{time}" if date != day else time)
        day = date if time else None
    return texts


def _fits(texts: Sequence[str], spacing: float) -> bool:
    """Whether labels centred ``spacing`` inches apart leave the gap between each two neighbours."""
    widths = [max(len(line) for line in text.split("\n")) * CHARACTER_WIDTH for text in texts]
    return all((left + right) / 2 + GAP <= spacing for left, right in itertools.pairwise(widths))


def set_session_axis(axes: Axes, recorded_at: Sequence[str], *, label: bool = True) -> None:
    """Sessions at 0..n-1 with their dates as tick labels: as many as fit (at most :data:`MOST_LABELS`),
    evenly spaced, the newest always."""
    count = len(recorded_at)
    axes.set_xlim(-PAD, max(count - 1, 0) + PAD)
    if not count:
        axes.set_xticks([])
        return
    names = session_labels(recorded_at)
    # The axis's width before the layout engine runs: a little less than it ends up, so what fits here fits.
    figure = axes.get_figure(root=True)
    width = axes.get_position().width * (figure.get_figwidth() if figure is not None else 6.4)
    step = math.ceil(count / MOST_LABELS)
    while True:
        # counted back from the newest session: the latest result is the one a reader looks for
        positions = sorted(range(count - 1, -1, -step))
        texts = tick_texts([names[p] for p in positions])
        if step >= count or _fits(texts, step * width / (count - 1 + 2 * PAD)):
            break
        step += 1
    axes.set_xticks(positions, texts if label else [])
    if label:
        axes.tick_params(axis="x", labelsize=LABEL_SIZE)
