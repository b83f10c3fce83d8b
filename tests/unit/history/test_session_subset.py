"""The stored ``subset`` column read back: not known, the whole design, a subset, or words written by hand."""

from __future__ import annotations

from snap_bench.analysis.design_subset import DesignSubset
from snap_bench.history.session_subset import StoredSubset


def test_the_column_round_trips_and_null_is_not_known() -> None:
    assert StoredSubset.stored(None) == StoredSubset()  # written before the store kept it
    assert StoredSubset().column() is None
    whole = StoredSubset.stored("")
    assert whole.known
    assert not whole.is_subset
    two_items = StoredSubset.of(DesignSubset(("items M01,M02 of 25",), 120, 1620))
    assert StoredSubset.stored(two_items.column()) == two_items


def test_a_column_written_by_hand_is_kept_as_its_words_never_a_traceback() -> None:
    assert StoredSubset.stored("items M01 only").label() == "subset: items M01 only"
    assert StoredSubset.stored('{"asked": "x"}').label() == 'subset: {"asked": "x"}'
    assert StoredSubset.stored("[1]").label() == "subset: [1]"
