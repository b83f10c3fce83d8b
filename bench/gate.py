"""How often does the upgrade gate fail an unchanged model, and how often does it catch a regression?

Resamples the shipped recordings (the committed baseline files, one per model) into simulated replays:

- **unchanged**: two independent replays of the same model, one the baseline and one the "new" model.
  A replay redraws each condition's answer from that model's recorded answers to the same cell (the
  same condition in any run: its own run-to-run noise). Where a cell was asked once (the perturbation's
  single run at temperature 0), the answer is redrawn, with the model's run-to-run disagreement rate
  measured on its multi-run instruments at temperature 0, from its answers to the same input under the
  other wordings; otherwise kept.
- **degraded**: the new replay with each answer replaced, with probability ``--degrade`` (default 0.25),
  by one drawn at random from all the model's recorded answers of that instrument: the same model
  answering a quarter of its questions at random (the stated regression).

Each pair goes through the gate exactly as ``pytest --baseline`` runs it (snap_bench.judging.comparison, every
judged metric of every instrument, the margins of thresholds.yaml, the same bootstrap), and the
bench prints per model: the false-alarm rate of the whole gate (any check failed, an unchanged model;
target <= 5 %), its power against the stated regression (target >= 80 %), the share of incomplete gates
(a check not compared), and per check its failure rates and the mean half-width of its interval (the
noise the margins are chosen against).

    .venv/bin/python -m bench.gate [--replicates 100] [--resamples 1000] [--jobs 2] [--seed 20261123]
    .venv/bin/python -m bench.gate --quick       # 30 replicates, 500 resamples
    .venv/bin/python -m bench.gate --save reports/gate-bench.json   # keep every replicate's intervals
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import dataclasses
import json
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.design.config import ConfigFiles
from snap_bench.instruments import Instrument, load_instruments
from snap_bench.judging.baseline import BaselineSpec, read_baseline_file
from snap_bench.judging.comparison import Comparison, compare_with_baseline
from snap_bench.judging.verdicts import ThresholdConfig, load_thresholds
from snap_bench.observations.observation import Observation

REPO = Path(__file__).resolve().parent.parent
CONFIG = ConfigFiles.shipped()
OLD, NEW = "old", "new"
ANSWER_FIELDS = ("score", "keyed_score", "code", "extra")


@cache
def instruments() -> dict[str, Instrument]:
    return load_instruments(CONFIG, sorted((REPO / "benchmarks").glob("*.yaml")))


@cache
def thresholds(instrument: str) -> ThresholdConfig:
    kind = instruments()[instrument]
    specs = {**SHARED_METRICS, **kind.metrics}
    return load_thresholds(CONFIG, instrument, {}, None, specs, kind.thresholds_section())


def recorded(model: str) -> list[Observation]:
    path = REPO / "baselines" / f"{model}.json"
    return list(read_baseline_file(path, json.loads(path.read_text(encoding="utf-8"))).observations)


def _answer(observation: Observation) -> dict[str, Any]:
    return {name: getattr(observation, name) for name in ANSWER_FIELDS}


def disagreement_rate(observations: Sequence[Observation]) -> float:
    """Share of pairs of runs of one cell at temperature 0 that gave different answers (multi-run cells)."""
    cells: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for o in observations:
        if o.temperature == 0:
            cells[(o.instrument, o.cell)].append((o.score, o.code))
    differ = total = 0
    for answers in cells.values():
        for first in range(len(answers)):
            for second in range(first + 1, len(answers)):
                total += 1
                differ += answers[first] != answers[second]
    return differ / total if total else 0.0


@dataclasses.dataclass(frozen=True)
class Pools:
    """Where each condition's answer is redrawn from."""

    cell: dict[tuple[str, str], list[dict[str, Any]]]
    item: dict[tuple[str, str], list[dict[str, Any]]]
    instrument: dict[str, list[dict[str, Any]]]
    single_run_noise: float


def pools(observations: Sequence[Observation]) -> Pools:
    cell: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    item: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    everything: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for o in observations:
        cell[(o.instrument, o.cell)].append(_answer(o))
        item[(o.instrument, o.item)].append(_answer(o))
        everything[o.instrument].append(_answer(o))
    return Pools(cell, item, everything, disagreement_rate(observations))


def replay(
    observations: Sequence[Observation], pool: Pools, label: str, rng: np.random.Generator, degrade: float = 0.0
) -> list[Observation]:
    """One simulated replay of the model (see the module docstring); ``degrade``: the regression."""
    result = []
    for o in observations:
        own = pool.cell[(o.instrument, o.cell)]
        if len(own) > 1:
            answer = own[rng.integers(len(own))]
        elif rng.random() < pool.single_run_noise:
            others = pool.item[(o.instrument, o.item)]
            answer = others[rng.integers(len(others))]
        else:
            answer = own[0]
        if degrade and rng.random() < degrade:
            everything = pool.instrument[o.instrument]
            answer = everything[rng.integers(len(everything))]
        result.append(dataclasses.replace(o, model=label, **answer))
    return result


