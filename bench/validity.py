"""Does the G study measure what it claims? Bias, interval coverage and verdict rates on simulated models.

Simulates answer sets at the shipped profile design (10 items, 3 paraphrases nested in item, 4 system
prompts, 3 temperatures, contexts C0/C1 for the 5 moral items only, 3 runs: 1,620 answers) from
models with known variance components, fits the G study to each, and prints:

- per component and coefficient: true value, mean estimate, bias, and the coverage of its 95% interval
  (target 93-97 %);
- the rate at which each answerer passes the stated criterion (below), for a stable model whose
  single-answer dependability sits 0.1 above the threshold, a noisy model, and three answerers that
  ignore the questions (constant, uniformly random, always-agree): target >= 90 % for the stable
  model, 0 % for the degenerate ones;
- the decision study's predicted coefficient for other run / paraphrase counts against the true one.

Criterion (what a verdict would judge): Phi for a single answer (n' = 1 per facet, one run) of the
keyed scores >= 0.60 (the original design's ICC minimum), AND the raw answers follow the questions
(:func:`snap_bench.stats.degenerate.follows_questions`: item component significant at 0.001 by
restricted likelihood ratio and at least 0.25 of the run-to-run variance).

Simulated models answer on a continuous scale (normal effects, no rounding), so their components are
known exactly; the degenerate answerers answer integers 1..5. Items M01 and P02 are reverse keyed
(keyed = 6 - raw), as in the shipped banks.

    .venv/bin/python -m bench.validity [--replications 100] [--jobs 2] [--seed 20261123]
    .venv/bin/python -m bench.validity --quick          # 30 replications
"""

from __future__ import annotations

import os

# Small matrices: one BLAS thread per process (set before numpy loads; threads only contend).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import itertools
import math
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from snap_bench.stats.degenerate import follows_questions, raw_item_signal
from snap_bench.stats.generalizability import GStudy, GStudyDesign, decision_study, g_study

ITEMS = [f"M0{i}" for i in range(1, 6)] + [f"P0{i}" for i in range(1, 6)]
REVERSED = {"M01", "P02"}
FACETS = ("paraphrase", "system_prompt", "temperature", "context")
DESIGN = GStudyDesign(
    "item",
    FACETS,
    nested={"paraphrase": ("item",)},
    interactions=(("item", "system_prompt"), ("item", "temperature"), ("item", "context")),
    replicate="run",
)
# The raw item-signal test leaves item x context out: a personality item has one context, so that term
# would be an item effect for half the items and absorb the item component under the null.
SIGNAL_DESIGN = GStudyDesign(
    "item",
    FACETS,
    nested={"paraphrase": ("item",)},
    interactions=(("item", "system_prompt"), ("item", "temperature")),
    replicate="run",
)
ROWS = [
    row
    for row in itertools.product(range(10), range(3), range(4), range(3), range(2), range(3))
    if row[0] < 5 or row[4] == 0  # context C1 for the moral items only
]
INDEX = np.array(ROWS)
LABELS = {name: INDEX[:, k].tolist() for k, name in enumerate(["item", *FACETS, "run"])}
REVERSE_ROW = np.isin(INDEX[:, 0], [ITEMS.index(item) for item in REVERSED])
SINGLE = {"paraphrase": 1, "system_prompt": 1, "temperature": 1, "context": 1, "run": 1}
THRESHOLD = 0.60

# name -> (shape of the effect over the design's index columns, variance); the last two are cell and run.
COMPONENTS = ["item", "paraphrase:item", "system_prompt", "temperature", "context", "item x system_prompt",
              "item x temperature", "item x context", "cell", "residual"]  # fmt: skip
EFFECT_COLUMNS = [(0,), (0, 1), (2,), (3,), (4,), (0, 2), (0, 3), (0, 4), (0, 1, 2, 3, 4), None]
MODELS = {
    # single-answer Phi = 1 / 1.43 = 0.70: 0.1 above the threshold
    "stable": [1.0, 0.06, 0.03, 0.02, 0.03, 0.08, 0.04, 0.05, 0.05, 0.07],
    # single-answer Phi = 1 / 2.25 = 0.44
    "noisy": [1.0, 0.10, 0.05, 0.05, 0.05, 0.15, 0.10, 0.10, 0.15, 0.50],
}


def simulate(variances: list[float], rng: np.random.Generator) -> np.ndarray:
    """Keyed scores: 3 + the sum of one normal effect per component (independent levels)."""
    scores = np.full(len(ROWS), 3.0)
    for columns, variance in zip(EFFECT_COLUMNS, variances, strict=True):
        if columns is None:
            scores += rng.normal(0, math.sqrt(variance), len(ROWS))
            continue
        shape = tuple(int(INDEX[:, c].max()) + 1 for c in columns)
        effect = rng.normal(0, math.sqrt(variance), shape)
        scores += effect[tuple(INDEX[:, c] for c in columns)]
    return scores


def keyed(raw: np.ndarray) -> np.ndarray:
    return np.where(REVERSE_ROW, 6.0 - raw, raw)


