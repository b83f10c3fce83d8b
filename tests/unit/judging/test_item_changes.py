"""Item-level change against the baseline and the drift interval on a 12-item design with run-to-run noise
(snap_bench.judging.item_changes, drift): what is chance is not named, what moved is."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from bench.drift_items import CONSTRUCTS, ITEMS, observation
from snap_bench.judging.drift import DRIFT, NO_DRIFT, position_drift
from snap_bench.judging.item_changes import item_changes, reliable_items
from snap_bench.observations.observation import Observation
from snap_bench.report.item_changes_file import COLUMNS, write_item_changes

PROMPTS = ("NEU", "DIR", "PER", "ABS")
TEMPERATURES = (0.0, 1.0)
RUNS = (1, 2, 3)
SCALE = (1.0, 5.0)


def answers(model: str, rng: np.random.Generator, moved: dict[str, float] | None = None) -> list[Observation]:
    """A simulated answerer: item-specific true scores (the same for every model), the mode at t0 and
    noise of one scale point at t1 (about the shipped models' run-to-run SD at t1)."""
    truth = np.random.default_rng(0).uniform(1.5, 3.5, len(ITEMS))
    rows = []
    for item, true in zip(ITEMS, truth, strict=True):
        centre = true + (moved or {}).get(item, 0.0)
        for prompt in PROMPTS:
            for temperature in TEMPERATURES:
                for run in RUNS:
                    noise = rng.normal(0, 1.0) if temperature > 0 else 0.0
                    score = int(np.clip(np.round(centre + noise), *SCALE))
                    rows.append(observation(model, item, prompt, temperature, run, score))
    return rows


def test_identical_answers_change_no_item() -> None:
    rows = answers("old", np.random.default_rng(1))
    same = [
        observation("new", o.item, o.factors["system_prompt"], o.temperature or 0.0, o.run, o.score or 0) for o in rows
    ]
    changes = item_changes([*rows, *same], "old")
    assert len(changes) == len(ITEMS)
    assert all((c.changed_conditions, c.shift, c.p, c.reliable) == (0, 0.0, 1.0, False) for c in changes)
    assert reliable_items(changes, "new") == []


def test_a_model_asked_again_at_t1_changes_answers_but_no_item() -> None:
    """Many conditions differ by chance; no item is a reliable change (seeded)."""
    rows = [*answers("old", np.random.default_rng(2)), *answers("new", np.random.default_rng(3))]
    changes = item_changes(rows, "old")
    assert sum(c.changed_conditions for c in changes) > 50
    assert reliable_items(changes, "new") == []


def test_moved_items_are_reliable_and_listed_most_changed_first() -> None:
    moved = {"Q01": 1.0, "Q05": 1.0, "Q09": -1.0}
    rows = [*answers("old", np.random.default_rng(4)), *answers("new", np.random.default_rng(5), moved)]
    changes = item_changes(rows, "old")
    assert {c.item for c in changes if c.reliable} == set(moved)
    listed = reliable_items(changes, "new")
    assert [count for _, _, count in listed] == sorted((count for _, _, count in listed), reverse=True)
    q01 = next(c for c in changes if c.item == "Q01")
    assert q01.shift == pytest.approx(1.0, abs=0.4)
    assert q01.q is not None
    assert q01.p is not None
    assert q01.p <= q01.q <= 0.05


def test_item_changes_csv_has_one_row_per_item(tmp_path: Path) -> None:
    rows = [*answers("old", np.random.default_rng(6)), *answers("new", np.random.default_rng(7), {"Q02": 2.0})]
    path = tmp_path / "item_changes.csv"
    write_item_changes(path, item_changes(rows, "old"))
    with path.open(encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert tuple(table[0]) == COLUMNS
    assert [row["item"] for row in table] == list(ITEMS)
    assert {row["item"] for row in table if row["reliable"] == "true"} == {"Q02"}


def test_an_unchanged_noisy_model_shows_no_drift_inside_the_scale() -> None:
    rows = [*answers("old", np.random.default_rng(8)), *answers("new", np.random.default_rng(9))]
    drifts = position_drift(rows, "old", {"quiz": 0.5}, {"quiz": SCALE})
    assert [d.construct for d in drifts] == list(CONSTRUCTS)
    for drift in drifts:
        assert drift.ci_low is not None
        assert drift.ci_high is not None
        assert -4.0 <= drift.ci_low <= drift.difference <= drift.ci_high <= 4.0
        assert drift.outcome == NO_DRIFT, drift.message


def test_a_construct_moved_by_a_point_drifts() -> None:
    moved = dict.fromkeys(("Q04", "Q05", "Q06"), 1.0)
    rows = [*answers("old", np.random.default_rng(10)), *answers("new", np.random.default_rng(11), moved)]
    outcomes = {d.construct: d.outcome for d in position_drift(rows, "old", {"quiz": 0.5}, {"quiz": SCALE})}
    assert outcomes == {"c1": NO_DRIFT, "c2": DRIFT, "c3": NO_DRIFT, "c4": NO_DRIFT}


def test_the_interval_is_clipped_to_the_widest_possible_difference() -> None:
    """Differences of 0 and +-4 on a 1-5 scale: a t interval on few runs would reach past +-4."""
    rows = []
    for run, (old, new) in enumerate(((1, 5), (5, 1), (3, 3)), start=1):
        rows += [observation("old", "Q01", "NEU", 1.0, run, old), observation("new", "Q01", "NEU", 1.0, run, new)]
    (drift,) = position_drift(rows, "old", {"quiz": 0.5}, {"quiz": SCALE})
    assert (drift.ci_low, drift.ci_high) == (-4.0, 4.0)
