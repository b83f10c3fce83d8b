"""Does the upgrade gate pass an unchanged model on a small questionnaire, and do its intervals cover?

A 12-item YAML questionnaire (1-5 agreement scale, 4 constructs of 3 items, the third item of each
reverse-keyed), asked under the questionnaire kind's defaults: the shipped 4 system prompts x temperatures
0 and 1 x 3 runs (24 conditions per item, 288 per model). The answerer is bench.drift_items' (an item
true score uniform on 1.5-4.5 plus an effect of each prompt on each item, SD 0.3, fixed for the bench): at
temperature 0 it answers the rounded score every run, at temperature 1 the rounded score plus normal noise
(SD ``--noise``, default 1.0 scale point, the shipped models' run-to-run SD at t1), clipped to 1-5. Each
answer is scored by the questionnaire itself (reverse keying included).

Each replicate records the answerer twice (the baseline and the "new" model: an unchanged model) and runs
``compare_with_baseline`` with the questionnaire kind's thresholds (the margins every team's YAML
questionnaire gets), as ``pytest --baseline --snap-gate=baseline`` does. Printed per check: the coverage of
the true difference (0) by its 95 % interval (target >= 90 %), its mean half-width, its margin and the share
of replicates it is non-inferior; and the share of replicates where every check is non-inferior (target
>= 95 %).

    .venv/bin/python -m bench.fixed_design [--replicates 200] [--noise 1.0] [--resamples 1000] [--jobs 2]
    .venv/bin/python -m bench.fixed_design --quick          # 60 replicates
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from bench.drift_items import ITEMS, Answerer, answerer
from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.analysis.planner import scored_observation
from snap_bench.design.config import ConfigFiles
from snap_bench.instruments import Instrument, load_instruments
from snap_bench.instruments.base import Selection
from snap_bench.judging.baseline import BaselineSpec
from snap_bench.judging.comparison import compare_with_baseline
from snap_bench.judging.outcomes import NON_INFERIOR
from snap_bench.judging.verdicts import ThresholdConfig, load_thresholds
from snap_bench.observations.observation import Observation

NAME = "quiz12"
CONFIG = ConfigFiles.shipped()
OLD, NEW = "old", "new"
ANSWERER_SEED = 20260514


# The original design's figures, which the questionnaire kind reports but does not gate, given margins as a team
# that gates them too would (docs/gate.md, Margins): this bench measures every pairing method's interval.
ORIGINAL_FIGURE_MARGINS = {"test_retest_r": 0.30, "icc2_1": 0.30, "cv_mean": 9.0}


def questionnaire_yaml(
    runs: int | None = None, items: int = len(ITEMS), margins: dict[str, float] | None = None
) -> str:
    """``items`` items (12 here), three per construct, the third reverse-keyed (two statement-reverse pairs
    each), named ``quizN``; ``runs``: the design's runs (default: the questionnaire kind's 3); ``margins``:
    upgrade-gate margins of the file's own, over the kind's."""
    labels = "[Disagree strongly, Disagree, Neutral, Agree, Agree strongly]"
    lines = [f"questionnaire: quiz{items}", f"scale: {{points: 5, labels: {labels}}}"]
    lines += [f"runs: {runs}"] if runs is not None else []
    if margins:
        lines += ["thresholds:", "  non_inferiority:", *(f"    {name}: {value}" for name, value in margins.items())]
    lines.append("items:")
    for index in range(items):
        item, construct = f"Q{index + 1:02d}", f"c{index // 3 + 1}"
        reverse = "true" if index % 3 == 2 else "false"
        lines.append(f'  - {{id: {item}, construct: {construct}, text: "Statement {item}.", reverse: {reverse}}}')
    return "\n".join(lines) + "\n"


def load(folder: Path, runs: int | None = None) -> dict[str, Instrument]:
    """Every instrument, the 12-item questionnaire (the original design's figures gated too) written into
    ``folder`` among them."""
    path = folder / f"{NAME}.yaml"
    path.write_text(questionnaire_yaml(runs, margins=ORIGINAL_FIGURE_MARGINS), encoding="utf-8")
    return load_instruments(CONFIG, [path])


@cache
def instruments() -> dict[str, Instrument]:
    return load(Path(tempfile.mkdtemp(prefix="fixed-design-")))


@cache
def thresholds(instrument: str) -> ThresholdConfig:
    return thresholds_of_kind(instruments()[instrument])


def thresholds_of_kind(kind: Instrument) -> ThresholdConfig:
    """The shipped thresholds of a questionnaire (its own file's ``thresholds:`` over the kind's defaults)."""
    return load_thresholds(CONFIG, kind.name, {}, None, {**SHARED_METRICS, **kind.metrics}, kind.thresholds_section())


def recording(
    model: str, truth: Answerer, rng: np.random.Generator, instrument: Instrument | None = None
) -> list[Observation]:
    """One recording of ``truth``: every condition of the questionnaire, scored by the questionnaire."""
    instrument = instrument or instruments()[NAME]
    rows = []
    for condition in instrument.conditions(Selection()):
        levels = dict(condition.levels)
        temperature = float(condition.temperature or 0.0)
        spread = truth.noise[temperature]
        draw = rng.normal(0.0, spread) if spread else 0.0
        score = int(np.clip(np.round(truth.truth[condition.item, levels["system_prompt"]] + draw), 1, 5))
        rows.append(scored_observation(instrument, model, condition, str(score)))
    return rows


def one_replicate(args: tuple[int, float, int]) -> list[dict[str, Any]]:
    seed, noise, resamples = args
    rng = np.random.default_rng(seed)
    truth = answerer(ANSWERER_SEED, noise)
    rows = [*recording(OLD, truth, rng), *recording(NEW, truth, rng)]
    settings = AnalysisSettings(n_resamples=resamples, seed=seed)
    comparisons = compare_with_baseline(rows, BaselineSpec(OLD), instruments(), settings, thresholds)
    return [
        {
            "check": c.metric,
            "non_inferior": c.outcome == NON_INFERIOR,
            "covered": c.ci_low is not None and c.ci_high is not None and c.ci_low <= 0.0 <= c.ci_high,
            "half_width": None if c.ci_low is None or c.ci_high is None else (c.ci_high - c.ci_low) / 2,
            "margin": c.margin,
            "method": c.method,
        }
        for c in comparisons
    ]


def report(results: list[list[dict[str, Any]]]) -> list[str]:
    passes = np.mean([all(c["non_inferior"] for c in replicate) for replicate in results])
    lines = [
        f"unchanged model, every check non-inferior: {passes:.1%} of {len(results)} replicates (target >= 95 %)",
        f"  {'check':<26} {'coverage':>9} {'non-inf.':>9} {'half-width':>11} {'margin':>7}  method",
    ]
    for index, first in enumerate(results[0]):
        checks = [replicate[index] for replicate in results]
        widths = [c["half_width"] for c in checks if c["half_width"] is not None]
        width = f"{np.mean(widths):.3f}" if widths else "n/a"
        lines.append(
            f"  {first['check']:<26} {np.mean([c['covered'] for c in checks]):>9.1%} "
            f"{np.mean([c['non_inferior'] for c in checks]):>9.1%} {width:>11} {first['margin']!s:>7}  "
            f"{first['method']}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--noise", type=float, default=1.0)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20260601)
    parser.add_argument("--quick", action="store_true", help="60 replicates")
    args = parser.parse_args(argv)
    if args.quick:
        args.replicates = 60
    started = time.perf_counter()
    print(
        f"bench.fixed_design: {args.replicates} replicates, noise SD {args.noise} at t1, "
        f"{args.resamples} resamples, seed {args.seed}"
    )
    jobs = [(args.seed + index, args.noise, args.resamples) for index in range(args.replicates)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one_replicate, jobs))
    for line in report(results):
        print(line)
    print(f"elapsed {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
