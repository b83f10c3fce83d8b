"""A real pytest-html report with the snap-bench summary and row extras, opened in headless Chromium.

Needs the ``playwright`` Python package and a Chromium binary (Debian: ``apt-get install chromium``);
fails without them (deselect with ``-m "not browser"``). Playwright's own browser download is never
used: the system Chromium is driven through ``executable_path``. The screenshot lands in the test's tmp_path.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from snap_bench.instruments import metric_catalogue
from snap_bench.judging.checks import CheckRecord
from snap_bench.observations.observation import Observation
from snap_bench.report import summary_html
from tests.conftest import BenchProject, shipped_instruments
from tests.fake_openai_server import FakeOpenAIServer
from tests.unit.report.fake_data import FAKE_THRESHOLDS, XSS_PAYLOADS, fake_document, fake_observations, poisoned

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
# Payloads that would leave a trace if they ran: a flag on window, besides the alert(1) of XSS_PAYLOADS.
FLAG_PAYLOADS = ('<img src=x onerror="window.__xss = 1">', "<script>window.__xss = 2</script>")
# Hooks the dialogs before any script of the page runs, so a payload that calls them is recorded.
RECORD_DIALOGS = """
window.__dialogs = [];
for (const name of ["alert", "confirm", "prompt"]) {
  window[name] = (message) => { window.__dialogs.push(name + ": " + String(message)); };
}
"""
# The conftest of the inner pytest run: the summary fragment in pytest-html's summary section, and the
# poisoned observation as every test row's text, through the same pytest-html hooks as the plugin's.
INNER_CONFTEST = """
import json
from pathlib import Path

import pytest

from snap_bench.report.rows import OBSERVATION_ATTRIBUTE, QUESTION_ATTRIBUTE

# The rows as the plugin's session shows them: the observation's text, no links column.
pytest_plugins = ["snap_bench.plugin.reporting"]

HERE = Path(__file__).parent


