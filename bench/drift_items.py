"""Does drift pass an unchanged model, and does the item-level test name only items that moved?

A simulated 12-item questionnaire (1-5 agreement scale, 4 constructs of 3 items), asked under the design's
factors: 4 system prompts x temperatures 0 and 1 x 3 runs (24 conditions per item, 288 per model). The
answerer has an item-specific true score (uniform on 1.5-4.5) and a small effect of each prompt on each
item (SD 0.3), both fixed for the bench; at temperature 0 it answers the rounded score every run, at
temperature 1 the rounded score plus normal noise (SD ``--noise``, default 1.0 scale point: the shipped
models' run-to-run SD at t1 is 0.99 (profile) to 1.24 (bfi25) in baselines/qwen2.5-coder-1.5b.json),
clipped to 1-5. Each replicate draws the baseline's and the new model's answers afresh and judges them with
the session's own code (``position_drift`` with the shipped drift_margin of 0.5, ``item_changes``):

- (a) unchanged: the same answerer asked again; every construct must be ``no drift`` (target >= 95 % of
  replicates);
- (b) one construct moved: its three items one keyed point in one direction, towards the middle of the
  scale from their mean (so the move is hardly clipped away); that construct must fail drift, ``drift``
  or ``inconclusive`` (target >= 80 %);
- (c) the unchanged model's items reported as reliably changed (false discoveries), on average
  (target <= 5 % of items);
- (d) three items moved (one point each, in three constructs): the share of replicates where all three
  are found (target >= 80 %), beside the share of moved items found and the false discoveries among the
  found.

    .venv/bin/python -m bench.drift_items [--replicates 1000] [--noise 1.0] [--seed 20260514]
    .venv/bin/python -m bench.drift_items --quick          # 200 replicates
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from snap_bench.judging.drift import NO_DRIFT, position_drift
from snap_bench.judging.item_changes import item_changes
from snap_bench.observations.observation import Observation

INSTRUMENT = "quiz"
ITEMS = tuple(f"Q{i:02d}" for i in range(1, 13))
CONSTRUCTS = ("c1", "c2", "c3", "c4")
PROMPTS = ("NEU", "DIR", "PER", "ABS")
TEMPERATURES = (0.0, 1.0)
RUNS = (1, 2, 3)
LOW, HIGH = 1, 5
DRIFT_MARGIN = 0.5  # thresholds.yaml's drift_margin for every shipped instrument
MOVED_CONSTRUCT = "c2"
MOVED_ITEMS = ("Q01", "Q05", "Q09")


@dataclass(frozen=True)
class Answerer:
    """True scores per item and per (item, prompt); noise SD per temperature."""

    truth: dict[tuple[str, str], float]
    noise: dict[float, float]

    def moved(self, items: Sequence[str], together: bool = False) -> Answerer:
        """The same answerer with ``items`` one point towards the middle of the scale (so the move is not
        clipped away): each on its own, or ``together`` in one direction, the one their mean lies to."""
        middle = (LOW + HIGH) / 2

        def towards_middle(values: Sequence[float]) -> float:
            return 1.0 if float(np.mean(values)) < middle else -1.0

        shared = towards_middle([v for (item, _), v in self.truth.items() if item in items])
        own = {item: towards_middle([v for (i, _), v in self.truth.items() if i == item]) for item in items}
        truth = {
            (item, prompt): value + ((shared if together else own[item]) if item in items else 0.0)
            for (item, prompt), value in self.truth.items()
        }
        return Answerer(truth, self.noise)

    def answers(self, model: str, rng: np.random.Generator) -> list[Observation]:
        rows = []
        for item in ITEMS:
            for prompt in PROMPTS:
                for temperature in TEMPERATURES:
                    draws = rng.normal(0.0, self.noise[temperature], len(RUNS)) if self.noise[temperature] else 0.0
                    scores = np.clip(np.round(self.truth[item, prompt] + draws), LOW, HIGH) * np.ones(len(RUNS))
                    rows += [
                        observation(model, item, prompt, temperature, run, int(s))
                        for run, s in zip(RUNS, scores, strict=True)
                    ]
        return rows


def answerer(seed: int, noise: float) -> Answerer:
    rng = np.random.default_rng(seed)
    items = rng.uniform(1.5, 4.5, len(ITEMS))
    truth = {(item, prompt): items[i] + rng.normal(0.0, 0.3) for i, item in enumerate(ITEMS) for prompt in PROMPTS}
    return Answerer(truth, {0.0: 0.0, 1.0: noise})


def observation(model: str, item: str, prompt: str, temperature: float, run: int, score: int) -> Observation:
    """One answer of the 12-item design (also the unit tests' rows)."""
    cell = f"{item}-{prompt}-t{temperature:g}"
    return Observation(
        model=model,
        instrument=INSTRUMENT,
        condition_id=f"{cell}-r{run}",
        cell=cell,
        item=item,
        factors={"system_prompt": prompt, "temperature": f"t{temperature:g}"},
        temperature=temperature,
        run=run,
        messages=[],
        raw_answer=str(score),
        score=score,
        keyed_score=float(score),
        code=None,
        reason="",
        construct=CONSTRUCTS[ITEMS.index(item) // 3],
    )


def one_replicate(base: Answerer, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    old = base.answers("old", rng)
    unchanged = [*old, *base.answers("new", rng)]
    construct_moved = [*old, *base.moved(ITEMS[3:6], together=True).answers("new", rng)]
    items_moved = [*old, *base.moved(MOVED_ITEMS).answers("new", rng)]
    margins, ranges = {INSTRUMENT: DRIFT_MARGIN}, {INSTRUMENT: (float(LOW), float(HIGH))}
    still = position_drift(unchanged, "old", margins, ranges)
    moved = {d.construct: d for d in position_drift(construct_moved, "old", margins, ranges)}
    false_found = [c.item for c in item_changes(unchanged, "old") if c.reliable]
    found = {c.item for c in item_changes(items_moved, "old") if c.reliable}
    return {
        "unchanged_passes": float(all(d.outcome == NO_DRIFT for d in still)),
        "constructs_passing": float(np.mean([d.outcome == NO_DRIFT for d in still])),
        "half_width": float(np.mean([(d.ci_high or 0.0) - (d.ci_low or 0.0) for d in still]) / 2),
        "moved_fails": float(moved[MOVED_CONSTRUCT].moved),
        "moved_difference": moved[MOVED_CONSTRUCT].difference,
        "false_discovery_share": len(false_found) / len(ITEMS),
        "all_three_found": float(set(MOVED_ITEMS) <= found),
        "moved_found_share": len(found & set(MOVED_ITEMS)) / len(MOVED_ITEMS),
        "false_among_found": len(found - set(MOVED_ITEMS)) / max(1, len(found)),
    }


def report(results: list[dict[str, float]]) -> list[str]:
    mean = {key: float(np.mean([r[key] for r in results])) for key in results[0]}

    def verdict(value: float, target: float, at_least: bool) -> str:
        return "met" if (value >= target if at_least else value <= target) else "NOT MET"

    return [
        f"(a) unchanged model, every construct no drift: {mean['unchanged_passes']:.1%} of replicates "
        f"(target >= 95 %: {verdict(mean['unchanged_passes'], 0.95, True)}); per construct "
        f"{mean['constructs_passing']:.1%}; mean half-width {mean['half_width']:.3f}",
        f"(b) one construct moved one point, drift or inconclusive: {mean['moved_fails']:.1%} "
        f"(target >= 80 %: {verdict(mean['moved_fails'], 0.80, True)}); mean difference "
        f"{mean['moved_difference']:+.3f}",
        f"(c) unchanged model, items reliably changed: {mean['false_discovery_share']:.2%} of items on average "
        f"(target <= 5 %: {verdict(mean['false_discovery_share'], 0.05, False)})",
        f"(d) three items moved one point, all three found: {mean['all_three_found']:.1%} "
        f"(target >= 80 %: {verdict(mean['all_three_found'], 0.80, True)}); moved items found "
        f"{mean['moved_found_share']:.1%}; false among found {mean['false_among_found']:.2%}",
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=1.0, help="run-to-run SD at temperature 1, scale points")
    parser.add_argument("--seed", type=int, default=20260514)
    parser.add_argument("--quick", action="store_true", help="200 replicates")
    args = parser.parse_args(argv)
    if args.quick:
        args.replicates = 200
    started = time.perf_counter()
    print(
        f"bench.drift_items: {args.replicates} replicates, seed {args.seed}; 12 items (4 constructs x 3), "
        f"4 prompts x t0, t1 x 3 runs; noise SD at t1 {args.noise:g}, drift margin +-{DRIFT_MARGIN:g}"
    )
    base = answerer(args.seed, args.noise)
    results = [one_replicate(base, args.seed + 1 + index) for index in range(args.replicates)]
    for line in report(results):
        print(line)
    print(f"elapsed {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
