"""--snap-shard=K/N: stable, disjoint parts of one model's conditions (recorded apart and replayed together:
tests/session/test_shards.py)."""

from __future__ import annotations

from snap_bench.design.shards import in_shard, part_of


def test_parts_are_stable_disjoint_and_cover_everything() -> None:
    ids = [f"model-M{item:02d}-P{p}-NEU-t0-C0-r{run}" for item in range(1, 11) for p in (1, 2, 3) for run in (1, 2, 3)]
    parts = {test_id: [k for k in (1, 2, 3) if in_shard(test_id, (k, 3))] for test_id in ids}
    assert all(len(found) == 1 for found in parts.values())
    assert {found[0] for found in parts.values()} == {1, 2, 3}
    assert all(part_of(test_id, 3) == found[0] for test_id, found in parts.items())
    assert all(in_shard(test_id, None) for test_id in ids)
