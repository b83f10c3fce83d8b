"""Does a model answer the same through another provider, or at another reasoning effort? The serving factors
judged from the observations alone.

A serving is a model name with levels (``gpt-oss-120b@groq``, snap_bench.design.serving), so an offline replay
without the options still finds them. For each base model, instrument, factor and level of the other factor, the
servings that differ only in that factor are the factor's levels, and this module studies them:

- per pair of levels, the excess flip rate with its 95 % interval (snap_bench.judging.serving_flips) and its check
  against the instrument's threshold (snap_bench.judging.serving_check), and the items it moved (the paired exact
  permutation test with a 5 % false discovery rate over items, snap_bench.judging.item_changes, level a standing
  as the baseline) and the construct positions' shifts with their 90 % intervals (snap_bench.judging.drift);
- per item, the agreement and the flip rate across the levels;
- the factor's variance share per temperature (snap_bench.judging.serving_variance);
- the level that differs: with three levels or more, the one whose every pair differs (failed its check or moved
  an item) while no pair without it does; with two, only that the pair differs (neither is "the" odd one).

Plain models (no serving in the name) are not studied.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from snap_bench.analysis.coverage import THIN_COVERAGE
from snap_bench.design.entry_values import REASONING_EFFORTS
from snap_bench.design.serving import EFFORT, FACTORS, serving_of
from snap_bench.judging.drift import Drift
from snap_bench.judging.item_changes import ItemChange
from snap_bench.judging.serving_check import FAIL, NOT_JUDGED, UNDECIDED, ServingCheck, serving_check
from snap_bench.judging.serving_flips import RESAMPLES, SEED, flip_rate
from snap_bench.judging.serving_items import ItemAgreement, LevelPosition, item_agreement, level_positions
from snap_bench.judging.serving_variance import FactorShare, factor_shares
from snap_bench.observations.observation import Observation

# The threshold of a factor's flip rate on an instrument: (instrument, factor) -> threshold, None where unset.
FlipThreshold = Callable[[str, str], "float | None"]


@dataclass(frozen=True)
class LevelPair:
    """Two levels of the factor compared: the check of their flip rate, the items moved, the positions shifted."""

    check: ServingCheck
    item_changes: tuple[ItemChange, ...]  # every item both answered, level b against level a
    shifts: tuple[Drift, ...]  # per construct: level b's mean position minus level a's, 90 % interval

    @property
    def moved_items(self) -> tuple[str, ...]:
        return tuple(change.item for change in self.item_changes if change.reliable)

    @property
    def differs(self) -> bool:
        """The pair was shown to differ: its check failed, or an item moved beyond the run noise."""
        return self.check.outcome == FAIL or bool(self.moved_items)

    def to_dict(self) -> dict[str, Any]:
        return {
            "levels": [self.check.level_a, self.check.level_b],
            "check": self.check.to_dict(),
            "moved_items": list(self.moved_items),
            "differs": self.differs,
            "item_changes": [change.to_json() for change in self.item_changes],
            "shifts": [shift.to_json() for shift in self.shifts],
        }


@dataclass(frozen=True)
class FactorStudy:
    """One factor of one base model on one instrument, the other factor held at ``held`` (None: not varied)."""

    base: str
    instrument: str
    factor: str
    held: str | None
    levels: tuple[str, ...]
    servings: tuple[str, ...]  # the model names of the levels, in the same order
    pairs: tuple[LevelPair, ...]
    items: tuple[ItemAgreement, ...]
    shares: tuple[FactorShare, ...]
    positions: tuple[LevelPosition, ...]
    # The level that differs from the others (three levels or more), or None.
    differing_level: str | None
    finding: str  # the study in one sentence, for the report's first screen

    @property
    def checks(self) -> tuple[ServingCheck, ...]:
        return tuple(pair.check for pair in self.pairs)

    @property
    def differing_pairs(self) -> tuple[tuple[str, str], ...]:
        return tuple((p.check.level_a, p.check.level_b) for p in self.pairs if p.differs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "instrument": self.instrument,
            "factor": self.factor,
            "held": self.held,
            "levels": list(self.levels),
            "servings": list(self.servings),
            "differing_level": self.differing_level,
            "differing_pairs": [list(pair) for pair in self.differing_pairs],
            "finding": self.finding,
            "pairs": [pair.to_dict() for pair in self.pairs],
            "items": [item.to_dict() for item in self.items],
            "shares": [share.to_dict() for share in self.shares],
            "positions": [position.to_dict() for position in self.positions],
        }


def serving_studies(
    observations: Sequence[Observation],
    flip_threshold: FlipThreshold,
    *,
    drift_margins: Mapping[str, float | None] | None = None,
    ranges: Mapping[str, tuple[float, float] | None] | None = None,
    min_coverage: Mapping[str, float] | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    variance: bool = True,
) -> list[FactorStudy]:
    """Every factor study the observations' servings make, in (base, instrument, factor, held) order.

    ``flip_threshold(instrument, factor)``: the threshold (thresholds.yaml ``provider_flip_rate`` ...);
    ``drift_margins`` / ``ranges`` per instrument, as for drift (the shifts' outcomes and interval bounds);
    ``min_coverage`` per instrument, the share of the conditions asked a pass needs matched (default THIN_COVERAGE);
    ``variance=False`` leaves out the G studies (the calibration bench, which judges the checks only)."""
    groups = _groups(observations)
    by_model: dict[tuple[str, str], list[Observation]] = defaultdict(list)
    for observation in observations:
        by_model[(observation.model, observation.instrument)].append(observation)
    studies = []
    for (base, instrument, factor, held), named in sorted(groups.items(), key=lambda kv: _sort_key(kv[0])):
        levels = tuple(sorted(named, key=lambda level: _level_order(factor, level)))
        servings = tuple(named[level] for level in levels)
        rows = {level: by_model[(named[level], instrument)] for level in levels}
        pairs = tuple(
            _pair(
                base,
                instrument,
                (factor, held),
                (a, b),
                (named[a], named[b]),
                rows,
                flip_threshold,
                drift_margins,
                ranges,
                (min_coverage or {}).get(instrument, THIN_COVERAGE),
                resamples,
                seed,
            )
            for a, b in combinations(levels, 2)
        )
        every = [o for level in levels for o in rows[level]]
        shares = tuple(factor_shares(every, {named[level]: level for level in levels}, factor)) if variance else ()
        differing = _differing_level(levels, pairs)
        studies.append(
            FactorStudy(
                base=base,
                instrument=instrument,
                factor=factor,
                held=held,
                levels=levels,
                servings=servings,
                pairs=pairs,
                items=tuple(item_agreement(rows)),
                shares=shares,
                positions=tuple(level_positions(rows)),
                differing_level=differing,
                finding=_finding(factor, levels, pairs, differing),
            )
        )
    return studies


def _level_order(factor: str, level: str) -> tuple[int, str]:
    """Efforts from the least to the most (low before high: the pair reads "low vs high"), providers by name."""
    if factor == EFFORT and level in REASONING_EFFORTS:
        return -REASONING_EFFORTS.index(level), level
    return 0, level


def _sort_key(key: tuple[str, str, str, str | None]) -> tuple[str, str, str, str]:
    base, instrument, factor, held = key
    return base, instrument, factor, held or ""


def _groups(observations: Sequence[Observation]) -> dict[tuple[str, str, str, str | None], dict[str, str]]:
    """(base, instrument, factor, the other factor's level) -> level -> the serving's model name; only groups of
    two levels or more."""
    found: dict[tuple[str, str, str, str | None], dict[str, str]] = defaultdict(dict)
    for model, instrument in sorted({(o.model, o.instrument) for o in observations}):
        serving = serving_of(model)
        if serving is None:
            continue
        for factor in FACTORS:
            level = serving.level(factor)
            if level is None:
                continue
            other = next(f for f in FACTORS if f != factor)
            found[(serving.base, instrument, factor, serving.level(other))][level] = model
    return {key: named for key, named in found.items() if len(named) > 1}


def _pair(
    base: str,
    instrument: str,
    factor_held: tuple[str, str | None],
    levels: tuple[str, str],
    servings: tuple[str, str],
    rows: Mapping[str, Sequence[Observation]],
    flip_threshold: FlipThreshold,
    drift_margins: Mapping[str, float | None] | None,
    ranges: Mapping[str, tuple[float, float] | None] | None,
    min_coverage: float,
    resamples: int,
    seed: int,
) -> LevelPair:
    from snap_bench.judging.drift import position_drift
    from snap_bench.judging.item_changes import item_changes

    factor, held = factor_held
    a, b = (rows[level] for level in levels)
    both = [*a, *b]
    changes = tuple(item_changes(both, servings[0]))
    moved = tuple(change.item for change in changes if change.reliable)
    margins = {instrument: (drift_margins or {}).get(instrument)}
    bounds = {instrument: (ranges or {}).get(instrument)}
    shifts = tuple(position_drift(both, servings[0], margins, bounds))
    flips = flip_rate(a, b, resamples=resamples, seed=seed)
    threshold = flip_threshold(instrument, factor)
    check = serving_check(
        base, instrument, factor, levels, servings, flips, threshold, moved, shifts, min_coverage, held
    )
    return LevelPair(check=check, item_changes=changes, shifts=shifts)


def _differing_level(levels: tuple[str, ...], pairs: tuple[LevelPair, ...]) -> str | None:
    """The level every one of whose pairs differs while no pair without it does; with two levels never one."""
    if len(levels) < 3:
        return None
    for level in levels:
        with_it = [p.differs for p in pairs if level in (p.check.level_a, p.check.level_b)]
        without = [p.differs for p in pairs if level not in (p.check.level_a, p.check.level_b)]
        if all(with_it) and not any(without):
            return level
    return None


def _finding(factor: str, levels: tuple[str, ...], pairs: tuple[LevelPair, ...], differing: str | None) -> str:
    shown = [p for p in pairs if p.differs]
    if differing is not None:
        others = ", ".join(level for level in levels if level != differing)
        return f"{factor} {differing} differs from the other levels ({others})"
    if not shown:
        open_ = [p.check.outcome for p in pairs if p.check.outcome in (UNDECIDED, NOT_JUDGED)]
        if open_:
            # Not shown to differ is not shown alike: a pair undecided or not judged says nothing either way.
            said = ", ".join(sorted(set(open_), reverse=True))
            return (
                f"{len(open_)} of {len(pairs)} pair(s) not decided ({said}): whether a {factor} level differs is open"
            )
        return f"no {factor} level was shown to differ ({', '.join(levels)})"
    named = "; ".join(f"{p.check.level_a} vs {p.check.level_b}" for p in shown)
    if len(levels) == 2:
        return f"the two {factor} levels differ ({named}); with two levels neither is named as the odd one"
    return f"{factor} levels differ ({named}), no single level stands apart"


def serving_checks(studies: Sequence[FactorStudy]) -> list[ServingCheck]:
    """Every pair's check, in the studies' order."""
    return [check for study in studies for check in study.checks]
