"""A session that set out to ask only part of a model's design is a subset, and says what it left out."""

from __future__ import annotations

import itertools

from snap_bench.analysis.design_subset import DesignSubset, design_subset, subsets_json, subsets_of
from snap_bench.observations.observation import Condition

ITEMS = ("A1", "A2", "A3")
PROMPTS = ("NEU", "DIR")
TEMPERATURES = ("t0", "t1")


def design(
    items: tuple[str, ...] = ITEMS,
    prompts: tuple[str, ...] = PROMPTS,
    temperatures: tuple[str, ...] = TEMPERATURES,
    runs: int = 3,
) -> list[Condition]:
    """3 items x 2 system prompts x 2 temperatures x 3 runs = 36 conditions (fewer when narrowed)."""
    return [
        Condition("q", item, (("system_prompt", prompt), ("temperature", temperature)), float(temperature[1:]), run)
        for item, prompt, temperature, run in itertools.product(items, prompts, temperatures, range(1, runs + 1))
    ]


WHOLE = design()


def test_the_whole_design_or_more_runs_than_designed_is_no_subset() -> None:
    assert len(WHOLE) == 36
    assert design_subset(WHOLE, WHOLE) is None
    assert design_subset(WHOLE, design(runs=5)) is None  # --snap-runs=5: the design, and more


def test_items_left_out_are_named_with_the_designs_count() -> None:
    subset = design_subset(WHOLE, design(items=("A1", "A2")))
    assert subset == DesignSubset(("items A1,A2 of 3",), 24, 36)
    assert subset.label() == "items A1,A2 of 3; 24 of 36 conditions"
    assert subset.short_label() == "24/36"


def test_each_narrowed_factor_and_fewer_runs_are_named() -> None:
    subset = design_subset(WHOLE, design(prompts=("NEU",), temperatures=("t0",), runs=2))
    assert subset is not None
    assert subset.narrowed == ("system prompt NEU of 2", "temperature t0 of 2", "runs 2 of 3")
    assert (subset.asked, subset.designed) == (3 * 1 * 1 * 2, 36)


def test_a_shard_or_a_deselection_that_narrows_no_factor_counts_the_conditions() -> None:
    subset = design_subset(WHOLE, WHOLE[1:])  # one condition deselected (-k)
    assert subset is not None
    assert subset.narrowed == ()
    assert subset.label() == "35 of 36 conditions"


def test_more_items_than_can_be_named_are_counted() -> None:
    many = tuple(f"M{index:02d}" for index in range(1, 26))
    subset = design_subset(design(items=many), design(items=many[:5]))
    assert subset is not None
    assert subset.narrowed == ("items 5 of 25",)


def test_the_session_json_form_round_trips_and_an_older_session_says_nothing() -> None:
    subset = DesignSubset(("items A1 of 3",), 12, 36)
    document = subsets_json({("model-a", "profile"): subset})
    assert document == {"model-a": {"profile": {"narrowed": ["items A1 of 3"], "asked": 12, "designed": 36}}}
    assert subsets_of({"subsets": document}) == {("model-a", "profile"): subset}
    assert subsets_of({"subsets": {}}) == {}  # every design asked whole
    assert subsets_of({}) is None  # a session meta of before: not known
