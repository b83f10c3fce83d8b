"""Statements answered like their reverse: the contradiction rate of an instrument with keyed pairs.

An instrument whose items come in directions (an axis's statements that push right and those that push
left, a construct's statement and its reverse-keyed partner) pairs the k-th forward item of a group with
its k-th reverse item and asks, under the same condition (paraphrase, system prompt, run, ...), whether
the two answers sit on the same side of the scale. An answerer that agrees with everything contradicts
itself in every pair however its strength follows the item, which no stability figure can see.

The rate is computed per temperature (never pooled) for the verdict, and the per-pair table is what the
upgrade gate pairs two models on. pandas is imported by the caller, on the controller at session end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from snap_bench.analysis.metric_tables import Metric
from snap_bench.stats import UndefinedStatistic
from snap_bench.stats.degenerate import contradiction_rate, contradicts

NO_PAIR = "no statement has a scored counterpart of the other direction"


def reverse_pairs(groups: Mapping[str, str], reverse: Mapping[str, bool]) -> list[tuple[str, str]]:
    """Within each group (an axis, a construct) the k-th forward item with the k-th reverse item, items
    in id order; an item without a partner of the other direction is in no pair."""
    pairs: list[tuple[str, str]] = []
    for group in sorted(set(groups.values())):
        items = sorted(item for item, owner in groups.items() if owner == group)
        forward = [item for item in items if not reverse.get(item)]
        backward = [item for item in items if reverse.get(item)]
        pairs.extend(zip(forward, backward, strict=False))
    return pairs


def pair_table(
    table: Any, pairs: Sequence[tuple[str, str]], condition: Sequence[str], *, shift: float = 0.0, points: int = 5
) -> Any:
    """One row per pair and condition both items were designed for: ``pair`` (``M01/M06``), the
    ``temperature``, the ``condition`` columns, both raw answers on the 1..points scale (``score`` plus
    ``shift``; NaN when unscored), and ``contradiction`` (1 or 0; NaN when either answer is missing)."""
    import pandas as pd

    key = ["temperature", *condition]
    answers = table.set_index(["item", *key])["score"] + shift
    frames = []
    for forward, backward in pairs:
        if forward not in answers.index.get_level_values(0) or backward not in answers.index.get_level_values(0):
            continue
        joined = answers.loc[forward].to_frame("forward").join(answers.loc[backward].to_frame("reverse"), how="inner")
        frames.append(joined.reset_index().assign(pair=f"{forward}/{backward}"))
    if not frames:
        return pd.DataFrame(columns=["pair", *key, "forward", "reverse", "contradiction"])
    result = pd.concat(frames, ignore_index=True)
    first, second = result["forward"].to_numpy(float), result["reverse"].to_numpy(float)
    flags = contradicts(first, second, points=points).astype(float)
    flags[np.isnan(first) | np.isnan(second)] = np.nan
    result["contradiction"] = flags
    return result


def contradiction_metrics(
    table: Any, pairs: Sequence[tuple[str, str]], condition: Sequence[str], *, shift: float = 0.0, points: int = 5
) -> dict[str, Metric]:
    """``contradiction_rate[level]`` per temperature, with its Wilson interval; pairs with an unscored
    answer are left out and counted (the figure's coverage)."""
    paired = pair_table(table, pairs, condition, shift=shift, points=points)
    metrics: dict[str, Metric] = {}
    for level in sorted(table["temperature"].unique(), key=_temperature_order):
        name = f"contradiction_rate[{level}]"
        rows = paired[paired["temperature"] == level]
        if rows.empty:
            metrics[name] = Metric(None, undefined=NO_PAIR)
            continue
        try:
            rate = contradiction_rate(rows["forward"].to_numpy(float), rows["reverse"].to_numpy(float), points=points)
        except UndefinedStatistic as error:
            metrics[name] = Metric(None, n=0, n_left_out=len(rows), undefined=error.reason)
            continue
        metrics[name] = Metric(rate.rate, rate.ci_low, rate.ci_high, n=rate.n_pairs, n_left_out=rate.n_left_out)
    return metrics


def _temperature_order(level: str) -> tuple[float, str]:
    try:
        return float(str(level).removeprefix("t")), str(level)
    except ValueError:
        return float("inf"), str(level)
