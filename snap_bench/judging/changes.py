"""Which conditions changed between the baseline and a new model: every condition both were asked (the same
id) whose answer (score or answer code) differs, with both answers, and counts per item and factor level.

The gate compares figures; this says which answers moved, so a reader can see *what* changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from snap_bench.observations.observation import Observation


@dataclass(frozen=True)
class Change:
    model: str
    baseline: str
    instrument: str
    condition_id: str
    item: str
    factors: dict[str, str]
    baseline_score: int | None
    baseline_code: int | None
    new_score: int | None
    new_code: int | None
    new_answer: str | None

    @property
    def baseline_answer(self) -> str:
        return _answer(self.baseline_score, self.baseline_code)

    @property
    def new_parsed(self) -> str:
        return _answer(self.new_score, self.new_code)


@dataclass(frozen=True)
class ChangeSummary:
    """One new model against the baseline: how many shared conditions, how many changed, and where."""

    model: str
    baseline: str
    shared: int
    changes: tuple[Change, ...]

    def by_item(self) -> list[tuple[str, str, int]]:
        """(instrument, item, changed conditions), most changed first."""
        counts = Counter((c.instrument, c.item) for c in self.changes)
        return [
            (instrument, item, n) for (instrument, item), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ]

    def by_level(self) -> list[tuple[str, str, int]]:
        """(factor, level, changed conditions), most changed first: which prompt or temperature moved most."""
        counts = Counter((factor, level) for c in self.changes for factor, level in c.factors.items())
        return [(factor, level, n) for (factor, level), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def changed_conditions(observations: Sequence[Observation], baseline_model: str) -> list[ChangeSummary]:
    """Per new model, its conditions whose answer differs from the baseline's on the same condition."""
    baseline = {(o.instrument, o.condition_id): o for o in observations if o.model == baseline_model}
    models = sorted({o.model for o in observations if o.model != baseline_model})
    summaries = []
    for model in models:
        changes, shared = [], 0
        for new in (o for o in observations if o.model == model):
            old = baseline.get((new.instrument, new.condition_id))
            if old is None:
                continue
            shared += 1
            if (old.score, old.code) != (new.score, new.code):
                changes.append(
                    Change(
                        model=model,
                        baseline=baseline_model,
                        instrument=new.instrument,
                        condition_id=new.condition_id,
                        item=new.item,
                        factors=dict(new.factors),
                        baseline_score=old.score,
                        baseline_code=old.code,
                        new_score=new.score,
                        new_code=new.code,
                        new_answer=new.raw_answer,
                    )
                )
        changes.sort(key=lambda c: (c.instrument, c.condition_id))
        summaries.append(ChangeSummary(model, baseline_model, shared, tuple(changes)))
    return summaries


def _answer(score: int | None, code: int | None) -> str:
    """The parsed answer as both sides have it: the score, or the answer code when there is none."""
    return str(score) if code is None and score is not None else f"code {code}"


def changed_keys(summaries: Sequence[ChangeSummary]) -> set[tuple[str, str, str]]:
    """(model, instrument, condition id) of every changed condition, for the report's "changed" filter."""
    return {(c.model, c.instrument, c.condition_id) for summary in summaries for c in summary.changes}
