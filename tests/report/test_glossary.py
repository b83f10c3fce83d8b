"""The glossary: one text for the README and the report."""

from __future__ import annotations

import re
from pathlib import Path

from snap_bench.report.glossary import GLOSSARY, glossary_html, glossary_markdown

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_glossary_is_the_one_the_report_shows() -> None:
    readme = README.read_text(encoding="utf-8")
    section = re.search(r"<!-- glossary:start -->\n(.*?)\n<!-- glossary:end -->", readme, re.S)
    assert section is not None, "README.md has no glossary section; paste `python -m snap_bench.report.glossary`"
    assert section.group(1) == glossary_markdown(), "README glossary is stale: `python -m snap_bench.report.glossary`"


def test_every_term_has_a_unit_and_a_direction_and_reads_in_the_report() -> None:
    page = glossary_html({"test_retest_r": {"better": "higher", "minimum": 0.6, "target": 0.7}})
    for name, term in GLOSSARY.items():
        assert term.unit
        assert term.better in ("higher", "lower", "none")
        assert f"<code>{name}</code>" in page
    assert "minimum &gt;= 0.6, target &gt;= 0.7" in page
