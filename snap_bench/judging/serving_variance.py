"""How much of the answers' variance is the serving factor's: a G study with the factor's levels as a facet.

Per temperature (never pooled, as every judged figure of the project): the items are what is measured, the factor
(provider or effort) is a facet crossed with the items, and so is the *setting* (the condition's other levels:
system prompt, paraphrase, context ...; a facet only where it has more than one level); runs replicate a cell.
The factor's share is its main effect (a level that moves every answer alike) plus its interaction with the item
(a level that moves some items), over the sum of every component (snap_bench.stats.g_study, REML).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from snap_bench.observations.observation import Observation

ITEM, SETTING, RUN = "item", "setting", "run"


@dataclass(frozen=True)
class FactorShare:
    """The factor's variance components at one temperature (scale points squared) and their share of the total."""

    temperature: str
    observations: int
    levels: int
    share: float | None  # (factor + item x factor) / total; None where the G study could not be fitted
    factor_variance: float | None
    factor_ci: tuple[float, float] | None
    interaction_variance: float | None  # item x factor
    interaction_ci: tuple[float, float] | None
    total_variance: float | None
    note: str = ""  # why there is no share

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def factor_shares(observations: Sequence[Observation], level_of: dict[str, str], factor: str) -> list[FactorShare]:
    """The factor's share at each temperature; ``level_of`` maps each serving's model name to its level."""
    by_temperature: dict[str, list[Observation]] = {}
    for observation in observations:
        if observation.keyed_score is not None and observation.model in level_of:
            by_temperature.setdefault(_temperature(observation), []).append(observation)
    return [_share(t, rows, level_of, factor) for t, rows in sorted(by_temperature.items())]


def _share(temperature: str, rows: list[Observation], level_of: dict[str, str], factor: str) -> FactorShare:
    from snap_bench.stats.errors import UndefinedStatistic
    from snap_bench.stats.g_study import g_study
    from snap_bench.stats.g_study_design import GStudyDesign

    levels = [level_of[o.model] for o in rows]
    settings = [_setting(o) for o in rows]
    labels: dict[str, list[Any]] = {
        ITEM: [o.item for o in rows],
        factor: levels,
        SETTING: settings,
        RUN: [o.run for o in rows],
    }
    facets: tuple[str, ...] = (factor, SETTING) if len(set(settings)) > 1 else (factor,)
    interactions = tuple((ITEM, facet) for facet in facets)
    cells = Counter(zip(labels[ITEM], levels, settings, strict=True))
    replicate = RUN if max(cells.values()) > 1 else None
    empty = FactorShare(temperature, len(rows), len(set(levels)), None, None, None, None, None, None)
    if len(set(levels)) < 2 or len(set(labels[ITEM])) < 2:
        return _noted(empty, "fewer than two levels or items scored at this temperature")
    design = GStudyDesign(ITEM, facets, interactions=interactions, replicate=replicate)
    try:
        study = g_study([o.keyed_score or 0.0 for o in rows], labels, design)  # all scored: filtered above
    except (UndefinedStatistic, ValueError) as error:
        return _noted(empty, f"no G study: {error}")
    main = study.component(factor)
    interaction = study.component(design.name(frozenset({ITEM, factor})))
    total = sum(component.variance for component in study.components)
    return FactorShare(
        temperature=temperature,
        observations=len(rows),
        levels=len(set(levels)),
        share=(main.variance + interaction.variance) / total if total > 0 else 0.0,
        factor_variance=main.variance,
        factor_ci=(main.ci_low, main.ci_high),
        interaction_variance=interaction.variance,
        interaction_ci=(interaction.ci_low, interaction.ci_high),
        total_variance=total,
    )


def _noted(share: FactorShare, note: str) -> FactorShare:
    from dataclasses import replace

    return replace(share, note=note)


def _setting(observation: Observation) -> str:
    """The condition's levels but the item, the run and the temperature: what else the design varied."""
    return "|".join(f"{k}={v}" for k, v in sorted(observation.factors.items()) if k != "temperature")


def _temperature(observation: Observation) -> str:
    return observation.factors.get("temperature", str(observation.temperature))