def true_coefficient(variances: list[float], counts: dict[str, float]) -> float:
    """Phi from the true components (same weights as the decision study)."""
    sizes = {"paraphrase": 3.0, "system_prompt": 4.0, "temperature": 3.0, "context": 2.0, "run": 3.0, **counts}
    members = [set(), {"paraphrase"}, {"system_prompt"}, {"temperature"}, {"context"}, {"system_prompt"},
               {"temperature"}, {"context"}, set(FACETS), {*FACETS, "run"}]  # fmt: skip
    error = sum(v / math.prod(sizes[f] for f in m) for v, m in zip(variances[1:], members[1:], strict=True))
    return variances[0] / (variances[0] + error)


def passes(keyed_scores: np.ndarray, raw_scores: np.ndarray) -> tuple[bool, bool, GStudy | None]:
    """(Phi single answer >= threshold on keyed scores, that AND the raw answers follow the questions)."""
    try:
        study = g_study(keyed_scores, LABELS, DESIGN)
    except ValueError:  # constant keyed scores: nothing to judge
        return False, False, None
    phi_ok = decision_study(study, SINGLE).phi.value >= THRESHOLD
    follows = phi_ok and follows_questions(raw_item_signal(raw_scores, LABELS, SIGNAL_DESIGN)).passed
    return phi_ok, follows, study


def replication(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for name, variances in MODELS.items():
        scores = simulate(variances, rng)
        phi_ok, ok, study = passes(scores, keyed(scores))
        assert study is not None
        figures: dict[str, tuple[float, bool]] = {}
        for component, truth in zip(COMPONENTS, variances, strict=True):
            c = study.component(component)
            figures[component] = (c.variance, c.ci_low <= truth <= c.ci_high)
        sd = study.run_to_run_sd
        figures["run-to-run SD"] = (sd.value, sd.ci_low <= math.sqrt(variances[-1]) <= sd.ci_high)
        for label, counts in (("Phi single answer", SINGLE), ("Phi design (3x4x3x2x3)", {})):
            phi = decision_study(study, counts).phi
            figures[label] = (phi.value, phi.ci_low <= true_coefficient(variances, counts) <= phi.ci_high)
        plans = {
            "Phi, 1 paraphrase x 1 run": {"paraphrase": 1, "run": 1},
            "Phi, 6 paraphrases x 6 runs": {"paraphrase": 6, "run": 6},
            "Phi single answer, 6 runs": {**SINGLE, "run": 6},
        }
        predicted = {label: decision_study(study, counts).phi.value for label, counts in plans.items()}
        out[name] = {"figures": figures, "phi_ok": phi_ok, "pass": ok, "plans": predicted}
    constant = np.full(len(ROWS), float(rng.integers(1, 6)))
    uniform = rng.integers(1, 6, len(ROWS)).astype(float)
    agree = rng.integers(4, 6, len(ROWS)).astype(float)
    for name, raw in (("constant", constant), ("uniform random", uniform), ("always agree", agree)):
        phi_ok, ok, _ = passes(keyed(raw), raw)
        out[name] = {"phi_ok": phi_ok, "pass": ok}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="30 replications")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261123)
    arguments = parser.parse_args()
    replications = 30 if arguments.quick else arguments.replications
    seeds = np.random.SeedSequence(arguments.seed).generate_state(replications).tolist()
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=arguments.jobs) as pool:
        results = list(pool.map(replication, seeds, chunksize=4))
    elapsed = time.perf_counter() - started

    print(f"G study validity: {replications} replications, {len(ROWS)} answers each, seed {arguments.seed}")
    print(f"criterion: keyed single-answer Phi >= {THRESHOLD} AND raw answers follow the questions\n")
    for model, variances in MODELS.items():
        truths = dict(zip(COMPONENTS, variances, strict=True))
        truths["run-to-run SD"] = math.sqrt(variances[-1])
        truths["Phi single answer"] = true_coefficient(variances, SINGLE)
        truths["Phi design (3x4x3x2x3)"] = true_coefficient(variances, {})
        print(f"{model} model")
        print(f"  {'figure':26s} {'true':>8s} {'mean est':>9s} {'bias':>8s} {'coverage':>9s}")
        for figure, truth in truths.items():
            values = np.array([r[model]["figures"][figure][0] for r in results])
            covered = np.mean([r[model]["figures"][figure][1] for r in results])
            print(f"  {figure:26s} {truth:8.4f} {values.mean():9.4f} {values.mean() - truth:+8.4f} {covered:9.1%}")
        print(f"  {'decision study':32s} {'true':>8s} {'predicted':>10s}")
        for label, counts in (
            ("Phi, 1 paraphrase x 1 run", {"paraphrase": 1, "run": 1}),
            ("Phi, 6 paraphrases x 6 runs", {"paraphrase": 6, "run": 6}),
            ("Phi single answer, 6 runs", {**SINGLE, "run": 6}),
        ):
            predicted = np.mean([r[model]["plans"][label] for r in results])
            print(f"  {label:32s} {true_coefficient(variances, counts):8.4f} {predicted:10.4f}")
        print()
    print(f"{'answerer':16s} {'Phi >= 0.60':>12s} {'PASS (criterion)':>17s}")
    for answerer in ("stable", "noisy", "constant", "uniform random", "always agree"):
        phi_rate = np.mean([r[answerer]["phi_ok"] for r in results])
        pass_rate = np.mean([r[answerer]["pass"] for r in results])
        print(f"{answerer:16s} {phi_rate:12.1%} {pass_rate:17.1%}")
    print(f"\n{elapsed:.0f} s on {arguments.jobs} process(es)")


if __name__ == "__main__":
    main()
