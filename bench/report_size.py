"""How large the HTML report is at ten models over every shipped instrument (52,040 conditions): target < 5 MB.

The study is synthetic (:mod:`bench.synthetic_study`: every shipped instrument's conditions, answered and
scored, then analysed and judged as a session does), not recorded. The report is pytest-html's file with
snap-bench's summary, as a session writes it: a throw-away project runs one trivial test per condition
(carrying its observation, so that the conditions leave pytest-html's table as they do in a session) and
one per check (failing where the check failed), with ``--html``. Printed: the file's size against the
target, its bytes per condition, and what its largest parts weigh (the conditions' data, the embedded
downloads, the rest of the summary).

    .venv/bin/python -m bench.report_size [--models 10] [--resamples 100] [--keep PATH]
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.synthetic_study import synthetic_study
from snap_bench.report import summary_html
from snap_bench.report.conditions import DATA_ID

TARGET_MB = 5.0
HTML = ("--html=report.html", "--self-contained-html")

PROJECT_CONFTEST = """
import os, pickle
import pytest
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE

pytest_plugins = ["snap_bench.plugin.reporting"]

DATA = pickle.loads(open(os.environ["REPORT_SIZE_DATA"], "rb").read())
OBSERVATIONS, CHECKS = DATA["observations"], DATA["checks"]


def pytest_generate_tests(metafunc):
    if "condition" in metafunc.fixturenames:
        ids = [f"{o['model']}-{o['instrument']}-{o['condition_id']}" for o in OBSERVATIONS]
        metafunc.parametrize("condition", range(len(OBSERVATIONS)), ids=ids)
    if "check" in metafunc.fixturenames:
        metafunc.parametrize("check", range(len(CHECKS)), ids=[c["name"] for c in CHECKS])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call" and "condition" in getattr(item, "callspec", pytest).params:
        setattr(report, OBSERVATION_ATTRIBUTE, OBSERVATIONS[item.callspec.params["condition"]])
    return report


def pytest_html_results_summary(prefix, summary, postfix, session):
    summary.append(DATA["summary"])
"""

PROJECT_TEST = """
import pytest
from conftest import CHECKS


def test_condition(condition):
    pass


def test_threshold(check):
    if CHECKS[check]["decision"] == "fail":
        pytest.fail(CHECKS[check]["message"], pytrace=False)
"""


def written_report(summary: str, study_observations: list[dict[str, object]], checks: list[dict[str, str]]) -> bytes:
    """The report.html pytest-html writes for the study's conditions and checks, with ``summary`` in it."""
    with tempfile.TemporaryDirectory(prefix="snap-report-size-") as temporary:
        folder = Path(temporary)
        (folder / "conftest.py").write_text(PROJECT_CONFTEST, encoding="utf-8")
        (folder / "test_study.py").write_text(PROJECT_TEST, encoding="utf-8")
        (folder / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n", "utf-8")
        data = {"observations": study_observations, "checks": checks, "summary": summary}
        (folder / "data.pickle").write_bytes(pickle.dumps(data))
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *HTML],
            cwd=folder,
            env={**os.environ, "REPORT_SIZE_DATA": str(folder / "data.pickle")},
            stdout=subprocess.DEVNULL,
            check=False,
        )
        return (folder / "report.html").read_bytes()


def parts(page: str) -> dict[str, int]:
    """Bytes of the report's largest parts: the conditions' data and each embedded download."""
    found: dict[str, int] = {}
    data = re.search(rf'id="{DATA_ID}">([^<]*)</script>', page)
    found["conditions' data (embedded once, unpacked on demand)"] = len(data.group(1)) if data else 0
    for match in re.finditer(r'download="([^"]+)" href="([^"]+)"', page):
        found[f"download {match.group(1)}"] = len(match.group(2))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=100, help="bootstrap resamples of the analysis")
    parser.add_argument("--keep", type=Path, default=None, metavar="PATH", help="copy the report here")
    arguments = parser.parse_args()
    started = time.perf_counter()
    study = synthetic_study(arguments.models, arguments.resamples)
    studied_s = time.perf_counter() - started
    started = time.perf_counter()
    summary = summary_html(study.document, study.observations, study.thresholds, study.instruments, checks=study.checks)
    summary_s = time.perf_counter() - started
    checks = [{"name": c.name, "decision": c.decision, "message": c.message} for c in study.checks]
    report = written_report(summary, [o.to_dict() for o in study.observations], checks)
    if arguments.keep is not None:
        arguments.keep.write_bytes(report)
    n = len(study.observations)
    megabytes = len(report) / 1e6
    print(
        f"study: {n:,} conditions ({arguments.models} models x {len(study.instruments)} instruments), "
        f"synthetic, analysed in {studied_s:.0f} s; summary drawn in {summary_s:.1f} s"
    )
    print(
        f"report.html: {megabytes:.2f} MB, {len(report) / n:.0f} bytes per condition; "
        f"target < {TARGET_MB:g} MB: {'met' if megabytes < TARGET_MB else 'NOT met'}"
    )
    page = report.decode("utf-8")
    for name, size in parts(page).items():
        print(f"  {name}: {size / 1e6:.2f} MB ({size / n:.0f} bytes per condition)")
    print(
        f"  everything else (pytest-html, the summary's tables and charts): "
        f"{(len(report) - sum(parts(page).values())) / 1e6:.2f} MB"
    )


if __name__ == "__main__":
    main()