def pytest_html_results_summary(prefix, summary, postfix):
    summary.append((HERE / "snap-summary.html").read_text(encoding="utf-8"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        setattr(report, OBSERVATION_ATTRIBUTE, json.loads((HERE / "observation.json").read_text(encoding="utf-8")))
        if item.name == "test_fake_one":  # a valid row shows the question; the failed one every message
            setattr(report, QUESTION_ATTRIBUTE, (HERE / "question.txt").read_text(encoding="utf-8"))
    return report

"""


def record_error(problems: list[str], message: Any) -> None:
    if message.type == "error":
        problems.append(f"console error: {message.text}")


def record_dialog(dialogs: list[str], dialog: Any) -> None:
    dialogs.append(dialog.message)
    dialog.dismiss()


@pytest.fixture(scope="module")
def sync_api() -> Any:
    # A missing browser fails the check rather than skipping it: a skipped check would pass CI unseen.
    # Deselect it with -m "not browser" on a machine that cannot have Chromium.
    try:
        import playwright.sync_api as api
    except ImportError:
        pytest.fail("the browser check needs playwright: pip install -e '.[test]'", pytrace=False)
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)", pytrace=False)
    return api


@pytest.fixture(scope="module")
def poisoned_report() -> tuple[str, dict[str, Any], Observation]:
    """The summary fragment of the poisoned fake run, and the row whose extra carries every payload.

    Rendered before pytester's fixture starts: pytester restores ``sys.modules`` after each test, and
    numpy (imported by the charts) cannot be imported a second time in one process.
    """
    document, observations = poisoned(fake_document(with_baseline=True), fake_observations())
    answer = "\n".join([*FLAG_PAYLOADS, *XSS_PAYLOADS])
    row = dataclasses.replace(observations[0], raw_answer=answer, reason=FLAG_PAYLOADS[0], model=FLAG_PAYLOADS[1])
    return summary_html(document, observations, {"profile": FAKE_THRESHOLDS}, shipped_instruments()), document, row


def build_report(pytester: pytest.Pytester, fragment: str, row: Observation) -> Path:
    (pytester.path / "snap-summary.html").write_text(fragment, encoding="utf-8")
    (pytester.path / "observation.json").write_text(json.dumps(row.to_dict()), encoding="utf-8")
    (pytester.path / "question.txt").write_text("\n".join(FLAG_PAYLOADS), encoding="utf-8")
    pytester.makeconftest(INNER_CONFTEST)
    pytester.makepyfile(
        test_fake_benchmark="def test_fake_one():\n    pass\n\n\ndef test_fake_two():\n    assert 1 + 1 == 3\n"
    )
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    # in a subprocess, as a user runs it: the in-process run cannot assert-rewrite the already imported plugin
    result = pytester.runpytest_subprocess("--html=report.html", "--self-contained-html", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    return pytester.path / "report.html"


def test_the_report_renders_and_runs_no_untrusted_script(
    sync_api: Any, poisoned_report: tuple[str, dict[str, Any], Observation], pytester: pytest.Pytester, tmp_path: Path
) -> None:
    fragment, document, row = poisoned_report
    report = build_report(pytester, fragment, row)
    problems: list[str] = []
    dialogs: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
            page.add_init_script(RECORD_DIALOGS)
            page.on("console", lambda message: record_error(problems, message))
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on("dialog", lambda dialog: record_dialog(dialogs, dialog))
            page.goto(report.as_uri(), wait_until="load")

            # the results table with the row extras (pytest-html inserts them with insertAdjacentHTML)
            page.click("#show_all_details")
            # five models: each model's section starts folded; a reader unfolds it
            for section in page.locator("details.snap-model > summary").all():
                section.click()
            assert page.locator("details.snap-model:not([open])").count() == 0
            page.wait_for_timeout(500)  # an injected <img onerror> would fire after its failed load

            summary = page.locator("#snap-report")
            box = summary.bounding_box()
            assert box is not None
            assert box["width"] > 0
            assert box["height"] > 0
            charts = page.locator("#snap-report figure.snap-chart > svg")
            # the headline, radar, effects, baseline; heatmap and answers for each of the three models
            assert charts.count() == 4 + 2 * 3
            for index in range(charts.count()):
                chart = charts.nth(index).bounding_box()
                assert chart is not None
                assert chart["width"] > 50, charts.nth(index).get_attribute("id")
                assert chart["height"] > 50, charts.nth(index).get_attribute("id")
            assert page.locator("#snap-report .snap-badge-pass").first.is_visible()

            # the payloads are on the page as text, and none of them ran
            assert XSS_PAYLOADS[0] in summary.inner_text()
            # the passed row went to the conditions table; the failed one stays with its messages as its log
            logs = page.locator(".extras-row .log")
            assert logs.count() == 1
            for payload in FLAG_PAYLOADS:
                assert payload in logs.first.inner_text()
            # the conditions table finds a payload by search and opens it as text
            page.fill("#snap-conditions input[type=search]", "refusal")
            page.locator("#snap-conditions tbody tr").first.click()
            assert page.locator(".snap-cond-detail").is_visible()
            assert page.locator(".snap-cond-detail script, .snap-cond-detail img").count() == 0
            assert page.evaluate("window.__xss") is None
            assert page.evaluate("window.__dialogs") == []
            assert page.locator("#snap-report script, .extras-row .log script, .extras-row .log img").count() == 0
            assert page.locator("th", has_text="Links").count() == 0

            # the embedded analysis.json downloads as the document it was made from
            with page.expect_download() as download:
                page.click("#snap-report a[download='analysis.json']")
            assert json.loads(Path(download.value.path()).read_text(encoding="utf-8")) == document

            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert problems == []
    assert dialogs == []
    assert (tmp_path / "report.png").stat().st_size > 10_000


# Two items, two temperatures: 54 conditions, enough for the checks, the matrix and the headline chart.
E2E_SLICE = ("--snap-items=M01,P01", "--snap-prompts=NEU", "--snap-temperatures=0,1", "--snap-resamples=50")
E2E_PAYLOAD = '<img src=x onerror="window.__xss = 3"> 4'


def answer_or_markup(index: int) -> str:
    """Every fifth answer carries markup that would run if it became HTML; the others vary from 1 to 5."""
    return E2E_PAYLOAD if index % 5 == 0 else str(1 + index % 5)


def test_the_real_report_first_screen_checks_search_and_no_script_from_model_text(
    sync_api: Any,
    bench: BenchProject,
    fake_server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    asked = itertools.count()
    fake_server.script.answer = lambda request: answer_or_markup(next(asked))
    result = bench.run("--model=fake-model", *E2E_SLICE, "-rA", gate=True)
    outcomes = result.parseoutcomes()
    checks = [line for line in result.outlines if line.startswith(("PASSED", "FAILED")) and "thresholds[" in line]
    # -rA lists passed and failed checks; those whose figure could not be computed are counted on the last line
    not_judged = re.search(r"(\d+) not judged", result.outlines[-1])
    checks += ["not judged"] * (int(not_judged.group(1)) if not_judged else 0)
    report = bench.out / "report.html"
    screenshot = tmp_path / "report-first-screen.png"
    dialogs: list[str] = []
    problems: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.add_init_script(RECORD_DIALOGS)
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.on("dialog", lambda dialog: record_dialog(dialogs, dialog))
            page.goto(report.as_uri(), wait_until="load")

            # the first screen: the title, the matrix and the headline chart, all above the fold
            title = page.locator("h1#title").inner_text()
            assert "snap-bench" in title
            assert "fake-model" in title
            assert re.search(r"\d{4}-\d{2}-\d{2}", title)
            for selector in ("#snap-matrix", "#snap-headline-chart"):
                box = page.locator(selector).bounding_box()
                assert box is not None, selector
                assert box["y"] + box["height"] <= 900, f"{selector} is below the first screen"
            assert page.locator("#snap-matrix .snap-badge").count() == 1  # one model, one instrument
            environment = page.locator("#environment").bounding_box()
            conditions = page.locator("#snap-conditions").bounding_box()
            assert environment is not None
            assert conditions is not None
            assert environment["y"] > conditions["y"]  # pytest-html's environment table comes last

            # the checks are rows of pytest-html's table and of the table of checks, counted as the terminal counts
            rows = page.locator("#results-table tbody.results-table-row")
            assert rows.count() == len(checks) > 0
            assert page.locator("#snap-checks tbody tr").count() == len(checks)
            counts = page.locator(".filters").inner_text()
            assert f"{outcomes.get('passed', 0)} Passed" in counts
            assert f"{outcomes.get('unscored', 0)} Unscored" in counts

            # the conditions table is unpacked when it comes near the screen
            page.locator("#snap-conditions").scroll_into_view_if_needed()
            page.wait_for_selector("#snap-conditions[data-ready]", state="attached")
            # search finds the answers with markup; the opened row shows it as text; nothing ran
            page.fill("#snap-conditions input[type=search]", "onerror")
            shown = page.locator("#snap-conditions .snap-cond-count").inner_text()
            assert shown == "11 of 54 conditions"  # asked 0, 5, ..., 50
            page.locator("#snap-conditions tbody tr").first.click()
            assert E2E_PAYLOAD in page.locator(".snap-cond-detail").inner_text()
            page.wait_for_timeout(300)  # an injected <img onerror> would fire after its failed load
            assert page.evaluate("window.__xss") is None
            assert page.locator("#snap-conditions img, .snap-cond-detail img").count() == 0
            page.fill("#snap-conditions input[type=search]", "")
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(screenshot))
        finally:
            browser.close()
    assert problems == []
    assert dialogs == []
    with capsys.disabled():
        print(f"\nreport first screen (1440x900): {screenshot}")


# Ten models x four instruments: the study's first screen and its conditions table (a thinned design: one cell in
# eight of each instrument, every run of it, so that the report is built in seconds).
TEN_MODELS_EVERY = 8
LONG_REASON = "contradiction rate, t0 1.000 [0.96, 1.00] (maximum <= 0.3); on 1,234 of 1,300"


def ten_model_document(models: list[str], instruments: list[str]) -> tuple[dict[str, Any], list[CheckRecord]]:
    """analysis.json's verdicts for every model and instrument (each verdict, ties and long reasons among them),
    and the checks that decided them."""
    verdicts = ("FAIL", "BORDERLINE", "PASS", "FAIL")
    document: dict[str, Any] = {"session": {"models": models}, "instruments": {}}
    checks = []
    for i, instrument in enumerate(instruments):
        entries = {}
        for j, model in enumerate(models):
            verdict = verdicts[(i + j) % len(verdicts)]
            composite = round(0.1 + 0.08 * j, 2)
            entries[model] = {
                "instrument": instrument,
                "verdict": verdict,
                "composite": composite,
                "composite_ci": [round(composite - 0.05, 2), min(1.0, round(composite + 0.3, 2))],
                "tied_with": [models[(j + 1) % len(models)]] if j % 3 == 0 else [],
            }
            status = "acceptable" if verdict == "BORDERLINE" else "below"
            checks.append(
                CheckRecord(
                    name=f"{model}-{instrument}-contradiction_rate[t0]",
                    kind="threshold",
                    model=model,
                    instrument=instrument,
                    metric="contradiction_rate[t0]",
                    value=1.0,
                    ci_low=0.96,
                    ci_high=1.0,
                    n=1234,
                    n_designed=1300,
                    threshold="maximum <= 0.3, target <= 0.15",
                    margin=-0.7,
                    decision="fail" if verdict == "FAIL" else "pass",
                    message=LONG_REASON,
                    status=status,
                )
            )
        document["instruments"][instrument] = {"title": instrument, "models": entries}
    return document, checks


@pytest.fixture(scope="module")
def ten_model_fragment() -> tuple[str, list[Observation]]:
    from bench.synthetic_study import synthetic_observations
    from snap_bench.report.conditions import conditions_section
    from snap_bench.report.first_screen import first_screen
    from snap_bench.report.summary import STYLE

    observations = synthetic_observations(10, parse=False, every=TEN_MODELS_EVERY)
    document, checks = ten_model_document(
        sorted({o.model for o in observations}), sorted({o.instrument for o in observations})
    )
    markup, script = conditions_section(observations)
    screen = first_screen(document, observations, checks, metric_catalogue())
    fragment = f'{STYLE}<section class="snap-report" id="snap-report">{screen}'
    # a tall section between the first screen and the table, as the report's sections are
    fragment += f'<div style="height:3000px"></div>{markup}</section>{script}'
    return fragment, observations


def test_ten_models_first_screen_fits_and_the_conditions_table_unpacks_on_demand(
    sync_api: Any, ten_model_fragment: tuple[str, list[Observation]], pytester: pytest.Pytester, tmp_path: Path
) -> None:
    fragment, observations = ten_model_fragment
    report = build_report(pytester, fragment, observations[0])
    query = observations[len(observations) // 2].condition_id
    expected = sum(query.lower() in o.condition_id.lower() for o in observations)
    problems: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            page.goto(report.as_uri(), wait_until="load")
            assert page.locator("#snap-matrix .snap-badge").count() == 40  # ten models x four instruments
            overflowing = page.evaluate(
                """() => [...document.querySelectorAll('#snap-matrix th, #snap-matrix td')]
                     .filter((cell) => cell.scrollWidth > cell.clientWidth).map((cell) => cell.innerText)"""
            )
            assert overflowing == []
            for selector in ("#snap-matrix", "#snap-headline-chart"):
                box = page.locator(selector).bounding_box()
                assert box is not None, selector
                assert box["y"] + box["height"] <= 900, f"{selector} is below the first screen"
            page.screenshot(path=str(tmp_path / "ten-models-first-screen.png"))

            # nothing of the table is unpacked or drawn before it comes near the screen
            page.wait_for_timeout(300)
            assert page.locator("#snap-conditions[data-ready]").count() == 0
            assert page.locator("#snap-conditions tbody tr").count() == 0
            page.locator("#snap-conditions").scroll_into_view_if_needed()
            page.wait_for_selector("#snap-conditions[data-ready]", state="attached")
            assert page.locator("#snap-conditions tbody tr").count() > 10
            total = f"{len(observations):,}"
            assert page.locator(".snap-cond-count").inner_text() == f"{total} of {total} conditions"
            page.fill("#snap-conditions input[type=search]", query)
            assert page.locator(".snap-cond-count").inner_text() == f"{expected:,} of {total} conditions"
            page.locator("#snap-conditions tbody tr").first.click()
            assert query in page.locator(".snap-cond-detail").inner_text()
        finally:
            browser.close()
    assert problems == []
    assert expected == 10  # the condition, once per model
