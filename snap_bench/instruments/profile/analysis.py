"""The tables the upgrade gate pairs the original design's per-bank alphas on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from snap_bench.analysis.metric_tables import pairing_table
from snap_bench.observations.observation import Observation


def bank_table(instrument: Any, observations: Sequence[Observation], bank: str) -> Any:
    """The upgrade gate's table of one item bank's observations (the instrument knows each item's bank)."""
    items = {item.id for item in instrument.items.values() if item.bank == bank}
    return pairing_table(instrument, [o for o in observations if o.item in items])


def moral_bank_table(instrument: Any, observations: Sequence[Observation]) -> Any:
    return bank_table(instrument, observations, "moral")


def personality_bank_table(instrument: Any, observations: Sequence[Observation]) -> Any:
    return bank_table(instrument, observations, "personality")
