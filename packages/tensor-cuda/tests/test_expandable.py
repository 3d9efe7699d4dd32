"""Expandable segments: address space reserved once per stream and pool, pages
mapped as allocations need them and unmapped when free and the cache is emptied."""

from __future__ import annotations

import pytest
from allocator_checks import check_all_returned, check_consistent

KiB = 1 << 10
MiB = 1 << 20


def test_the_first_allocation_reserves_address_space_and_maps_one_page(expandable):
    fake, alloc = expandable
    ptr = alloc.malloc(1000)
    assert fake.calls("reserve_va") == 1
    assert fake.reserved_va_bytes() == fake.total_bytes  # about the device's size
    assert fake.calls("map") == 1
    assert fake.mapped_bytes() == 2 * MiB
    assert fake.calls("malloc") == 0
    stats = alloc.memory_stats()
    assert stats["reserved_bytes.small_pool.current"] == 2 * MiB
    assert stats["segment.small_pool.current"] == 1
    seg = check_consistent(fake, alloc)[0][0]
    assert seg["is_expandable"] and seg["segment_type"] == "small"
    alloc.free(ptr)


def test_a_segment_grows_in_place(expandable):
    fake, alloc = expandable
    a = alloc.malloc(3 * MiB)  # 2 pages; the 1 MiB left stays with the block
    b = alloc.malloc(3 * MiB)
    c = alloc.malloc(5 * MiB)
    assert b == a + 4 * MiB and c == b + 4 * MiB
    assert fake.calls("reserve_va") == 1
    assert fake.mapped_bytes() == 14 * MiB
    snapshot = check_consistent(fake, alloc)[0]
    assert len(snapshot) == 1  # one contiguous mapped run
    for p in (a, b, c):
        alloc.free(p)


def test_new_pages_extend_a_free_block_below_them(expandable):
    fake, alloc = expandable
    a = alloc.malloc(6 * MiB)
    b = alloc.malloc(2 * MiB)
    alloc.free(b)
    # 2 MiB are free at the top of the mapped range: 3 MiB more need one page.
    c = alloc.malloc(3 * MiB + 512 * KiB)
    assert c == b
    assert fake.calls("map") == 3
    assert fake.mapped_bytes() == 10 * MiB
    alloc.free(a)
    alloc.free(c)


def test_a_growing_batch_reuses_one_range(make):
    """A batch growing by 1 MiB a step, freed each step: malloc'd segments pile
    up (no cached one is large enough), an expandable segment maps the difference."""
    reserved = {}
    for conf in ("expandable_segments:False", ""):
        fake, alloc = make(conf)
        for size in range(10, 30):
            alloc.free(alloc.malloc(size * MiB))
        reserved[conf] = alloc.memory_stats()["reserved_bytes.all.peak"]
        check_consistent(fake, alloc)
    assert reserved["expandable_segments:False"] >= 200 * MiB
    assert reserved[""] == 30 * MiB  # 29 MiB rounded to pages


def test_empty_cache_unmaps_free_pages_and_releases_empty_ranges(expandable):
    fake, alloc = expandable
    ptrs = [alloc.malloc(s) for s in (1000, 3 * MiB, 12 * MiB, 700 * KiB)]
    for p in ptrs:
        alloc.free(p)
    assert fake.mapped_bytes() > 0
    alloc.empty_cache()
    assert fake.calls("unmap") >= 1
    assert fake.calls("release_va") == fake.calls("reserve_va") == 2  # small and large pool
    check_all_returned(fake, alloc)


def test_pages_under_live_blocks_stay_mapped(expandable):
    fake, alloc = expandable
    a = alloc.malloc(4 * MiB)
    b = alloc.malloc(4 * MiB)
    c = alloc.malloc(4 * MiB)
    alloc.free(b)
    alloc.empty_cache()
    assert fake.mapped_bytes() == 8 * MiB
    assert fake.reserved_va_bytes() == fake.total_bytes
    snapshot = check_consistent(fake, alloc)[0]
    assert [(s["address"], s["total_size"]) for s in snapshot] == [(a, 4 * MiB), (c, 4 * MiB)]
    # The hole is mapped again when needed, at the same place.
    again = alloc.malloc(4 * MiB)
    assert again == b
    assert fake.mapped_bytes() == 12 * MiB
    for p in (a, again, c):
        alloc.free(p)
    alloc.empty_cache()
    check_all_returned(fake, alloc)


