"""Which items changed their answers beyond the noise of asking again, per model against the baseline.

A model asked again at a temperature above 0 answers differently run to run, so counting the conditions
whose answer differs from the baseline's (changes.csv) names every item of a noisy model, changed or not.
Here each item's answers are tested against the baseline's on the conditions both scored, within each
cell of the design (the item under one prompt, temperature, ...: its runs are repetitions), by an exact
permutation test whose null holds each cell's own run-to-run noise (snap_bench.stats.reliable_change).
Over an instrument's items the false discovery rate is held at 5 % by Benjamini-Hochberg: an item is a
reliable change when its q-value is at most 0.05.

The statistic is the item's mean shift (keyed points): a change that moves an item's answers up under one
prompt and down under another by as much is not a shift, and stays visible in changes.csv only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from snap_bench.observations.observation import Observation

FALSE_DISCOVERY_RATE = 0.05
# An item's outcome: its answers moved beyond the run noise (q <= the rate), no such move was found, or it
# could not be tested (no condition both scored): never a pass where the gate follows the items.
CHANGED = "changed"
NOT_SHOWN = "no change found"
NOT_TESTED = "not tested"


@dataclass(frozen=True)
class ItemChange:
    """One item of one instrument, a new model against the baseline: what moved and how surely."""

    model: str
    baseline: str
    instrument: str
    item: str
    # Conditions both were asked, and those whose answer (score or answer code) differs.
    conditions: int
    changed_conditions: int
    # Mean keyed difference (new - baseline) over the conditions both scored; None where none was.
    shift: float | None
    p: float | None
    q: float | None
    reliable: bool

    @property
    def rate(self) -> float:
        """The false discovery rate the item's q is judged at."""
        return FALSE_DISCOVERY_RATE

    @property
    def outcome(self) -> str:
        return NOT_TESTED if self.q is None else CHANGED if self.reliable else NOT_SHOWN

    @property
    def name(self) -> str:
        """The check's name: ``NEW-vs-OLD-INSTRUMENT-item[ITEM]``."""
        return f"{self.model}-vs-{self.baseline}-{self.instrument}-item[{self.item}]"

    @property
    def message(self) -> str:
        """The check's message: the outcome, then the shift, its q and what it rests on."""
        if self.q is None or self.shift is None:
            return (
                f"{NOT_TESTED}: {self.model} vs {self.baseline} {self.instrument} item {self.item}: no condition both "
                f"models scored ({self.conditions} asked of both); an item not tested is never a pass"
            )
        return (
            f"{self.outcome}: {self.model} vs {self.baseline} {self.instrument} item {self.item}: shift "
            f"{self.shift:+.2f} keyed points, q = {self.q:.4f} (false discovery rate {FALSE_DISCOVERY_RATE:g}); "
            f"{self.changed_conditions} of {self.conditions} conditions answered differently"
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def item_changes(observations: Sequence[Observation], baseline_model: str) -> list[ItemChange]:
    """Every (new model, instrument, item) both were asked, tested against the baseline's answers."""
    from snap_bench.stats.multiple_testing import benjamini_hochberg  # numpy: the controller, at session end

    baseline = {(o.instrument, o.condition_id): o for o in observations if o.model == baseline_model}
    pairs: dict[tuple[str, str, str], list[tuple[Observation, Observation]]] = defaultdict(list)
    for new in observations:
        if new.model == baseline_model:
            continue
        old = baseline.get((new.instrument, new.condition_id))
        if old is not None:
            pairs[(new.model, new.instrument, new.item)].append((new, old))
    tested = {key: _test(rows) for key, rows in sorted(pairs.items())}
    # The family for the false discovery rate: one model's items of one instrument.
    families: dict[tuple[str, str], dict[tuple[str, str, str], float]] = defaultdict(dict)
    for key, (_, p) in tested.items():
        if p is not None:
            families[key[:2]][key] = p
    q_values: dict[tuple[str, str, str], float] = {}
    for family in families.values():
        adjusted = benjamini_hochberg(list(family.values()))
        q_values.update(zip(family, (float(q) for q in adjusted), strict=True))
    result = []
    for key, rows in sorted(pairs.items()):
        model, instrument, item = key
        shift, p = tested[key]
        q = q_values.get(key)
        result.append(
            ItemChange(
                model=model,
                baseline=baseline_model,
                instrument=instrument,
                item=item,
                conditions=len(rows),
                changed_conditions=sum((new.score, new.code) != (old.score, old.code) for new, old in rows),
                shift=shift,
                p=p,
                q=q,
                reliable=q is not None and q <= FALSE_DISCOVERY_RATE,
            )
        )
    return result


def _test(rows: list[tuple[Observation, Observation]]) -> tuple[float | None, float | None]:
    """The item's mean keyed shift and its permutation p-value, on the conditions both scored."""
    from snap_bench.stats.reliable_change import within_cell_permutation_test

    scored = [(new, old) for new, old in rows if new.score is not None and old.score is not None]
    if not scored:
        return None, None
    cells: dict[str, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    for new, old in scored:
        new_answers, old_answers = cells[new.cell]
        # The test runs on the answers as given (whole numbers); keying flips or shifts them alike.
        new_answers.append(int(new.score or 0))
        old_answers.append(int(old.score or 0))
    test = within_cell_permutation_test([a for a, _ in cells.values()], [b for _, b in cells.values()])
    keyed = [(new.keyed_score, old.keyed_score) for new, old in scored]
    shifts = [a - b for a, b in keyed if a is not None and b is not None]
    shift = sum(shifts) / len(shifts) if shifts else test.shift
    return shift, test.p


def reliable_items(changes: Sequence[ItemChange], model: str) -> list[tuple[str, str, int]]:
    """(instrument, item, changed conditions) of ``model``'s reliably changed items, most changed first:
    what the terminal and the CI summary list as the items that changed."""
    found = [(c.instrument, c.item, c.changed_conditions) for c in changes if c.model == model and c.reliable]
    return sorted(found, key=lambda row: (-row[2], row[0], row[1]))
