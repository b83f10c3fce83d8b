"""The report's history section from a real session, in-process (run_session): the session stores its figures
beside the earlier ones, and the section drawn from the store (as the plugin draws it into pytest-html's report)
charts the trend of the report's models only. The section's own rendering is tests/unit/report/'s."""

from __future__ import annotations

import re

from snap_bench.instruments import metric_catalogue
from snap_bench.report.summary import report_models
from snap_bench.report.trend_section import stored_trend, trend_section
from tests.conftest import SLICE, BenchProject
from tests.unit.report.test_trend_section import append_new, chart_text, headlines


def test_the_report_shows_the_stored_trend_of_its_models(project: BenchProject) -> None:
    store = project.out / "history.sqlite"
    # an earlier, different result of one of the session's models, and a model this session does not run
    append_new(store, headlines("2026-01-05T09:00:00+00:00", "fake-model", 0.2))
    append_new(store, headlines("2026-01-05T09:00:00+00:00", "retired-model", 0.9))
    result = project.session("--model=fake-model", "--model=other-model", *SLICE, gate=True)
    judgement = result.judgement
    assert judgement is not None
    # what the plugin's pytest_html_results_summary draws (snap_bench.plugin.reporting)
    trend = stored_trend(
        store,
        sorted({model for model, _ in judgement.analyses}),
        sorted({instrument for _, instrument in judgement.analyses}),
        problem=judgement.store_problem,
    )
    entries = list(judgement.document["instruments"].items())
    markup = trend_section(trend, report_models(entries), metric_catalogue())
    section = re.search(r'<h3 id="snap-history">.*?</ul>', markup, re.S)
    assert section, "no history section"
    chart = chart_text(section.group(0))
    assert "fake-model" in chart
    assert "2026-01-05" in chart
    assert "fake-model: 2 stored sessions" in section.group(0)
    # this session asked one item of the profile, at one system prompt and one temperature: a subset
    assert re.search(r"1 subset\(s\) of the design \(profile: items M01 of \d+; system prompt NEU of", section.group(0))
    # other-model has only this session's figures: one line, and no line in the chart
    assert "other-model: the store holds one session" in section.group(0)
    assert "other-model" not in chart
    assert "retired-model" not in markup
