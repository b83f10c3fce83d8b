"""Whether a session set out to ask a model the whole design of an instrument, or a subset of it, and what it left out.

The rule: a session is a *subset* of a model's design when some condition the instrument's config designs for that
model was never among the conditions the session set out to ask: items left out (``--snap-items``), a factor's
levels left out (``--snap-temperatures``, ``--snap-prompts``), fewer runs than the design's (``--snap-runs``), a
shard (``--snap-shard``) or tests deselected (``-k``, ``-m``). Its figures answer a question about part of the
design, so the history keeps them apart from the whole design's. Not a subset: more runs than designed (the
design is asked whole, and more), the provider's own temperature (``--snap-temperatures=default``, or an endpoint
that drops it: the design is asked at one temperature, as such a model always is), a follow-up stage not asked
for (``--snap-perturbation-phase2``: the stage is asked only on demand). A subset differs from an *incomplete*
session (:mod:`snap_bench.analysis.coverage`), which set out to ask its conditions and did not get them all; a
session can be both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from snap_bench.observations.observation import Condition

# Up to this many items or levels are named; more are counted.
NAMED = 4


@dataclass(frozen=True)
class DesignSubset:
    """What one session asked of a model's design of one instrument, where it left some of it out."""

    # What was narrowed, in words: ``items M01,M02 of 25``, ``temperature t0 of 3``, ``runs 2 of 5``.
    narrowed: tuple[str, ...]
    asked: int  # the design's conditions the session set out to ask
    designed: int  # the conditions of the design

    def label(self) -> str:
        """``items M01,M02 of 25; 120 of 1620 conditions``."""
        counted = [f"{self.asked} of {self.designed} conditions"] if self.designed else []
        return "; ".join([*self.narrowed, *counted])

    def short_label(self) -> str:
        """``120/1620`` (the design's conditions asked / designed), beside a point on a narrow chart."""
        return f"{self.asked}/{self.designed}"

    def to_json(self) -> dict[str, Any]:
        return {"narrowed": list(self.narrowed), "asked": self.asked, "designed": self.designed}

    @classmethod
    def from_json(cls, values: Mapping[str, Any]) -> DesignSubset:
        narrowed = values.get("narrowed")
        return cls(
            tuple(str(part) for part in narrowed) if isinstance(narrowed, list) else (),
            int(values.get("asked", 0)),
            int(values.get("designed", 0)),
        )


def design_subset(designed: Sequence[Condition], asked: Iterable[Condition]) -> DesignSubset | None:
    """None when the session set out to ask every condition of ``designed``; else what it left out.

    ``designed`` are the conditions of the model's design (nothing selected), ``asked`` those the session set out
    to ask (after every selection, shard and deselection)."""
    asked_ids = {condition.id for condition in asked}
    kept = [condition for condition in designed if condition.id in asked_ids]
    if len(kept) == len(designed):
        return None
    narrowed = []
    items = _fewer("items", [c.item for c in designed], [c.item for c in kept])
    narrowed += [items] if items else []
    factors = dict.fromkeys(factor for condition in designed for factor, _ in condition.levels)
    for factor in factors:
        levels = _fewer(
            factor.replace("_", " "),
            [level for c in designed for f, level in c.levels if f == factor],
            [level for c in kept for f, level in c.levels if f == factor],
        )
        narrowed += [levels] if levels else []
    runs_designed, runs_kept = {c.run for c in designed}, {c.run for c in kept}
    if runs_kept < runs_designed:
        narrowed.append(f"runs {len(runs_kept)} of {len(runs_designed)}")
    return DesignSubset(tuple(narrowed), len(kept), len(designed))


def _fewer(name: str, designed: Sequence[str], kept: Sequence[str]) -> str:
    """``items M01,M02 of 25`` when ``kept`` holds fewer distinct values than ``designed``; else ''."""
    every, left = list(dict.fromkeys(designed)), set(kept)
    if len(left) == len(every):
        return ""
    chosen = [value for value in every if value in left]
    named = ",".join(chosen) if len(chosen) <= NAMED else str(len(chosen))
    return f"{name} {named or 'none'} of {len(every)}"


# The key of session.json (and analysis.json's session) that says what each model's instruments left out.
SUBSETS_KEY = "subsets"


def subsets_json(subsets: Mapping[tuple[str, str], DesignSubset]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{model: {instrument: subset}}``: a pair the session asked whole is absent."""
    document: dict[str, dict[str, dict[str, Any]]] = {}
    for (model, instrument), subset in sorted(subsets.items()):
        document.setdefault(model, {})[instrument] = subset.to_json()
    return document


def subsets_of(session_meta: Mapping[str, Any]) -> dict[tuple[str, str], DesignSubset] | None:
    """The subsets a session's meta holds, by (model, instrument); None when it says nothing of them (a session
    meta written before it did: not known)."""
    document = session_meta.get(SUBSETS_KEY)
    if not isinstance(document, Mapping):
        return None
    return {
        (str(model), str(instrument)): DesignSubset.from_json(values)
        for model, own in document.items()
        if isinstance(own, Mapping)
        for instrument, values in own.items()
        if isinstance(values, Mapping)
    }
