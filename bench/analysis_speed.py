"""How long the end-of-session analysis takes: 10 models x 2,160 observations, 1,000 bootstrap resamples.

Prints the time of the full analysis (every metric with its bootstrap interval, effects, breakdowns,
verdicts) next to a bare pandas groupby-mean over the same table, measured in the same run, and
their ratio. Target: the analysis under 10 s on 2 cores.

    .venv/bin/python -m bench.analysis_speed [--models 10] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import time
from itertools import product

import numpy as np

from snap_bench.analysis.metric_tables import AnalysisSettings, analyse, observation_table
from snap_bench.design.config import ConfigFiles
from snap_bench.instruments import ProfileInstrument
from snap_bench.observations.observation import Observation

ITEMS = [f"M0{i}" for i in range(1, 6)] + [f"P0{i}" for i in range(1, 6)]


def simulated_observations(models: int, seed: int = 1) -> list[Observation]:
    """A respondent per model: a stable item trait plus prompt, temperature and run noise.

    10 items x 3 paraphrases x 4 prompts x 3 temperatures x 2 contexts x 3 runs = 2,160 per model.
    """
    rng = np.random.default_rng(seed)
    observations = []
    for model in range(models):
        item_level = {item: rng.uniform(1.5, 4.5) for item in ITEMS}
        prompt_shift = {p: rng.normal(0, 0.3) for p in ("NEU", "DIR", "PER", "ABS")}
        for item, paraphrase, prompt, temperature, context, run in product(
            ITEMS, ("P1", "P2", "P3"), prompt_shift, (0.0, 0.5, 1.0), ("C0", "C1"), (1, 2, 3)
        ):
            noise = rng.normal(0, 0.2 + temperature)
            score = int(np.clip(round(item_level[item] + prompt_shift[prompt] + noise), 1, 5))
            invalid = rng.random() < 0.03
            factors = {
                "paraphrase": paraphrase,
                "system_prompt": prompt,
                "temperature": f"t{temperature:g}",
                "context": context,
            }
            cell = "-".join([item, *factors.values()])
            observations.append(
                Observation(
                    model=f"model-{model}",
                    instrument="profile",
                    condition_id=f"{cell}-r{run}",
                    cell=cell,
                    item=item,
                    factors=factors,
                    temperature=temperature,
                    run=run,
                    messages=[],
                    raw_answer=str(score),
                    score=None if invalid else score,
                    keyed_score=None if invalid else float(score),
                    code=-2 if invalid else None,
                    reason="",
                    construct=item,
                )
            )
    return observations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=1000)
    arguments = parser.parse_args()
    observations = simulated_observations(arguments.models)
    import pandas  # noqa: F401  (imported before timing: both measurements use it)

    started = time.perf_counter()
    table = observation_table(observations)
    table.assign(model=[o.model for o in observations]).groupby(["model", "cell"])["keyed"].mean()
    baseline_s = time.perf_counter() - started

    started = time.perf_counter()
    profile = ProfileInstrument(ConfigFiles.shipped())
    results = analyse(observations, {"profile": profile}, AnalysisSettings(n_resamples=arguments.resamples))
    analysis_s = time.perf_counter() - started

    print(
        f"observations: {len(observations):,} ({arguments.models} models x {len(observations) // arguments.models:,})"
    )
    print(f"bootstrap resamples per interval: {arguments.resamples}")
    print(f"bare pandas groupby-mean (table build included): {baseline_s:.3f} s")
    print(f"full analysis with bootstrap intervals:          {analysis_s:.3f} s")
    print(
        f"ratio analysis / groupby: {analysis_s / baseline_s:.1f}x; target < 10 s: "
        f"{'met' if analysis_s < 10 else 'NOT met'}"
    )
    first = next(iter(results.values()))
    print(
        f"example ({first.model}): icc2_1 = {first.metrics['icc2_1'].value:.3f} "
        f"[{first.metrics['icc2_1'].ci_low:.3f}, {first.metrics['icc2_1'].ci_high:.3f}]"
    )


if __name__ == "__main__":
    main()
