"""Do the verdicts measure what they claim? Bias, interval coverage and verdict rates on simulated models.

Part A, the estimators (continuous answers, so every component is known exactly): at the size of one
temperature of the shipped profile design (14 items, 3 paraphrases nested in item, 4 system prompts,
contexts C0/C1 for the 7 moral items only, 3 runs: 756 answers) a stable and a noisy model are fitted
by the analysis's own code (``snap_bench.analysis.stability.level_metrics``) and the compass's placement spread
(``coordinate_spread``) at one temperature of its design (8 statements per axis, 3 paraphrases, 4 system
prompts x 2 choices, 2 runs). It prints, per figure: the truth, the mean estimate, the bias and the
coverage of the 95 % interval (target 93-97 %); the share of replications where the judged check
(dependability >= 0.60) passes; and the decision study's predicted coefficient against the true one.

The judged coefficients are conditional on the shipped items (the verdict is about these questions): a
simulated model's views on the 14 items are drawn and scaled so that their sample variance is the
model's item variance exactly, so the true coefficient is the stated one in every replication (and the
item component's random-items interval over-covers). The other components are drawn afresh each time.

Part B, the verdicts (integer answers written as text, scored by the real instruments, analysed and
judged as a run is): the rate at which a stable model, a noisy model and the degenerate answerers
(constant, uniformly random, always agree; and always agree as strongly for a statement every time)
PASS, and the pass rate of each judged check. Target: 0 % for the degenerate answerers.

    .venv/bin/python -m bench.validity [--replications 200] [--verdict-replications 10] [--jobs 2]
    .venv/bin/python -m bench.validity --quick          # 30 replications, 3 of part B
"""

from __future__ import annotations

import os

# Small matrices: one BLAS thread per process (set before numpy loads; threads only contend).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import itertools
import math
import resource
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from bench.answer_sets import (
    CONFIG,
    Answerer,
    agree,
    agree_by_item,
    constant,
    latent,
    observations,
    uniform,
)
from snap_bench.analysis.metric_specs import SHARED_METRICS
from snap_bench.analysis.metric_tables import AnalysisSettings
from snap_bench.analysis.stability import fit_level
from snap_bench.instruments import registered
from snap_bench.instruments.compass.analysis import _condition_spread
from snap_bench.instruments.questionnaire.analysis import STABILITY
from snap_bench.judging.verdicts import judge, load_thresholds
from snap_bench.stats.d_study import decision_study

THRESHOLD = 0.60  # thresholds.yaml: dependability minimum
FACETS = ("paraphrase", "system_prompt", "context")
# The shipped profile: 7 moral items (asked in contexts C0 and C1) and 7 personality items (C0 only).
MORAL_ITEMS, ITEMS = 7, 14
ROWS = [
    row
    for row in itertools.product(range(ITEMS), range(3), range(4), range(2), range(3))
    if row[0] < MORAL_ITEMS or row[3] == 0  # context C1 for the moral items only
]
INDEX = np.array(ROWS)
TABLE = pd.DataFrame(
    {name: [f"{name[0]}{k}" for k in INDEX[:, column]] for column, name in enumerate(["item", *FACETS, "run"])}
)

# The components of the fitted per-temperature design (item x context is left out there: a personality
# item has one context), and the index columns each one's effect varies over (None: each answer).
COMPONENTS = ["item", "paraphrase:item", "system_prompt", "context", "item x system_prompt", "cell", "residual"]
EFFECT_COLUMNS: list[tuple[int, ...] | None] = [(0,), (0, 1), (2,), (3,), (0, 2), (0, 1, 2, 3), None]
MODELS = {
    # single-answer dependability 1 / 1.43 = 0.70: 0.1 above the minimum
    "stable": [1.0, 0.08, 0.03, 0.03, 0.10, 0.08, 0.1086],
    # single-answer dependability 1 / 2.25 = 0.44
    "noisy": [1.0, 0.10, 0.05, 0.05, 0.20, 0.20, 0.65],
}
PLANS: dict[str, dict[str, float]] = {
    "dependability, 3 runs": {"paraphrase": 1, "system_prompt": 1, "context": 1, "run": 3},
    "dependability, 3 paraphrases x 3 runs": {"paraphrase": 3, "system_prompt": 1, "context": 1, "run": 3},
}
# The compass's spread at one temperature of one axis: conditions (4 system prompts x 2 choices) x
# 8 statements x 3 paraphrases x 2 runs; keyed answers; spread = 5 x SD of the condition effects.
SPREAD_ROWS = np.array(list(itertools.product(range(8), range(8), range(3), range(2))))
SPREAD_TABLE = pd.DataFrame(
    {
        "item": [f"E{k}" for k in SPREAD_ROWS[:, 1]],
        "paraphrase": [f"P{k}" for k in SPREAD_ROWS[:, 2]],
        "system_prompt": [f"S{k // 2}" for k in SPREAD_ROWS[:, 0]],
        "choice": [("forced", "unforced")[k % 2] for k in SPREAD_ROWS[:, 0]],
        "run": SPREAD_ROWS[:, 3] + 1,
    }
)
# condition, item, paraphrase:item, condition x item, run noise (keyed points, -2..+2)
SPREAD_MODEL = [0.02, 0.5, 0.05, 0.05, 0.3]

