"""How long the whole HTML report takes and how large it is: 10 models x 2,160 observations.

The report is pytest-html's file with snap-bench's summary and row extras, so it is measured as a
whole: a throw-away project runs one trivial test per observation (the same row texts, failure
messages and pytest-html hooks as the plugin; the real instrument's prompts and question texts), once
without and once with ``--html``. The report's cost is the difference in wall time; its size is the
file's. The summary fragment alone, and a bare ``pandas.DataFrame.to_html`` of the same observations
(the baseline), are measured in the same run. Each timing is the median of ``--repeat`` runs (the
pytest runs with and without the report alternate), because a 2-core machine's timings move with
whatever else it runs. Targets: under 15 s, under 20 MB.

    .venv/bin/python -m bench.report_speed [--models 10] [--resamples 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from bench.analysis_speed import simulated_observations
from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings, analyse
from snap_bench.design.config import ConfigFiles
from snap_bench.instruments import Selection
from snap_bench.instruments.profile.instrument import ProfileInstrument
from snap_bench.judging.verdicts import judge, load_thresholds, rank, to_json
from snap_bench.observations.observation import Observation

CONFIG = ConfigFiles.shipped()
PROFILE = ProfileInstrument(CONFIG)
PROFILE_SPECS = {**SHARED_METRICS, **ProfileInstrument.metrics}


def analysis_document(observations: list[Observation], resamples: int) -> dict[str, Any]:
    analyses = analyse(observations, {"profile": PROFILE}, AnalysisSettings(n_resamples=resamples))
    config = load_thresholds(CONFIG, "profile", {}, None, PROFILE_SPECS)
    verdicts = {key: judge(analysis, config) for key, analysis in analyses.items()}
    rank(list(verdicts.values()))
    models = {a.model: {"instrument": a.instrument, **to_json(verdicts[k], a)} for k, a in analyses.items()}
    session = {
        "models": sorted(models),
        "instruments": {"profile": "synthetic"},
        "record_mode": "none",
        "resamples": resamples,
        "seed": 20261122,
        "judge": "thresholds.yaml",
        "finished": "synthetic",
    }
    return {"session": session, "instruments": {"profile": {"models": models}}, "baseline": []}


def with_real_prompts(observations: list[Observation]) -> list[Observation]:
    """Give each synthetic observation the messages the real instrument sends for its condition."""
    instrument = ProfileInstrument(CONFIG)
    messages = {c.id: instrument.messages(c) for c in instrument.conditions(Selection())}
    # The synthetic design also puts personality items in the dilemma context; they get the C0 prompt.
    return [
        dataclasses.replace(
            o, messages=messages.get(o.condition_id) or messages[o.condition_id.replace("-C1-", "-C0-")]
        )
        for o in observations
    ]


PROJECT_CONFTEST = """
import json, pickle, os
import pytest
from snap_bench.observations.observation import Observation
from snap_bench.report.rows import OBSERVATION_ATTRIBUTE, QUESTION_ATTRIBUTE

# The rows as the plugin's session shows them: the observation's text, no links column.
pytest_plugins = ["snap_bench.plugin.reporting"]

DATA = pickle.loads(open(os.environ["REPORT_BENCH_DATA"], "rb").read())
OBSERVATIONS = DATA["observations"]


def pytest_generate_tests(metafunc):
    if "index" in metafunc.fixturenames:
        ids = [f"{o.model}-{o.condition_id}" for o in OBSERVATIONS]
        metafunc.parametrize("index", range(len(OBSERVATIONS)), ids=ids)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call" and hasattr(item, "callspec"):
        observation = OBSERVATIONS[item.callspec.params["index"]]
        setattr(report, OBSERVATION_ATTRIBUTE, observation.to_dict())
        setattr(report, QUESTION_ATTRIBUTE, DATA["questions"].get(observation.condition_id))
    return report


def pytest_html_results_summary(prefix, summary, postfix, session):
    summary.append(DATA["summary"])

"""

PROJECT_TEST = """
import pytest
from conftest import OBSERVATIONS


