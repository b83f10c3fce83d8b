"""The glossary: one text for docs/glossary.md and the report."""

from __future__ import annotations

import re

from snap_bench.instruments import instrument_kinds
from snap_bench.report.glossary import glossary_html, glossary_markdown, glossary_rows
from tests.conftest import REPO

GLOSSARY = REPO / "docs" / "glossary.md"


def test_the_documented_glossary_is_the_one_the_report_shows() -> None:
    text = GLOSSARY.read_text(encoding="utf-8")
    section = re.search(r"<!-- glossary:start -->\n(.*?)\n<!-- glossary:end -->", text, re.S)
    assert section is not None, "docs/glossary.md has no glossary section; paste the output of `snap-bench glossary`"
    assert section.group(1) == glossary_markdown(instrument_kinds()), (
        "docs/glossary.md is stale: paste `snap-bench glossary` between its markers"
    )


def test_every_term_has_a_meaning_and_reads_in_the_report_with_its_thresholds() -> None:
    page = glossary_html(
        {"some-instrument": {"test_retest_r": {"better": "higher", "minimum": 0.6, "target": 0.7}}}, instrument_kinds()
    )
    rows = glossary_rows(instrument_kinds())
    assert {"test_retest_r", "unscored_rate", "composite"} <= {name for name, _, _ in rows}
    for name, _, spec in rows:
        assert spec.description
        assert f"<code>{name}</code>" in page
    assert "some-instrument: minimum &gt;= 0.6, target &gt;= 0.7" in page
