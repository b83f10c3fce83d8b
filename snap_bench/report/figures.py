"""A chart with its caption, as the report embeds it."""

from __future__ import annotations

import logging
from collections.abc import Callable

from snap_bench.report.formatting import text

logger = logging.getLogger(__name__)


def figure_html(draw: Callable[[], str], caption: str) -> str:
    """``draw()``'s SVG in a figure with its caption; a chart that cannot be drawn says why instead.

    The report is written at session end: one bad chart must not lose the rest of it.
    """
    try:
        svg = draw()
    except Exception as error:
        logger.warning("snap-bench report: chart not drawn (%s): %s", caption, error)
        return f'<p class="snap-chart-missing">Chart not drawn ({text(caption)}): {text(error)}</p>'
    return f'<figure class="snap-chart">{svg}<figcaption>{text(caption)}</figcaption></figure>'
