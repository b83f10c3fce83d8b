"""summary_html on fake documents and observations: sections, colours, charts, downloads, escaping."""

from __future__ import annotations

import base64
import csv
import gzip
import html
import io
import json
import lzma
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import matplotlib
import pandas
import pytest

from snap_bench.observations.observation import Observation
from snap_bench.report import summary_html
from snap_bench.report.downloads import analysis_download
from snap_bench.session.outputs import write_csv
from tests.conftest import shipped_instruments
from tests.unit.report.fake_data import (
    FAKE_THRESHOLDS,
    XSS_PAYLOADS,
    fake_document,
    fake_observations,
    poisoned,
    profile_document,
)

Document = dict[str, Any]
Thresholds = dict[str, dict[str, Any]]


class Elements(HTMLParser):
    """Every start tag with its attributes, as a browser's parser would see them."""

    def __init__(self, markup: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


# The report's own two script elements (the conditions table's data and code); no other may appear.
OWN_SCRIPTS = [{"type": "application/gzip+base64", "id": "snap-conditions-data"}, {"id": "snap-conditions-script"}]


def only_own_scripts(markup: str) -> bool:
    """Only the report's scripts, and no markup can be formed inside its data (base64: no ``<`` or ``&``)."""
    data = re.search(r'<script type="application/gzip\+base64" id="snap-conditions-data">(.*?)</script>', markup, re.S)
    return Elements(markup).named("script") == OWN_SCRIPTS and (
        data is None or re.fullmatch(r"[A-Za-z0-9+/=]*", data.group(1)) is not None
    )


def render(document: dict[str, Any], observations: list[Observation], thresholds: Any, **options: Any) -> str:
    markup = summary_html(document, observations, {"profile": thresholds}, shipped_instruments(), **options)
    # a chart that failed is reported in the page instead of raising: in tests, it must not happen
    assert "Chart not drawn" not in markup
    return markup


def svg_elements(markup: str) -> dict[str, str]:
    """Inline SVG charts by their id."""
    return {match.group(1): match.group(0) for match in re.finditer(r'<svg[^>]*\bid="([^"]+)".*?</svg>', markup, re.S)}


def downloads(markup: str) -> dict[str, tuple[str, bytes]]:
    links = Elements(markup).named("a")
    found = {}
    for attrs in links:
        if "download" in attrs:
            media_type, _, payload = str(attrs["href"]).removeprefix("data:").partition(";base64,")
            found[str(attrs["download"])] = (media_type, base64.b64decode(payload))
    return found


def row_of(markup: str, label: str) -> str:
    match = re.search(rf"<tr><th scope=\"row\">{re.escape(label)}<br>.*?</tr>", markup, re.S)
    assert match, label
    return match.group(0)


@pytest.fixture(scope="module")
def markup() -> str:
    """The fake three-model report, rendered once for the tests that only read it (a render takes seconds)."""
    return render(fake_document(), fake_observations(), FAKE_THRESHOLDS)


def test_executive_summary_has_a_badge_per_verdict_in_rank_order(markup: str) -> None:
    start = markup.index('class="snap-table snap-verdicts"')
    verdicts = markup[start : markup.index("</table>", start)]
    assert re.findall(r"snap-badge-(\w+)\">(\w+)<", verdicts) == [
        ("pass", "PASS"),
        ("borderline", "BORDERLINE"),
        ("fail", "FAIL"),
    ]
    assert verdicts.index("fake-steady") < verdicts.index("fake-borderline") < verdicts.index("fake-flaky")
    steady = verdicts[verdicts.index("fake-steady") :]
    assert "0.880" in steady  # composite
    assert ">80<" in steady  # conditions
    assert "90.0%" in steady  # 72 of 80 valid
    # the colours of the badges: green, amber, red
    assert ".snap-badge-pass{background:#1a7f37}" in markup
    assert ".snap-badge-borderline{background:#bf8700}" in markup
    assert ".snap-badge-fail{background:#cf222e}" in markup
    # why a model is not a PASS is said next to its badge
    assert "inter-paraphrase r (original design) (below)" in verdicts
    assert "CV mean (original design) (acceptable)" in verdicts


def test_the_run_is_described(markup: str) -> None:
    facts = markup[markup.index('<dl class="snap-facts">') : markup.index("</dl>")]
    for expected in (
        "fake-steady, fake-borderline, fake-flaky",
        "profile (item bank fake0digest0)",
        "none",
        "2026-01-02T03:04:05",
    ):
        assert expected in facts
    assert f"<dd>{len(fake_observations())}</dd>" in facts


def test_metric_cells_are_coloured_by_status_with_a_legend(markup: str) -> None:
    legend = markup[markup.index('<ul class="snap-legend">') :]
    for status in ("excellent", "target", "acceptable", "below", "undefined", "not-judged"):
        assert f"snap-status-{status}" in legend
    retest = row_of(markup, "test-retest r (original design)")
    assert "min ≥ 0.60, target ≥ 0.70, excellent ≥ 0.80" in retest
    assert '<td class="snap-num snap-status-excellent"' in retest
    assert "0.93<br><small>[0.88, 0.97]" in retest
    assert 'class="snap-status-undefined"' in retest
    cv = row_of(markup, "CV mean (original design)")
    assert "snap-status-acceptable" in cv
    assert "12.5 %" in cv
    assert "snap-status-below" in row_of(markup, "inter-paraphrase r (original design)")


def test_an_undefined_metric_shows_its_reason_and_is_not_coloured_as_judged(markup: str) -> None:
    retest = row_of(markup, "test-retest r (original design)")
    assert "undefined<br><small>zero variance: every answer was 5</small>" in retest
    flaky = markup[markup.index("fake-flaky · composite") :]
    detail = row_of(flaky, "test-retest r (original design)")
    assert "zero variance: every answer was 5" in detail
    assert ">undefined<" in detail
    # a per-construct alpha that is undefined, although not judged, reads as undefined with its reason
    assert "too few complete rows or columns" in row_of(
        flaky, "Cronbach \N{GREEK SMALL LETTER ALPHA} care (statements)"
    )
    # a note travels with its metric
    assert "fake note: few complete rows" in row_of(flaky, "inter-paraphrase r (original design)")


@pytest.fixture(scope="module")
def baseline_markup() -> str:
    return render(fake_document(with_baseline=True), fake_observations(), FAKE_THRESHOLDS)


def test_baseline_section_only_with_a_baseline(markup: str, baseline_markup: str) -> None:
    assert 'id="snap-baseline"' not in markup
    assert "snap-baseline-chart" not in markup
    assert 'id="snap-baseline"' in baseline_markup
    assert "snap-baseline-chart" in svg_elements(baseline_markup)
    start, end = baseline_markup.index('id="snap-baseline"'), baseline_markup.index('id="snap-downloads"')
    section = baseline_markup[start:end]
    assert "fake-steady cv_mean vs fake-old: REGRESSION" in section
    # a failed check comes first, red, its decision and reason before the figures
    regression = section.index('<td class="snap-status-below"><b>REGRESSION</b><br>worse than the baseline')
    assert regression < section.index(">non-inferior<")
    assert "30/32 cells" in section  # coverage: compared / designed
    # a check not compared is grey, with its reason: never green
    assert '<td class="snap-status-undefined"><b>not compared</b><br>no row answered by both models' in section
    # a comparison written before outcomes were recorded reads from ``regressed``
    assert ">non-inferior<" in section
    assert "0.010 <small>[-0.020, 0.040]</small>" in section  # difference and interval


def test_a_baseline_model_is_grey_and_coloured_against_the_thresholds(baseline_markup: str) -> None:
    assert '<span class="snap-badge snap-badge-none">BASELINE</span>' in baseline_markup
    old = baseline_markup[baseline_markup.index("BASELINE</span> fake-old") :]
    # the document has no status for the baseline's metrics: judged here on the point value
    assert '<td class="snap-num snap-status-excellent">0.930<br>' in row_of(old, "test-retest r (original design)")


def test_charts_are_matplotlib_svg_inline(markup: str) -> None:
    # the first screen's chart is drawn by hand (tests/unit/report/test_first_screen.py); the rest by matplotlib
    charts = {name: svg for name, svg in svg_elements(markup).items() if name != "snap-headline-chart"}
    expected = {"snap-radar", "snap-effects"} | {
        f"snap-{kind}-{i}" for kind in ("heatmap", "scores") for i in (1, 2, 3)
    }
    assert set(charts) == expected
    for svg in charts.values():
        assert re.search(r"<dc:title>Matplotlib v[\d.]+, https://matplotlib.org/</dc:title>", svg)
        assert "<text" in svg  # svg.fonttype none: text stays text ...
        assert 'id="DejaVuSans-' not in svg  # ... and no glyphs are embedded as paths
        assert "<image" not in svg  # nothing rasterised
    assert "<?xml" not in markup
    assert "<!DOCTYPE" not in markup
    # the heatmaps are of mean keyed scores per item and level, both panels
    assert "per system prompt" in charts["snap-heatmap-1"]
    assert "per temperature" in charts["snap-heatmap-1"]
    assert "M02 fairness" in charts["snap-heatmap-1"]
    assert "unscored" in charts["snap-scores-1"]
    assert "refusal" in charts["snap-scores-1"]
    assert "residual" in charts["snap-effects"]
    assert "1 \N{MINUS SIGN} CV/100" in charts["snap-radar"]
    assert "target" in charts["snap-radar"]
    # clip-path ids are random per chart, so charts in one page never share one
    ids = re.findall(r'<clipPath id="([^"]+)"', markup)
    assert len(ids) == len(set(ids))


def test_charts_leave_matplotlib_state_alone(document: Document, thresholds: Thresholds) -> None:
    before = dict(matplotlib.rcParams)
    render(document, fake_observations(("fake-steady",)), thresholds)
    assert dict(matplotlib.rcParams) == before
    assert "matplotlib.pyplot" not in sys.modules or not __import__("matplotlib.pyplot").pyplot.get_fignums()


def test_breakdowns_per_factor(markup: str) -> None:
    steady = markup[markup.index("fake-steady · composite") : markup.index("fake-borderline · composite")]
    for caption in ("per system prompt", "per temperature", "per context", "mean keyed score per construct"):
        assert f"<caption>{caption}</caption>" in steady
    t1 = re.search(r'<tr><th scope="row">t1</th>.*?</tr>', steady, re.S)
    assert t1 is not None
    # the undefined r is grey, the ICC of 0.41 is below its minimum
    assert 'snap-status-undefined">—' in t1.group(0)
    assert 'snap-status-below">0.410' in t1.group(0)


def test_downloads_decode_to_the_csv_and_the_json(
    markup: str, document: Document, observations: list[Observation], tmp_path: Path
) -> None:
    files = downloads(markup)
    assert set(files) == {"observations.csv", "analysis.json"}
    write_csv(tmp_path / "observations.csv", observations)
    assert files["observations.csv"] == ("text/csv;charset=utf-8", (tmp_path / "observations.csv").read_bytes())
    media_type, payload = files["analysis.json"]
    assert media_type == "application/json;charset=utf-8"
    assert json.loads(payload) == document


def test_a_large_csv_is_embedded_compressed(
    observations: list[Observation], thresholds: Thresholds, tmp_path: Path
) -> None:
    one_model = [o for o in observations if o.model == "fake-steady"]
    files = downloads(render(profile_document({}), one_model, thresholds, csv_compress_over=0))
    media_type, payload = files["observations.csv.xz"]
    assert media_type == "application/x-xz"
    write_csv(tmp_path / "observations.csv", one_model)
    assert lzma.decompress(payload) == (tmp_path / "observations.csv").read_bytes()
    (tmp_path / "observations.csv.xz").write_bytes(payload)
    assert len(pandas.read_csv(tmp_path / "observations.csv.xz")) == len(one_model)  # read as it is


def test_a_large_analysis_document_is_embedded_compressed() -> None:
    document = {"instruments": {"profile": {"models": {f"m{i}": {"verdict": "PASS"} for i in range(40_000)}}}}
    download = analysis_download(document)
    assert download.filename == "analysis.json.gz"
    assert json.loads(gzip.decompress(download.payload)) == document
    assert analysis_download({"session": {}}).filename == "analysis.json"


def test_the_csv_keeps_quotes_commas_newlines_and_unicode(tmp_path: Path) -> None:
    import dataclasses

    tricky = [
        dataclasses.replace(
            o, raw_answer=answer, reason='a "quoted", comma', messages=[{"role": "user", "content": "é\n…"}]
        )
        for o, answer in zip(fake_observations(("fake-a",))[:5], ("x,y", "line\nbreak", None, "ü", '"'), strict=True)
    ]
    write_csv(tmp_path / "observations.csv", tricky)
    rows = list(csv.reader(io.StringIO((tmp_path / "observations.csv").read_text(encoding="utf-8"), newline="")))
    assert len(rows) == 6
    assert rows[2][rows[0].index("raw_answer")] == "line\nbreak"


def test_untrusted_text_never_becomes_markup(observations: list[Observation], thresholds: Thresholds) -> None:
    document, bad_observations = poisoned(fake_document(), observations)
    markup = render(document, bad_observations, thresholds)
    elements = Elements(markup)
    assert only_own_scripts(markup)
    assert not elements.named("img")
    assert not elements.named("iframe")
    handlers = [(tag, name) for tag, attrs in elements.tags for name in attrs if name.lower().startswith("on")]
    assert handlers == []
    # the only svg elements are the charts, each with its id
    assert all(attrs.get("id", "").startswith("snap-") for attrs in elements.named("svg"))  # type: ignore[union-attr]
    for payload in XSS_PAYLOADS:
        assert html.escape(payload, quote=True) in markup  # shown, as text
    # the payloads also reach the charts (a model name, a level, a construct) and stay text there
    radar = svg_elements(markup)["snap-radar"]
    assert "&lt;script&gt;" in radar


def test_an_empty_run_still_renders(thresholds: Thresholds) -> None:
    markup = render({"session": {}, "instruments": {}, "baseline": []}, [], thresholds)
    assert "No instrument was analysed in this run." in markup
    assert "0 observations" in markup


def test_observations_without_an_analysis_get_a_section(thresholds: Thresholds) -> None:
    markup = render(profile_document({}), fake_observations(("fake-unanalysed",)), thresholds)
    assert "NOT JUDGED</span> fake-unanalysed" in markup
    assert "snap-heatmap-1" in svg_elements(markup)


def test_a_document_from_the_real_analysis_renders(observations: list[Observation], thresholds: Thresholds) -> None:
    from snap_bench.analysis.metric_tables import AnalysisSettings, analyse
    from snap_bench.judging.verdicts import Threshold, ThresholdConfig, judge, rank, to_json

    analyses = analyse(observations, shipped_instruments(), AnalysisSettings(n_resamples=20))
    config = ThresholdConfig(
        judge="point",
        metrics={
            name: Threshold(t["better"], t["minimum"], t["target"], t.get("excellent"))
            for name, t in thresholds.items()
        },
        stand_in_metric=None,
        stand_in=None,
        composite_weights={"test_retest_r": 0.5, "icc2_1": 0.5},
        non_inferiority={},
    )
    verdicts = {key: judge(analysis, config) for key, analysis in analyses.items()}
    rank(list(verdicts.values()))
    document = {
        "session": {"models": [key[0] for key in analyses], "instruments": {"profile": "fake"}},
        **profile_document(
            {a.model: {"instrument": a.instrument, **to_json(verdicts[k], a)} for k, a in analyses.items()}
        ),
        "baseline": [],
    }
    document = json.loads(json.dumps(document))  # as read back from analysis.json
    markup = render(document, observations, thresholds)
    # the headline, the G study's variance shares, the original design's radar and effects; two per model
    assert len(svg_elements(markup)) == 4 + 2 * len(analyses)
    assert "ICC(2,1)" in markup
    assert "snap-model-3" in markup
