"""The report's history section: the stored trend of the headline figures of the models the report contains.

Read from the results store (SQLite or PostgreSQL) after this session's figures were added to it (the gate
writes them before pytest-html asks for the report), drawn by the chart ``snap-bench history --chart`` writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from snap_bench.analysis.metric_specs import MetricCatalogue
from snap_bench.history.database import StoreError, StoreLike
from snap_bench.history.store import Headline, read_headlines
from snap_bench.report.figures import figure_html
from snap_bench.report.formatting import text
from snap_bench.report.session_axis import session_labels, session_order
from snap_bench.report.trend import trend_svg

# The newest sessions drawn: the chart stays readable; `snap-bench history` lists every one.
DRAWN_SESSIONS = 40


@dataclass(frozen=True)
class StoredTrend:
    """What the store holds for the report's models and instruments, or why it could not be read."""

    store: str
    rows: list[Headline] = field(default_factory=list)
    problem: str = ""


def stored_trend(store: StoreLike, models: Sequence[str], instruments: Sequence[str], problem: str = "") -> StoredTrend:
    """The store's rows of these models and instruments; a store that cannot be read is a line, not a lost report.

    ``problem``: why this session could not write to the store, which is then not asked again."""
    if problem:
        return StoredTrend(str(store), problem=f"{problem[:1].upper()}{problem[1:]}; no history to show.")
    try:
        return StoredTrend(str(store), read_headlines(store, models, instruments))
    except StoreError as error:  # (its message names the store and holds no password)
        return StoredTrend(str(store), problem=f"The results store could not be read: {error}")


def trend_section(trend: StoredTrend, models: Sequence[str], catalogue: MetricCatalogue) -> str:
    """A chart of the models with two or more stored sessions, and one line for each model with fewer."""
    parts = ['<h3 id="snap-history">History across runs</h3>']
    if trend.problem:
        return "".join([*parts, f'<p class="snap-chart-missing">{text(trend.problem)}</p>'])
    sessions = {model: session_order(r.recorded_at for r in trend.rows if r.model == model) for model in models}
    followed = [model for model in models if len(sessions[model]) >= 2]
    every_session = session_order(r.recorded_at for r in trend.rows if r.model in followed)
    drawn_sessions = set(every_session[-DRAWN_SESSIONS:])
    drawn = [r for r in trend.rows if r.model in followed and r.recorded_at in drawn_sessions]
    if drawn:
        left_out = (
            f" The newest {DRAWN_SESSIONS} sessions are drawn; `snap-bench history` lists every one."
            if len(every_session) > DRAWN_SESSIONS
            else " `snap-bench history` prints them as tables."
        )
        parts.append(
            figure_html(
                lambda: trend_svg("snap-trend-chart", drawn, catalogue),
                f"Each model's judged figures in every session kept in the results store ({trend.store}), oldest "
                "first, one step per stored session (a replay that repeats a model's latest result adds none): the "
                "composite per instrument, then each checked figure with its 95% interval; a hollow grey hatched "
                "point rests on under half of its design (used/designed beside it); a hollow grey square is a session "
                "that did not measure the model's whole design, kept off the line and labelled with the conditions "
                "it measured; a hollow diamond is a session that set out to ask only a subset of the design "
                "(--snap-items, ...), kept off the line and labelled with the design's conditions it asked, the "
                f"sessions of one same subset joined by a dotted line.{left_out}",
            )
        )
    items = []
    for model in models:
        own = sessions[model]
        if len(own) >= 2:
            first, last = session_labels([own[0], own[-1]])
            items.append(
                f"{text(model)}: {len(own)} stored sessions, {text(first)} to {text(last)} (charted above"
                f"{_incomplete(trend.rows, model)}{_subsets(trend.rows, model)})."
            )
        elif own:
            (when,) = session_labels(own)
            items.append(
                f"{text(model)}: the store holds one session of this model ({text(when)}: this one, or an identical "
                f"earlier result{_incomplete(trend.rows, model, charted=False)}"
                f"{_subsets(trend.rows, model, charted=False)}); its trend starts with the next "
                "session whose result differs."
            )
        else:
            items.append(f"{text(model)}: no headline figures stored (only judged models are kept).")
    parts.append(f'<ul class="snap-trend-models">{"".join(f"<li>{item}</li>" for item in items)}</ul>')
    return "".join(parts)


def _incomplete(rows: Sequence[Headline], model: str, *, charted: bool = True) -> str:
    """``; 2 incomplete (648/1620 conditions, 17/18 conditions), drawn off the line``: the sessions no step shows."""
    labels = {(r.recorded_at, r.coverage.label()) for r in rows if r.model == model and r.coverage.incomplete}
    if not labels:
        return ""
    listed = ", ".join(label.removeprefix("incomplete: ") for _, label in sorted(labels))
    return f"; {len(labels)} incomplete ({listed}), drawn off the line" if charted else f"; incomplete: {listed}"


def _subsets(rows: Sequence[Headline], model: str, *, charted: bool = True) -> str:
    """``; 1 subset of the design (profile: items M01,M02 of 25; 120 of 1620 conditions), drawn off the line``."""
    labels = {
        (r.recorded_at, f"{r.instrument}: {r.design.subset.label()}")
        for r in rows
        if r.model == model and r.design.subset is not None
    }
    if not labels:
        return ""
    listed = text(", ".join(label for _, label in sorted(labels)))
    sessions = len({when for when, _ in labels})
    if charted:
        return f"; {sessions} subset(s) of the design ({listed}), drawn off the line"
    return f"; a subset of the design: {listed}"
