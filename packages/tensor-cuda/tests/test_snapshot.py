"""memory_snapshot: segments with their blocks (address, size, state, stream)."""

from __future__ import annotations

import json

from allocator_checks import check_consistent, check_schema

MiB = 1 << 20


def test_a_segment_and_its_blocks(legacy):
    fake, alloc = legacy
    a = alloc.malloc(5 * MiB, stream=7)
    b = alloc.malloc(3 * MiB, stream=7)
    alloc.free(a)
    (seg,) = alloc.snapshot()
    assert seg == {
        "device": 0,
        "address": a,
        "total_size": 20 * MiB,
        "allocated_size": 3 * MiB,
        "active_size": 3 * MiB,
        "requested_size": 3 * MiB,
        "stream": 7,
        "segment_type": "large",
        "is_expandable": False,
        "blocks": [
            {"address": a, "size": 5 * MiB, "requested_size": 0, "state": "inactive"},
            {"address": b, "size": 3 * MiB, "requested_size": 3 * MiB, "state": "active_allocated"},
            {"address": b + 3 * MiB, "size": 12 * MiB, "requested_size": 0, "state": "inactive"},
        ],
    }
    alloc.free(b)


def test_pending_frees_are_active(legacy):
    fake, alloc = legacy
    ptr = alloc.malloc(1000, stream=1)
    alloc.record_stream(ptr, 2)
    alloc.free(ptr)
    (seg,) = alloc.snapshot()
    assert seg["segment_type"] == "small"
    assert seg["blocks"][0]["state"] == "active_pending_free"
    assert seg["active_size"] == 1024 and seg["allocated_size"] == 0


def test_expandable_segments_show_their_mapped_runs(expandable):
    fake, alloc = expandable
    a, b, c = (alloc.malloc(4 * MiB) for _ in range(3))
    alloc.free(b)
    alloc.empty_cache()  # unmaps b's pages: two runs
    snapshot = alloc.snapshot()
    assert [(s["address"], s["total_size"], s["is_expandable"]) for s in snapshot] == [
        (a, 4 * MiB, True),
        (c, 4 * MiB, True),
    ]
    alloc.free(a)
    alloc.free(c)


def test_the_snapshot_round_trips_through_json(expandable):
    fake, alloc = expandable
    ptrs = [alloc.malloc(n, stream=n % 4) for n in (100, 2 * MiB, 30 * MiB, 700_000)]
    alloc.record_stream(ptrs[0], 9)
    alloc.free(ptrs[0])
    alloc.free(ptrs[2])
    snapshot, _ = check_consistent(fake, alloc)
    again = json.loads(json.dumps(snapshot))
    check_schema(again)
    assert again == snapshot
