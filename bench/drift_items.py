"""Does drift pass an unchanged model, and does the item-level test name only items that moved?

A simulated 12-item questionnaire (1-5 agreement scale, 4 constructs of 3 items), asked under the design's
factors: 4 system prompts x temperatures 0 and 1 x 3 runs (24 conditions per item, 288 per model). The
answerer has an item-specific true score (uniform on 1.5-4.5) and a small effect of each prompt on each
item (SD 0.3), both fixed for the bench; at temperature 0 it answers the rounded score every run, at
temperature 1 the rounded score plus normal noise (SD ``--noise``, default 1.0 scale point: the shipped
models' run-to-run SD at t1 is 0.99 (profile) to 1.24 (bfi25) in baselines/qwen2.5-coder-1.5b.json),
clipped to 1-5. With ``--unscored FRACTION`` each answer, of either model, is independently left unscored
(score None, as an answer the parser could not read) with that probability, so a condition is paired with
probability (1 - FRACTION)^2 (smollm2-135m leaves 74 % of its profile answers unscored). Each replicate
draws the baseline's and the new model's answers afresh and judges them with the session's own code
(``position_drift`` with the shipped drift_margin of 0.5, ``item_changes``):

- (a) unchanged: the same answerer asked again; every construct must be ``no drift`` (target >= 95 % of
  replicates);
- (b) one construct moved: its three items one keyed point in one direction, towards the middle of the
  scale from their mean (so the move is hardly clipped away); that construct must fail drift, ``drift``
  or ``undecided`` (target >= 80 %);
- (c) the unchanged model's items reported as reliably changed (false discoveries), on average
  (target <= 5 % of items);
- (d) three items moved (one point each, in three constructs): the share of replicates where all three
  are found (target >= 80 %), beside the share of moved items found and the false discoveries among the
  found;
- (e) one construct moved by the margin: its items' true scores shifted together by the amount that moves
  the construct's expected keyed answer (over all its conditions, after rounding and clipping) by 0.5
  point, the smallest such shift; the share of replicates calling it ``no drift`` (the equivalence test's
  error: target <= 5 %);
- (f) coverage of the 90 % drift interval (the one ``no drift`` is read off): the share of intervals that
  hold the true difference, the expected new - baseline keyed answer averaged over the conditions both
  models scored in that replicate (so it is the interval's own estimand, given which answers were
  unscored), for the unchanged model's constructs and the constructs moved in (b) and (e) (target >= 90 %);
  a construct with no interval (too few paired answers) is counted apart.

    .venv/bin/python -m bench.drift_items [--replicates 1000] [--noise 1.0] [--unscored 0.0] [--seed 20260514]
    .venv/bin/python -m bench.drift_items --quick          # 200 replicates
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from snap_bench.judging.drift import NO_DRIFT, Drift, position_drift
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

    def moved(self, items: Sequence[str], together: bool = False, by: float = 1.0) -> Answerer:
        """The same answerer with ``items`` ``by`` points towards the middle of the scale (so the move is not
        clipped away): each on its own, or ``together`` in one direction, the one their mean lies to."""
        middle = (LOW + HIGH) / 2

        def towards_middle(values: Sequence[float]) -> float:
            return by if float(np.mean(values)) < middle else -by

        shared = towards_middle([v for (item, _), v in self.truth.items() if item in items])
        own = {item: towards_middle([v for (i, _), v in self.truth.items() if i == item]) for item in items}
        truth = {
            (item, prompt): value + ((shared if together else own[item]) if item in items else 0.0)
            for (item, prompt), value in self.truth.items()
        }
        return Answerer(truth, self.noise)

    def answers(self, model: str, rng: np.random.Generator, unscored: float = 0.0) -> list[Observation]:
        rows = []
        for item in ITEMS:
            for prompt in PROMPTS:
                for temperature in TEMPERATURES:
                    draws = rng.normal(0.0, self.noise[temperature], len(RUNS)) if self.noise[temperature] else 0.0
                    scores = np.clip(np.round(self.truth[item, prompt] + draws), LOW, HIGH) * np.ones(len(RUNS))
                    # Drawn only when asked for, so --unscored 0 replays the earlier figures' random stream.
                    lost = rng.random(len(RUNS)) < unscored if unscored else np.zeros(len(RUNS), dtype=bool)
                    rows += [
                        observation(model, item, prompt, temperature, run, None if gone else int(s))
                        for run, s, gone in zip(RUNS, scores, lost, strict=True)
                    ]
        return rows

    def expected(self, item: str, prompt: str, temperature: float) -> float:
        """The expected answer of one condition: the rounded, clipped true score under the run noise."""
        truth, sd = self.truth[item, prompt], self.noise[temperature]
        if not sd:
            return float(np.clip(np.round(truth), LOW, HIGH))
        cuts = scipy_stats.norm.cdf((np.arange(LOW, HIGH) + 0.5 - truth) / sd)  # P(answer <= k), k = LOW..HIGH-1
        return float(HIGH - cuts.sum())


def answerer(seed: int, noise: float) -> Answerer:
    rng = np.random.default_rng(seed)
    items = rng.uniform(1.5, 4.5, len(ITEMS))
    truth = {(item, prompt): items[i] + rng.normal(0.0, 0.3) for i, item in enumerate(ITEMS) for prompt in PROMPTS}
    return Answerer(truth, {0.0: 0.0, 1.0: noise})


def observation(model: str, item: str, prompt: str, temperature: float, run: int, score: int | None) -> Observation:
    """One answer of the 12-item design (also the unit tests' rows); ``score`` None for an unscored one."""
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
        raw_answer=None if score is None else str(score),
        score=score,
        keyed_score=None if score is None else float(score),
        code=-2 if score is None else None,
        reason="",
        construct=CONSTRUCTS[ITEMS.index(item) // 3],
    )


def construct_shift(base: Answerer, moved: Answerer, construct: str, rows: Sequence[Observation] | None) -> float:
    """The true difference of ``construct``: expected new - baseline answer, averaged over ``rows``' conditions
    that both models scored (None: over every condition of the design)."""
    if rows is None:
        conditions = [
            (item, prompt, temperature)
            for item in ITEMS
            if CONSTRUCTS[ITEMS.index(item) // 3] == construct
            for prompt in PROMPTS
            for temperature in TEMPERATURES
            for _ in RUNS
        ]
    else:
        scored = {(o.model, o.condition_id) for o in rows if o.keyed_score is not None}
        conditions = [
            (o.item, o.factors["system_prompt"], o.temperature or 0.0)
            for o in rows
            if o.model == "new"
            and o.construct == construct
            and {("new", o.condition_id), ("old", o.condition_id)} <= scored
        ]
    if not conditions:
        return float("nan")
    return float(np.mean([moved.expected(*c) - base.expected(*c) for c in conditions]))


def margin_move(base: Answerer) -> Answerer:
    """The answerer with the moved construct's items shifted together by the smallest amount that moves its
    expected keyed answer by the drift margin (bisection: rounding at temperature 0 makes the move a step
    function of the shift, so the figure reached is printed)."""
    items = ITEMS[3:6]

    def reach(by: float) -> float:
        return abs(construct_shift(base, base.moved(items, together=True, by=by), MOVED_CONSTRUCT, None))

    low, high = 0.0, 2.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if reach(middle) < DRIFT_MARGIN else (low, middle)
    return base.moved(items, together=True, by=high)


def covers(drift: Drift, truth: float) -> float:
    """1 where the interval holds the true difference, 0 where it misses it, NaN where there is none."""
    if drift.ci_low is None or drift.ci_high is None:
        return float("nan")
    return float(drift.ci_low - 1e-12 <= truth <= drift.ci_high + 1e-12)


def one_replicate(base: Answerer, at_margin: Answerer, seed: int, unscored: float = 0.0) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    old = base.answers("old", rng, unscored)
    one_point = base.moved(ITEMS[3:6], together=True)
    unchanged = [*old, *base.answers("new", rng, unscored)]
    construct_moved = [*old, *one_point.answers("new", rng, unscored)]
    items_moved = [*old, *base.moved(MOVED_ITEMS).answers("new", rng, unscored)]
    margins, ranges = {INSTRUMENT: DRIFT_MARGIN}, {INSTRUMENT: (float(LOW), float(HIGH))}
    still = position_drift(unchanged, "old", margins, ranges)
    moved = {d.construct: d for d in position_drift(construct_moved, "old", margins, ranges)}
    false_found = [c.item for c in item_changes(unchanged, "old") if c.reliable]
    found = {c.item for c in item_changes(items_moved, "old") if c.reliable}
    results = {
        "unchanged_passes": float(len(still) == len(CONSTRUCTS) and all(d.outcome == NO_DRIFT for d in still)),
        "constructs_passing": float(np.mean([d.outcome == NO_DRIFT for d in still])) if still else 0.0,
        "half_width": _mean_of_present([_half_width(d) for d in still]),
        "moved_fails": float(moved[MOVED_CONSTRUCT].outcome != NO_DRIFT) if MOVED_CONSTRUCT in moved else 1.0,
        "moved_difference": moved[MOVED_CONSTRUCT].difference if MOVED_CONSTRUCT in moved else float("nan"),
        "false_discovery_share": len(false_found) / len(ITEMS),
        "all_three_found": float(set(MOVED_ITEMS) <= found),
        "moved_found_share": len(found & set(MOVED_ITEMS)) / len(MOVED_ITEMS),
        "false_among_found": len(found - set(MOVED_ITEMS)) / max(1, len(found)),
        "unchanged_covered": _mean_of_present([covers(d, 0.0) for d in still]),
        "unchanged_no_interval": float(np.mean([d.ci_low is None for d in still])) if still else 1.0,
        "moved_covered": float("nan"),
    }
    if MOVED_CONSTRUCT in moved:
        truth = construct_shift(base, one_point, MOVED_CONSTRUCT, construct_moved)
        results["moved_covered"] = covers(moved[MOVED_CONSTRUCT], truth)
    results.update(_at_margin(base, at_margin, rng, old, unscored))
    return results


def _at_margin(
    base: Answerer, at_margin: Answerer, rng: np.random.Generator, old: list[Observation], unscored: float
) -> dict[str, float]:
    rows = [*old, *at_margin.answers("new", rng, unscored)]
    margins, ranges = {INSTRUMENT: DRIFT_MARGIN}, {INSTRUMENT: (float(LOW), float(HIGH))}
    drifts = {d.construct: d for d in position_drift(rows, "old", margins, ranges)}
    if MOVED_CONSTRUCT not in drifts:  # no condition both scored: nothing could be called "no drift"
        return {"margin_no_drift": 0.0, "margin_covered": float("nan"), "margin_no_interval": 1.0}
    drift = drifts[MOVED_CONSTRUCT]
    return {
        "margin_no_drift": float(drift.outcome == NO_DRIFT),
        "margin_covered": covers(drift, construct_shift(base, at_margin, MOVED_CONSTRUCT, rows)),
        "margin_no_interval": float(drift.ci_low is None),
    }


def _mean_of_present(values: Sequence[float]) -> float:
    """The mean of the values that are not NaN (a construct without an interval), NaN where none is."""
    present = [value for value in values if not np.isnan(value)]
    return float(np.mean(present)) if present else float("nan")


def _half_width(drift: Drift) -> float:
    if drift.ci_low is None or drift.ci_high is None:
        return float("nan")
    return (drift.ci_high - drift.ci_low) / 2


def report(results: list[dict[str, float]]) -> list[str]:
    mean = {key: float(np.nanmean([r[key] for r in results])) for key in results[0]}

    def verdict(value: float, target: float, at_least: bool) -> str:
        return "met" if (value >= target if at_least else value <= target) else "NOT MET"

    coverage = min(mean["unchanged_covered"], mean["moved_covered"], mean["margin_covered"])
    return [
        f"(a) unchanged model, every construct no drift: {mean['unchanged_passes']:.1%} of replicates "
        f"(target >= 95 %: {verdict(mean['unchanged_passes'], 0.95, True)}); per construct "
        f"{mean['constructs_passing']:.1%}; mean half-width {mean['half_width']:.3f}",
        f"(b) one construct moved one point, drift or undecided: {mean['moved_fails']:.1%} "
        f"(target >= 80 %: {verdict(mean['moved_fails'], 0.80, True)}); mean difference "
        f"{mean['moved_difference']:+.3f}",
        f"(c) unchanged model, items reliably changed: {mean['false_discovery_share']:.2%} of items on average "
        f"(target <= 5 %: {verdict(mean['false_discovery_share'], 0.05, False)})",
        f"(d) three items moved one point, all three found: {mean['all_three_found']:.1%} "
        f"(target >= 80 %: {verdict(mean['all_three_found'], 0.80, True)}); moved items found "
        f"{mean['moved_found_share']:.1%}; false among found {mean['false_among_found']:.2%}",
        f"(e) one construct moved by the margin ({DRIFT_MARGIN:g}), called no drift: {mean['margin_no_drift']:.1%} "
        f"(target <= 5 %: {verdict(mean['margin_no_drift'], 0.05, False)})",
        f"(f) 90 % drift interval holds the true difference: unchanged {mean['unchanged_covered']:.1%}, "
        f"moved one point {mean['moved_covered']:.1%}, moved by the margin {mean['margin_covered']:.1%} "
        f"(target >= 90 %: {verdict(coverage, 0.90, True)}); no interval: unchanged "
        f"{mean['unchanged_no_interval']:.1%}, at the margin {mean['margin_no_interval']:.1%}",
    ]


def fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"--unscored must be in [0, 1); got {text}")
    return value


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=1.0, help="run-to-run SD at temperature 1, scale points")
    parser.add_argument(
        "--unscored", type=fraction, default=0.0, metavar="FRACTION", help="each answer unscored with this probability"
    )
    parser.add_argument("--seed", type=int, default=20260514)
    parser.add_argument("--quick", action="store_true", help="200 replicates")
    args = parser.parse_args(argv)
    if args.quick:
        args.replicates = 200
    started = time.perf_counter()
    base = answerer(args.seed, args.noise)
    at_margin = margin_move(base)
    print(
        f"bench.drift_items: {args.replicates} replicates, seed {args.seed}; 12 items (4 constructs x 3), "
        f"4 prompts x t0, t1 x 3 runs; noise SD at t1 {args.noise:g}, drift margin +-{DRIFT_MARGIN:g}; "
        f"unscored {args.unscored:.0%} of answers; (e)'s construct moves "
        f"{construct_shift(base, at_margin, MOVED_CONSTRUCT, None):+.4f} expected"
    )
    results = [one_replicate(base, at_margin, args.seed + 1 + index, args.unscored) for index in range(args.replicates)]
    for line in report(results):
        print(line)
    print(f"elapsed {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
