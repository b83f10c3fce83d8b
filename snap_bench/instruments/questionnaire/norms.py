"""A model's answers beside human norms: per construct, the model's mean keyed answer with its interval
against the respondents' distribution (z and percentile), and the model's alpha beside theirs.

The model is treated as a respondent measured on many occasions: an occasion is one paraphrase, system
prompt, temperature, context and run, and its trait score is the mean of the construct's keyed answers
then, as a respondent's is. The interval is a t interval over occasions. The percentile places the mean
in a normal distribution with the respondents' mean and SD (only their summary figures are shipped).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from snap_bench.instruments.questionnaire.design import Norms
from snap_bench.instruments.questionnaire.factors import OCCASION


def against_norms(valid: Any, norms: Norms, model_alphas: Mapping[str, float | None]) -> dict[str, Any]:
    """analysis.json's ``details.norms`` from the scored answers' table (one row per answer, with the
    occasion's factors): ``traits`` and ``items``, the model beside the respondents."""
    import pandas as pd
    from scipy import stats

    table = valid
    traits: dict[str, Any] = {}
    for trait, human in norms.traits.items():
        scores = (
            table[table["construct"] == trait].groupby(list(OCCASION))["keyed"].mean() if len(table) else pd.Series()
        )
        n = len(scores)
        mean = float(scores.mean()) if n else None
        interval = None
        if n >= 2 and mean is not None:
            half = float(stats.t.ppf(0.975, n - 1) * scores.std(ddof=1) / math.sqrt(n))
            interval = [mean - half, mean + half]
        z = (mean - human.mean) / human.sd if mean is not None else None
        traits[trait] = {
            "model_mean": mean,
            "model_ci": interval,
            "occasions": n,
            "human_mean": human.mean,
            "human_sd": human.sd,
            "z": z,
            "percentile": 100 * float(stats.norm.cdf(z)) if z is not None else None,
            "model_alpha": model_alphas.get(trait),
            "human_alpha": human.alpha,
        }
    items: dict[str, Any] = {}
    means = table.groupby("item")["score"].mean() if len(table) else pd.Series()
    for item, human_item in norms.items.items():
        model = float(means[item]) if item in means.index else None
        items[item] = {
            "model_mean": model,
            "human_mean": human_item.mean,
            "human_sd": human_item.sd,
        }
    return {"source": norms.source, "respondents": norms.respondents, "traits": traits, "items": items}


def norms_lines(norms: Mapping[str, Any] | None) -> list[str]:
    """Under the model's verdict: where it stands among the respondents, construct by construct."""
    if not norms:
        return []
    lines = [f"against {norms['respondents']:,} people ({norms['source']}):"]
    for trait, figures in norms["traits"].items():
        mean, interval = figures["model_mean"], figures["model_ci"]
        if mean is None:
            lines.append(f"  {trait}: no scored answers")
            continue
        span = f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else ""
        alpha, human_alpha = figures["model_alpha"], figures["human_alpha"]
        lines.append(
            f"  {trait}: {mean:.2f}{span} vs {figures['human_mean']:.2f} (SD {figures['human_sd']:.2f}), "
            f"z {figures['z']:+.2f}, percentile {figures['percentile']:.0f}; alpha "
            f"{'n/a' if alpha is None else f'{alpha:.2f}'} vs "
            f"{'not reported' if human_alpha is None else f'{human_alpha:.2f}'}"
        )
    return lines
