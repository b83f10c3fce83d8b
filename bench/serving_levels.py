"""Does the serving check pass the same model served three times, and fail a serving that answers differently? Both
error rates of ``provider_flip_rate`` / ``effort_flip_rate`` and of naming the level that differs.

The simulated 12-item questionnaire of bench.drift_items (1-5 agreement scale, true score per item uniform on
1.5-4.5, a small prompt effect per item, SD 0.3; at temperature 0 the rounded score every run, at temperature 1
plus normal noise of SD ``--noise``, default 1.0 scale point: the shipped models' run-to-run SD at t1 is 0.99 to
1.24), asked under the questionnaire defaults (4 system prompts x temperatures 0 and 1 x 3 runs) and under the
small designs teams write. Each level of the factor is one serving (``m@p1``, ``m@effort-low``), its answers drawn
afresh in each replicate, and judged by the session's own code (snap_bench.judging.serving_levels, the G study
left out: it judges nothing).

- must pass: ``same``: the same answerer through 3 providers (three independent draws);
- must not pass: ``half items +1``: one provider one point higher on 6 of the 12 items (clipped to the scale);
  ``two items moved``: one provider moved one point (towards the middle of the scale) on 2 of the 12 items;
  ``effort half items``: two effort levels, the second one point higher on half the items.

For each it prints the share of pairs passing, undecided, failing (and not judged), and for the naming: the share
of replicates naming the odd provider, and the false flags (an agreeing level named, or the agreeing pair shown to
differ).

    .venv/bin/python -m bench.serving_levels [--replicates 200] [--threshold 0.10] [--seed 20260548]
    .venv/bin/python -m bench.serving_levels --quick        # 60 replicates, 500 resamples
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bench.drift_items import HIGH, INSTRUMENT, ITEMS, LOW, Answerer, answerer, observation
from snap_bench.judging.serving_levels import serving_studies
from snap_bench.observations.observation import Observation

BASE = "m"
# The questionnaire kind's shipped drift_margin (snap_bench/design/defaults/thresholds.yaml): a construct's position.
DRIFT_MARGIN = 0.55
ODD = "p3"
# The items moved: every other item (half), or two of them.
HALF = ITEMS[::2]
TWO = ("Q03", "Q08")


@dataclass(frozen=True)
class Design:
    prompts: tuple[str, ...]
    temperatures: tuple[float, ...]
    runs: int


DESIGNS = {
    "12 items, 4 prompts x t0,t1 x 3 runs": Design(("NEU", "DIR", "PER", "ABS"), (0.0, 1.0), 3),
    "12 items, 1 prompt x t1 x 2 runs": Design(("NEU",), (1.0,), 2),
    "12 items, 4 prompts x t0,t1 x 1 run": Design(("NEU", "DIR", "PER", "ABS"), (0.0, 1.0), 1),
}
# scenario -> (factor, levels, the level that differs (None: none), how it differs)
SCENARIOS = {
    "same": ("provider", ("p1", "p2", "p3"), None, ""),
    "half items +1": ("provider", ("p1", "p2", "p3"), ODD, "half"),
    "two items moved": ("provider", ("p1", "p2", "p3"), ODD, "two"),
    "effort half items": ("effort", ("high", "low"), "low", "half"),
}


def higher(base: Answerer, items: Sequence[str]) -> Answerer:
    """``items`` one point higher (the answers clipped to the scale when asked)."""
    truth = {(item, prompt): value + (1.0 if item in items else 0.0) for (item, prompt), value in base.truth.items()}
    return Answerer(truth, base.noise)


def answers(who: Answerer, model: str, design: Design, rng: np.random.Generator) -> list[Observation]:
    rows = []
    for item in ITEMS:
        for prompt in design.prompts:
            for temperature in design.temperatures:
                sd = who.noise[temperature]
                draws = rng.normal(0.0, sd, design.runs) if sd else np.zeros(design.runs)
                scores = np.clip(np.round(who.truth[item, prompt] + draws), LOW, HIGH)
                rows += [
                    observation(model, item, prompt, temperature, run, int(score))
                    for run, score in enumerate(scores, start=1)
                ]
    return rows


def serving(factor: str, level: str) -> str:
    return f"{BASE}@{level}" if factor == "provider" else f"{BASE}@effort-{level}"


def one_replicate(
    base: Answerer, scenario: str, design: Design, threshold: float, seed: int, resamples: int
) -> dict[str, object]:
    factor, levels, odd, how = SCENARIOS[scenario]
    changed = higher(base, HALF) if how == "half" else base.moved(TWO) if how == "two" else base
    rng = np.random.default_rng(seed)
    rows = [
        o for level in levels for o in answers(changed if level == odd else base, serving(factor, level), design, rng)
    ]
    # Judged as the session judges a questionnaire: its flip threshold, and the shipped drift margin of a construct.
    (study,) = serving_studies(
        rows,
        lambda _i, _f: threshold,
        drift_margins={INSTRUMENT: DRIFT_MARGIN},
        ranges={INSTRUMENT: (LOW, HIGH)},
        resamples=resamples,
        seed=seed,
        variance=False,
    )
    outcomes = {(p.check.level_a, p.check.level_b): p.check.outcome for p in study.pairs}
    agreeing = [p for p in study.pairs if odd not in (p.check.level_a, p.check.level_b)]
    return {
        "outcomes": outcomes,
        "named": study.differing_level,
        "agreeing_differs": any(p.differs for p in agreeing),
        "pair_differs": bool(study.differing_pairs),
    }


def report(scenario: str, results: list[dict[str, object]]) -> list[str]:
    _, levels, odd, _ = SCENARIOS[scenario]
    lines = []
    for kind, chosen in (("agreeing pairs", False), ("pairs with the odd level", True)):
        tally: Counter[str] = Counter()
        for result in results:
            for pair, outcome in result["outcomes"].items():  # type: ignore[attr-defined]
                if (odd in pair) == chosen:
                    tally[outcome] += 1
        total = sum(tally.values())
        if total:
            shares = ", ".join(
                f"{name} {tally[name] / total:.1%}" for name in ("pass", "undecided", "fail", "not judged")
            )
            lines.append(f"    {kind}: {shares} (of {total})")
    n = len(results)
    named = Counter(result["named"] for result in results)
    false_flags = sum(bool(result["agreeing_differs"]) or result["named"] not in (None, odd) for result in results)
    if len(levels) > 2 and odd is not None:
        lines.append(
            f"    odd level named: {named[odd] / n:.1%}; another named: {(n - named[odd] - named[None]) / n:.1%}"
        )
    if len(levels) == 2:
        lines.append(f"    the pair shown to differ: {sum(bool(r['pair_differs']) for r in results) / n:.1%}")
    else:
        lines.append(
            f"    false flags (an agreeing level named or an agreeing pair shown to differ): {false_flags / n:.1%}"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--threshold", type=float, default=0.10, help="the shipped provider_flip_rate")
    parser.add_argument("--noise", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=20260548)
    parser.add_argument("--quick", action="store_true", help="60 replicates, 500 resamples")
    parser.add_argument("--scenario", choices=list(SCENARIOS), action="append")
    parser.add_argument("--design", choices=list(DESIGNS), action="append")
    args = parser.parse_args(argv)
    replicates, resamples = (60, 500) if args.quick else (args.replicates, args.resamples)
    base = answerer(args.seed, args.noise)
    started = time.perf_counter()
    print(f"serving check: threshold {args.threshold:g}, noise SD {args.noise} at t1, {replicates} replicates")
    for design_name in args.design or list(DESIGNS):
        design = DESIGNS[design_name]
        for scenario in args.scenario or list(SCENARIOS):
            results = [
                one_replicate(base, scenario, design, args.threshold, args.seed + 7919 * index, resamples)
                for index in range(replicates)
            ]
            print(f"{design_name}: {scenario}")
            for line in report(scenario, results):
                print(line)
    print(f"elapsed {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
