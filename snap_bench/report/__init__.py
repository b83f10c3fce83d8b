"""The HTML report: analysis.json and the observations rendered for a researcher to read.

Pure rendering, no pytest: :func:`summary_html` is the fragment for pytest-html's summary section,
:func:`observation_log` the text of one benchmark test's row. matplotlib and pandas are imported
only when a chart or a table is drawn, so importing this package costs nothing in a worker.
"""

from __future__ import annotations

from snap_bench.report.rows import observation_log
from snap_bench.report.summary import summary_html

__all__ = ["observation_log", "summary_html"]
