"""Stable, disjoint parts of a design (``--snap-shard=K/N``), so N jobs of a CI matrix can share one.

A condition's part is a hash of its test id (``model-condition``), not its position: the parts stay
the same whatever else is selected, whichever machine computes them, and every condition is in
exactly one of them. Each condition's recording is a file of its own, so the parts' recordings never
overlap and can be gathered by copying the folders together.
"""

from __future__ import annotations

import hashlib


def part_of(test_id: str, parts: int) -> int:
    """The part (1..parts) that ``test_id`` belongs to."""
    digest = hashlib.sha256(test_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % parts + 1


def in_shard(test_id: str, shard: tuple[int, int] | None) -> bool:
    """Whether the condition runs in part K of N (every condition runs without a shard)."""
    if shard is None:
        return True
    part, parts = shard
    return part_of(test_id, parts) == part
