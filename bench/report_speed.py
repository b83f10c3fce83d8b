"""How long the HTML report's parts take and how large they are: 10 models x 2,160 observations.

Measures, in one run: the analysis document (not timed here; see bench/analysis_speed.py), the
summary fragment (verdicts, tables, matplotlib charts, embedded downloads), and the per-test row
extras as the plugin attaches them (every message on unscored answers, the question on the others),
with the real instrument's prompts; next to a bare
``pandas.DataFrame.to_html`` of the same observations as the baseline. pytest-html's own per-row
markup comes on top of the row extras. Targets: under 15 s, under 20 MB.

    .venv/bin/python -m bench.report_speed [--models 10] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

import yaml

from bench.analysis_speed import simulated_observations
from snap_bench.analysis import AnalysisSettings, analyse
from snap_bench.instruments import Selection
from snap_bench.instruments.snap import SnapInstrument
from snap_bench.observation import Observation
from snap_bench.verdicts import judge, load_thresholds, rank, to_json

CONFIG = Path(__file__).resolve().parent.parent / "config"


def analysis_document(observations: list[Observation], resamples: int) -> dict[str, Any]:
    analyses = analyse(observations, AnalysisSettings(n_resamples=resamples))
    config = load_thresholds(CONFIG, "snap", {}, None)
    verdicts = {key: judge(analysis, config) for key, analysis in analyses.items()}
    rank(list(verdicts.values()))
    models = {a.model: {"instrument": a.instrument, **to_json(verdicts[k], a)} for k, a in analyses.items()}
    session = {
        "models": sorted(models),
        "instruments": {"snap": "synthetic"},
        "record_mode": "none",
        "resamples": resamples,
        "seed": 20261122,
        "judge": "thresholds.yaml",
        "finished": "synthetic",
    }
    return {"session": session, "models": models, "baseline": []}


def with_real_prompts(observations: list[Observation]) -> list[Observation]:
    """Give each synthetic observation the messages the real instrument sends for its condition."""
    instrument = SnapInstrument(CONFIG)
    messages = {c.id: instrument.messages(c) for c in instrument.conditions(Selection())}
    # The synthetic design also puts personality items in the dilemma context; they get the C0 prompt.
    return [
        dataclasses.replace(
            o, messages=messages.get(o.condition_id) or messages[o.condition_id.replace("-C1-", "-C0-")]
        )
        for o in observations
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=1000)
    arguments = parser.parse_args()
    observations = with_real_prompts(simulated_observations(arguments.models))
    document = analysis_document(observations, arguments.resamples)
    thresholds = yaml.safe_load((CONFIG / "thresholds.yaml").read_text(encoding="utf-8"))["snap"]["metrics"]
    import pandas

    started = time.perf_counter()
    baseline = pandas.DataFrame([o.to_dict() for o in observations]).to_html()
    baseline_s = time.perf_counter() - started

    from snap_bench.report import observation_html, summary_html

    started = time.perf_counter()
    summary = summary_html(document, observations, thresholds)
    summary_s = time.perf_counter() - started
    started = time.perf_counter()
    rows = [observation_html(o, with_messages=not o.is_valid) for o in observations]
    rows_s = time.perf_counter() - started

    megabytes = (len(summary.encode()) + sum(len(row.encode()) for row in rows)) / 1e6
    total_s = summary_s + rows_s
    print(f"observations: {len(observations):,} ({arguments.models} models)")
    print(f"baseline DataFrame.to_html: {baseline_s:.2f} s, {len(baseline.encode()) / 1e6:.1f} MB")
    print(f"summary fragment:           {summary_s:.2f} s, {len(summary.encode()) / 1e6:.1f} MB")
    print(f"per-test row extras:        {rows_s:.2f} s, {sum(len(r.encode()) for r in rows) / 1e6:.1f} MB")
    print(
        f"report parts together:      {total_s:.2f} s, {megabytes:.1f} MB "
        f"(ratio to baseline time {total_s / baseline_s:.2f}x); targets < 15 s and < 20 MB: "
        f"{'met' if total_s < 15 and megabytes < 20 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