def one_replicate(args: tuple[str, int, int, float]) -> dict[str, Any]:
    model, seed, resamples, degrade = args
    rng = np.random.default_rng(seed)
    observations = recorded(model)
    pool = pools(observations)
    settings = AnalysisSettings(n_resamples=resamples, seed=seed)
    old = replay(observations, pool, OLD, rng)
    outcome: dict[str, Any] = {}
    for scenario, amount in (("unchanged", 0.0), ("degraded", degrade)):
        new = replay(observations, pool, NEW, rng, amount)
        comparisons = compare_with_baseline([*old, *new], BaselineSpec(OLD), instruments(), settings, thresholds)
        outcome[scenario] = [_summary(c) for c in comparisons]
    return outcome


def _summary(comparison: Comparison) -> dict[str, Any]:
    half = None
    if comparison.ci_low is not None and comparison.ci_high is not None:
        half = (comparison.ci_high - comparison.ci_low) / 2
    return {
        "check": f"{comparison.instrument}.{comparison.metric}",
        "failed": comparison.regressed,
        "not_compared": comparison.not_compared,
        "half_width": half,
        "difference": comparison.difference,
        "ci_low": comparison.ci_low,
        "ci_high": comparison.ci_high,
    }


def report(model: str, results: list[dict[str, Any]], degrade: float) -> list[str]:
    lines = [f"== {model}: {len(results)} replicates"]
    for scenario in ("unchanged", "degraded"):
        gates = [r[scenario] for r in results]
        failed = np.mean([any(c["failed"] for c in gate) for gate in gates])
        incomplete = np.mean([any(c["not_compared"] for c in gate) for gate in gates])
        target = "false alarms (target <= 5 %)" if scenario == "unchanged" else "power (target >= 80 %)"
        label = "unchanged model" if scenario == "unchanged" else f"degraded ({degrade:.0%} of answers random)"
        lines.append(f"  {label}: gate failed {failed:.1%} = {target}; incomplete {incomplete:.1%}")
    lines.append(f"  {'check':<40} {'fails unchanged':>16} {'fails degraded':>15} {'half-width':>11} {'margin':>7}")
    checks = [c["check"] for c in results[0]["unchanged"]]
    for index, check in enumerate(checks):
        unchanged = [r["unchanged"][index] for r in results]
        degraded = [r["degraded"][index] for r in results]
        widths = [c["half_width"] for c in unchanged if c["half_width"] is not None]
        instrument, metric = check.split(".", 1)
        margin = thresholds(instrument).non_inferiority.get(metric.partition("[")[0])
        width = f"{np.mean(widths):.3f}" if widths else "n/a"
        missing = sum(c["not_compared"] for c in unchanged)
        lines.append(
            f"  {check:<40} {np.mean([c['failed'] for c in unchanged]):>16.1%} "
            f"{np.mean([c['failed'] for c in degraded]):>15.1%} {width:>11} {margin if margin is not None else '-':>7}"
            + (f"  ({missing} not compared)" if missing else "")
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--degrade", type=float, default=0.25)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--models", default="qwen2.5-coder-1.5b,smollm2-135m")
    parser.add_argument("--quick", action="store_true", help="30 replicates of 500 resamples")
    parser.add_argument(
        "--save",
        type=Path,
        help="write every replicate's checks (difference and interval) to this JSON file, so "
        "that other margins can be read off the same replicates",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.replicates, args.resamples = 30, 500
    started = time.perf_counter()
    print(
        f"bench.gate: {args.replicates} replicates x {args.resamples} resamples, seed {args.seed}; "
        f"regression: {args.degrade:.0%} of the new model's answers random"
    )
    for model in args.models.split(","):
        rate = disagreement_rate(recorded(model))
        print(f"-- {model}: run-to-run disagreement at temperature 0 (single-run cells' noise): {rate:.3f}")
        jobs = [(model, args.seed + index, args.resamples, args.degrade) for index in range(args.replicates)]
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            results = list(pool.map(one_replicate, jobs))
        for line in report(model, results, args.degrade):
            print(line)
        if args.save is not None:
            saved = json.loads(args.save.read_text(encoding="utf-8")) if args.save.is_file() else {}
            saved[model] = results
            args.save.write_text(json.dumps(saved), encoding="utf-8")
    print(f"elapsed {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
