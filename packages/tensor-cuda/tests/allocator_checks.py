"""Invariants of the allocator's state, checked against its snapshot, its
statistics and the fake device (shared by the example and property tests)."""

from __future__ import annotations

POOLS = ("all", "small_pool", "large_pool")
STATES = {"active_allocated", "active_pending_free", "inactive"}
SEGMENT_KEYS = {
    "device": int,
    "address": int,
    "total_size": int,
    "allocated_size": int,
    "active_size": int,
    "requested_size": int,
    "stream": int,
    "segment_type": str,
    "is_expandable": bool,
    "blocks": list,
}
BLOCK_KEYS = {"address": int, "size": int, "requested_size": int, "state": str}


def check_schema(snapshot):
    """The snapshot's shape: a list of segments, each with its blocks."""
    assert isinstance(snapshot, list)
    for seg in snapshot:
        assert set(seg) == set(SEGMENT_KEYS), seg.keys()
        for key, kind in SEGMENT_KEYS.items():
            assert isinstance(seg[key], kind), (key, seg[key])
        assert seg["segment_type"] in ("small", "large")
        assert seg["blocks"], "a segment has at least one block"
        for block in seg["blocks"]:
            assert set(block) == set(BLOCK_KEYS), block.keys()
            for key, kind in BLOCK_KEYS.items():
                assert isinstance(block[key], kind), (key, block[key])
            assert block["state"] in STATES


def expected_stats(snapshot, reserve_size):
    """memory_stats' current values derived from the snapshot alone (segment
    counts of malloc'd segments only). `reserve_size` is the address space of one
    expandable segment: a mapped run that covers it has no neighbours."""
    names = (
        "allocation",
        "active",
        "inactive_split",
        "allocated_bytes",
        "reserved_bytes",
        "active_bytes",
        "inactive_split_bytes",
        "requested_bytes",
    )
    want = {f"{name}.{pool}.current": 0 for name in names for pool in POOLS}
    for pool in POOLS:
        want[f"segment.{pool}.current"] = 0

    def bump(name, seg, amount):
        want[f"{name}.all.current"] += amount
        want[f"{name}.{seg['segment_type']}_pool.current"] += amount

    for seg in snapshot:
        if not seg["is_expandable"]:
            bump("segment", seg, 1)
        bump("reserved_bytes", seg, seg["total_size"])
        if seg["is_expandable"]:
            split = len(seg["blocks"]) > 1 or seg["total_size"] < reserve_size
        else:
            split = len(seg["blocks"]) > 1
        for block in seg["blocks"]:
            if block["state"] == "active_allocated":
                bump("allocation", seg, 1)
                bump("allocated_bytes", seg, block["size"])
                bump("requested_bytes", seg, block["requested_size"])
            if block["state"].startswith("active_"):
                bump("active", seg, 1)
                bump("active_bytes", seg, block["size"])
            if block["state"] == "inactive" and split:
                bump("inactive_split", seg, 1)
                bump("inactive_split_bytes", seg, block["size"])
    return want


def check_consistent(fake, alloc, device=0):
    """Snapshot, statistics and the fake device agree; blocks tile their
    segments; segments never overlap; allocated <= reserved <= device size."""
    snapshot = alloc.snapshot()
    check_schema(snapshot)
    stats = alloc.memory_stats(device)

    end = 0
    for seg in sorted(snapshot, key=lambda s: s["address"]):
        assert seg["address"] >= end, "segments overlap"
        addr = seg["address"]
        for block in seg["blocks"]:
            assert block["address"] == addr, "blocks must tile their segment"
            assert block["size"] > 0 and block["size"] % 512 == 0
            if block["state"] == "active_allocated":
                assert block["requested_size"] <= block["size"]
            addr += block["size"]
        assert addr - seg["address"] == seg["total_size"]
        end = addr
        # No two neighbouring free blocks: they would have been merged.
        states = [b["state"] for b in seg["blocks"]]
        assert all(not (a == b == "inactive") for a, b in zip(states, states[1:]))

    granularity = fake.granularity
    reserve_size = -(-fake.total_bytes // granularity) * granularity
    expandable = alloc.expandable_segments(device)
    for key, value in expected_stats(snapshot, reserve_size).items():
        if key.startswith("segment.") and expandable:
            continue  # an expandable segment is a reserved range, however many runs it shows
        assert stats[key] == value, (key, stats[key], value)
    if expandable:
        assert stats["segment.all.current"] * reserve_size == fake.reserved_va_bytes(device)

    allocated = stats["allocated_bytes.all.current"]
    reserved = stats["reserved_bytes.all.current"]
    assert 0 <= allocated <= reserved <= fake.total_bytes
    assert reserved == fake.used_bytes(device), "reserved bytes are what the device handed out"
    for key, value in stats.items():
        if key.endswith(".current"):
            assert value >= 0, key
            assert stats[key[: -len("current")] + "peak"] >= value, key
        if ".all." in key and not key.endswith(".peak"):
            small = stats[key.replace(".all.", ".small_pool.")]
            large = stats[key.replace(".all.", ".large_pool.")]
            assert value == small + large, key
    return snapshot, stats


def check_all_returned(fake, alloc, device=0):
    """After every block is freed and the cache emptied, nothing is held."""
    stats = alloc.memory_stats(device)
    assert stats["reserved_bytes.all.current"] == 0
    assert stats["allocated_bytes.all.current"] == 0
    assert stats["active.all.current"] == 0
    assert stats["segment.all.current"] == 0
    assert alloc.snapshot() == []
    assert fake.used_bytes(device) == 0
    assert fake.mapped_bytes(device) == 0
    assert fake.reserved_va_bytes(device) == 0
    assert fake.live_allocations(device) == 0