ANSWERERS: dict[str, Callable[[int], Answerer]] = {
    "stable": lambda seed: latent(1.3, 0.25, 0.35, seed, position=1.2),
    "noisy": lambda seed: latent(0.8, 0.5, 0.9, seed, position=0.6),
    "constant": lambda seed: constant(1 + seed % 5),
    "uniform random": lambda seed: uniform,
    "always agree": lambda seed: agree,
    "agree, by item": lambda seed: agree_by_item,
}


def simulate(variances: list[float], rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Raw answers: 3 + one normal effect per component; and the drawn items' universe-score variance."""
    scores = np.full(len(ROWS), 3.0)
    shipped = 0.0
    for columns, variance in zip(EFFECT_COLUMNS, variances, strict=True):
        if columns is None:
            scores += rng.normal(0, math.sqrt(variance), len(ROWS))
            continue
        shape = tuple(int(INDEX[:, c].max()) + 1 for c in columns)
        effect = rng.normal(0, math.sqrt(variance), shape)
        if columns == (0,):
            # The model's views on the shipped items: their variance is the model's, exactly, so that
            # the judged coefficient's truth is the stated one in every replication.
            effect *= math.sqrt(variance) / float(np.std(effect, ddof=1))
            shipped = float(np.var(effect, ddof=1))
        scores += effect[tuple(INDEX[:, c] for c in columns)]
    return scores, shipped


def coefficient(universe: float, variances: list[float], counts: dict[str, float], absolute: bool) -> float:
    """Phi (absolute) or E rho^2 (relative) from the true components, with the decision study's weights."""
    members = [set(), {"paraphrase"}, {"system_prompt"}, {"context"}, {"system_prompt"}, set(FACETS), {*FACETS, "run"}]
    relative = [False, True, False, False, True, True, True]
    error = sum(
        v / math.prod(counts[f] for f in m)
        for v, m, rel in zip(variances[1:], members[1:], relative[1:], strict=True)
        if absolute or rel
    )
    return universe / (universe + error)


SINGLE = dict.fromkeys((*FACETS, "run"), 1.0)


def estimators(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for name, variances in MODELS.items():
        scores, shipped = simulate(variances, rng)
        table = TABLE.assign(score=scores)
        metrics, details, study = fit_level(table, STABILITY, test_signal=False)
        assert study is not None
        figures: dict[str, tuple[float, bool]] = {}
        for component in details["components"]:
            truth = variances[COMPONENTS.index(component["effect"])]
            high = component["ci_high"] if component["ci_high"] is not None else math.inf
            figures[component["effect"]] = (component["variance"], component["ci_low"] <= truth <= high)
        truths = {
            "run_sd": math.sqrt(variances[-1]),
            "dependability": coefficient(shipped, variances, SINGLE, absolute=True),
            "generalizability": coefficient(shipped, variances, SINGLE, absolute=False),
        }
        for figure, truth in truths.items():
            metric = metrics[figure]
            assert metric.value is not None
            assert metric.ci_low is not None
            high = metric.ci_high if metric.ci_high is not None else math.inf
            figures[figure] = (metric.value, metric.ci_low <= truth <= high)
        dependability = metrics["dependability"].value or 0.0
        plans = {label: decision_study(study, counts).phi.value for label, counts in PLANS.items()}
        plan_truths = {label: coefficient(shipped, variances, counts, absolute=True) for label, counts in PLANS.items()}
        out[name] = {
            "figures": figures,
            "truths": {**truths, "shipped item variance": shipped},
            "pass": dependability >= THRESHOLD,
            "plans": plans,
            "plan_truths": plan_truths,
        }
    out["spread"] = _spread_replication(rng)
    return out


def _spread_replication(rng: np.random.Generator) -> dict[str, Any]:
    c, i, p, ci, e = (math.sqrt(v) for v in SPREAD_MODEL)
    condition = rng.normal(0, c, 8)
    keyed = (
        condition[SPREAD_ROWS[:, 0]]
        + rng.normal(0, i, 8)[SPREAD_ROWS[:, 1]]
        + rng.normal(0, p, (8, 3))[SPREAD_ROWS[:, 1], SPREAD_ROWS[:, 2]]
        + rng.normal(0, ci, (8, 8))[SPREAD_ROWS[:, 0], SPREAD_ROWS[:, 1]]
        + rng.normal(0, e, len(SPREAD_ROWS))
    )
    metric = _condition_spread(SPREAD_TABLE.assign(keyed=keyed))
    assert metric.value is not None
    assert metric.ci_low is not None
    high = metric.ci_high if metric.ci_high is not None else math.inf
    sampled, shipped = 5 * math.sqrt(SPREAD_MODEL[0]), 5 * float(np.std(condition, ddof=1))
    return {
        "value": metric.value,
        "sampled": sampled,
        "shipped": shipped,
        "covers_sampled": metric.ci_low <= sampled <= high,
        "covers_shipped": metric.ci_low <= shipped <= high,
    }


def verdicts(seed: int) -> dict[tuple[str, str], Any]:
    """Every answerer through the real scoring, analysis and verdicts of both instruments."""
    out: dict[tuple[str, str], Any] = {}
    settings = AnalysisSettings(n_resamples=20, seed=seed)  # the bootstrapped figures are not judged
    for name in ("profile", "compass"):
        instrument = registered()[name](CONFIG)
        config = load_thresholds(CONFIG, name, {}, None, {**SHARED_METRICS, **instrument.metrics})
        for answerer, make in ANSWERERS.items():
            answers = observations(instrument, make(seed), seed)
            analysis = instrument.analyse(answerer, answers, settings)
            verdict = judge(analysis, config)
            out[name, answerer] = {
                "verdict": verdict.verdict,
                "checks": {check.metric.partition("[")[0]: check.passed for check in verdict.checks},
                "failed": sorted({c.metric.partition("[")[0] for c in verdict.checks if not c.passed}),
            }
    return out


def _report(results: list[dict[str, Any]], spread: list[dict[str, Any]]) -> None:
    for model, variances in MODELS.items():
        sampled = 1 / (1 + sum(variances[1:]) / variances[0])
        print(f"{model} model (true single-answer dependability, items as sampled: {sampled:.3f})")
        print(f"  {'figure':26s} {'true':>8s} {'mean est':>9s} {'bias':>8s} {'coverage':>9s}")
        truths = dict(zip(COMPONENTS, variances, strict=True))
        for figure in [*COMPONENTS, "run_sd", "dependability", "generalizability"]:
            rows = [r[model] for r in results if figure in r[model]["figures"]]
            if not rows:
                continue
            values = np.array([r["figures"][figure][0] for r in rows])
            truth = np.array([r["truths"].get(figure, truths.get(figure, np.nan)) for r in rows])
            covered = np.mean([r["figures"][figure][1] for r in rows])
            bias = np.mean(values - truth)
            print(f"  {figure:26s} {truth.mean():8.4f} {values.mean():9.4f} {bias:+8.4f} {covered:9.1%}")
        rate = np.mean([r[model]["pass"] for r in results])
        print(f"  dependability >= {THRESHOLD}: {rate:.1%} of replications")
        print(f"  {'decision study (planner)':38s} {'true':>8s} {'predicted':>10s}")
        for label in PLANS:
            truth = np.mean([r[model]["plan_truths"][label] for r in results])
            predicted = np.mean([r[model]["plans"][label] for r in results])
            print(f"  {label:38s} {truth:8.4f} {predicted:10.4f}")
        print()
    values = np.array([s["value"] for s in spread])
    print("compass placement spread (one axis, one temperature; coordinate points)")
    for estimand in ("sampled", "shipped"):
        truth = np.array([s[estimand] for s in spread])
        covered = np.mean([s[f"covers_{estimand}"] for s in spread])
        print(
            f"  conditions {estimand:8s} true {truth.mean():.3f}  mean est {values.mean():.3f}  "
            f"bias {np.mean(values - truth):+.3f}  coverage {covered:.1%}"
        )
    print()


def _report_verdicts(results: list[dict[tuple[str, str], Any]]) -> None:
    print(f"verdicts through the real scoring, analysis and thresholds ({len(results)} replications each)")
    print(f"  {'instrument':11s} {'answerer':16s} {'PASS':>6s} {'not FAIL':>9s}  pass rate per judged check")
    for name, answerer in results[0]:
        rows = [r[name, answerer] for r in results]
        passed = np.mean([row["verdict"] == "PASS" for row in rows])
        not_failed = np.mean([row["verdict"] != "FAIL" for row in rows])
        checks = sorted({check for row in rows for check in row["checks"]})
        rates = ", ".join(
            f"{check} {np.mean([row['checks'].get(check, False) for row in rows]):.0%}" for check in checks
        )
        print(f"  {name:11s} {answerer:16s} {passed:6.0%} {not_failed:9.0%}  {rates}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--verdict-replications", type=int, default=10, help="of part B (a whole analysis each)")
    parser.add_argument("--quick", action="store_true", help="30 replications, 3 of part B")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261123)
    arguments = parser.parse_args()
    replications = 30 if arguments.quick else arguments.replications
    seeds = np.random.SeedSequence(arguments.seed).generate_state(replications).tolist()
    verdict_seeds = seeds[: 3 if arguments.quick else arguments.verdict_replications]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=arguments.jobs) as pool:
        estimates = list(pool.map(estimators, seeds, chunksize=4))
        judged = list(pool.map(verdicts, verdict_seeds))
    elapsed = time.perf_counter() - started
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = children.ru_utime + children.ru_stime
    print(f"validity: {replications} replications of {len(ROWS)} answers (one temperature), seed {arguments.seed}")
    print(f"judged check: single-answer dependability >= {THRESHOLD}, conditional on the shipped items\n")
    _report(estimates, [r["spread"] for r in estimates])
    _report_verdicts(judged)
    print(f"\n{elapsed:.0f} s wall on {arguments.jobs} process(es), {cpu:.0f} s of CPU in them")


if __name__ == "__main__":
    main()