def test_a_partly_used_page_stays_mapped(make):
    fake, alloc = make("", granularity=64 * KiB)
    a = alloc.malloc(1000)
    b = alloc.malloc(1000)
    alloc.free(a)
    alloc.empty_cache()
    assert fake.mapped_bytes() == 64 * KiB  # b's page
    alloc.free(b)
    alloc.empty_cache()
    check_all_returned(fake, alloc)


def test_fine_granularity_maps_just_what_is_needed(make):
    fake, alloc = make("", granularity=64 * KiB)
    ptr = alloc.malloc(1536 * KiB)
    assert fake.mapped_bytes() == 1536 * KiB
    assert alloc.memory_stats()["reserved_bytes.large_pool.current"] == 1536 * KiB
    small = alloc.malloc(1000)
    assert fake.mapped_bytes() == 1536 * KiB + 64 * KiB
    alloc.free(ptr)
    alloc.free(small)


def test_each_stream_gets_its_own_range(expandable):
    fake, alloc = expandable
    a = alloc.malloc(4 * MiB, stream=1)
    b = alloc.malloc(4 * MiB, stream=2)
    assert fake.calls("reserve_va") == 2
    alloc.free(a)
    assert alloc.malloc(4 * MiB, stream=2) != a
    alloc.free(b)


def test_max_split_size_never_frees_mapped_memory(make):
    """pytorch/pytorch#123548: with both options PyTorch called cudaFree on mapped
    memory. Here expandable segments ignore max_split_size."""
    fake, alloc = make("expandable_segments:True,max_split_size_mb:40")
    big = alloc.malloc(50 * MiB)
    alloc.free(big)
    small = alloc.malloc(30 * MiB)
    assert small == big  # split, as any expandable block
    alloc.free(small)
    alloc.empty_cache()
    assert fake.calls("free") == 0 and fake.calls("malloc") == 0
    check_all_returned(fake, alloc)


def test_unmapped_ranges_are_mapped_again_after_empty_cache(expandable):
    fake, alloc = expandable
    ptr = alloc.malloc(8 * MiB)
    alloc.free(ptr)
    alloc.empty_cache()
    again = alloc.malloc(8 * MiB)
    assert fake.mapped_bytes() == 8 * MiB
    assert fake.calls("map") == 2
    alloc.free(again)
    alloc.empty_cache()
    check_all_returned(fake, alloc)


def test_a_free_block_keeps_its_partial_pages_at_both_ends(make):
    fake, alloc = make("", granularity=64 * KiB)
    first = alloc.malloc(1000)  # [0, 1 KiB) of the first page
    mid = alloc.malloc(200 * KiB)  # [1 KiB, 201 KiB): pages 0-3
    last = alloc.malloc(1000)  # right after it, in page 3
    assert fake.mapped_bytes() == 256 * KiB
    alloc.free(mid)
    alloc.empty_cache()
    # Pages 1 and 2 lie wholly inside the free block; 0 and 3 hold live blocks.
    assert fake.mapped_bytes() == 128 * KiB
    snapshot = check_consistent(fake, alloc)[0]
    base = first
    assert [(s["address"] - base, s["total_size"]) for s in snapshot] == [
        (0, 64 * KiB),
        (192 * KiB, 64 * KiB),
    ]
    states = [b["state"] for b in snapshot[1]["blocks"]]
    assert states == ["inactive", "active_allocated", "inactive"]
    alloc.free(first)
    alloc.free(last)
    alloc.empty_cache()
    check_all_returned(fake, alloc)


def test_a_failing_map_is_reported(harness, expandable):
    fake, alloc = expandable
    fake.inject("map", error="error")
    with pytest.raises(harness.AllocatorError, match="CUDA error in map on device 0: fakecuda map"):
        alloc.malloc(MiB)
    assert fake.reserved_va_bytes() == 0  # the new range went back
    alloc.free(alloc.malloc(MiB))


def test_garbage_collection_unmaps_the_least_recently_freed_pages(make):
    fake, alloc = make("garbage_collection_threshold:0.5", total_bytes=100 * MiB)
    old = alloc.malloc(20 * MiB, stream=1)
    recent = alloc.malloc(24 * MiB, stream=2)
    alloc.free(old)
    alloc.free(recent)
    ptr = alloc.malloc(10 * MiB, stream=3)  # 44 + 10 MiB would pass 50 MiB
    assert fake.calls("unmap") == 1
    assert fake.mapped_bytes() == 34 * MiB
    assert {s["stream"] for s in alloc.snapshot()} == {2, 3}
    alloc.free(ptr)