def test_likert(index):
    observation = OBSERVATIONS[index]
    if not observation.is_scored:
        pytest.fail(f"invalid answer ({observation.code}): {observation.reason}\\nraw answer: "
                    f"{observation.raw_answer!r}", pytrace=False)
"""


def run_project(folder: Path, *extra: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *extra],
        cwd=folder,
        env={**os.environ, "REPORT_BENCH_DATA": str(folder / "data.pickle")},
        stdout=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - started


def median_seconds(measure: Callable[[], float], repeat: int) -> float:
    return statistics.median(measure() for _ in range(repeat))


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing; the median is shown")
    parser.add_argument("--keep", type=Path, default=None, metavar="PATH", help="copy the report here")
    arguments = parser.parse_args()
    # The configured models' names, so that the test ids are as long as a real run's.
    names = list(yaml.safe_load((CONFIG.packaged / "models.yaml").read_text(encoding="utf-8"))["models"])
    observations = [
        dataclasses.replace(o, model=names[int(o.model.split("-")[1]) % len(names)])
        for o in with_real_prompts(simulated_observations(arguments.models))
    ]
    document = analysis_document(observations, arguments.resamples)
    thresholds = yaml.safe_load((CONFIG.packaged / "thresholds.yaml").read_text(encoding="utf-8"))["profile"]["metrics"]
    instrument = PROFILE
    questions = {c.id: instrument.question(c) for c in instrument.conditions(Selection())}
    questions.update({key.replace("-C0-", "-C1-"): value for key, value in questions.items() if "-C0-" in key})
    import pandas

    rows = [o.to_dict() for o in observations]
    baseline = pandas.DataFrame(rows).to_html()
    baseline_s = median_seconds(lambda: timed(lambda: pandas.DataFrame(rows).to_html()), arguments.repeat)

    from snap_bench.report import summary_html

    summary = summary_html(document, observations, {"profile": thresholds}, {"profile": PROFILE})
    summary_s = median_seconds(
        lambda: timed(lambda: summary_html(document, observations, {"profile": thresholds}, {"profile": PROFILE})),
        arguments.repeat,
    )

    with tempfile.TemporaryDirectory(prefix="snap-report-bench-") as temporary:
        folder = Path(temporary)
        (folder / "conftest.py").write_text(PROJECT_CONFTEST, encoding="utf-8")
        (folder / "benchmarks").mkdir()
        (folder / "benchmarks" / "test_profile.py").write_text(PROJECT_TEST, encoding="utf-8")
        (folder / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n", "utf-8")
        data = {"observations": observations, "questions": questions, "summary": summary}
        (folder / "data.pickle").write_bytes(pickle.dumps(data))
        pairs = [
            (run_project(folder), run_project(folder, "--html=report.html", "--self-contained-html"))
            for _ in range(arguments.repeat)
        ]
        bare_s = statistics.median(bare for bare, _ in pairs)
        with_report_s = statistics.median(with_report for _, with_report in pairs)
        report = folder / "report.html"
        megabytes = report.stat().st_size / 1e6 if report.exists() else float("nan")
        if arguments.keep is not None and report.exists():
            shutil.copyfile(report, arguments.keep)

    report_s = summary_s + max(with_report_s - bare_s, 0.0)
    print(f"observations: {len(observations):,} ({arguments.models} models); median of {arguments.repeat} runs each")
    print(f"baseline DataFrame.to_html:      {baseline_s:.2f} s, {len(baseline.encode()) / 1e6:.1f} MB")
    print(f"summary fragment:                {summary_s:.2f} s, {len(summary.encode()) / 1e6:.1f} MB")
    print(f"pytest run without / with --html: {bare_s:.2f} s / {with_report_s:.2f} s")
    print(
        f"whole report (summary + pytest-html's extra time): {report_s:.2f} s, {megabytes:.1f} MB "
        f"(ratio to baseline time {report_s / baseline_s:.2f}x); targets < 15 s and < 20 MB: "
        f"{'met' if report_s < 15 and megabytes < 20 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
