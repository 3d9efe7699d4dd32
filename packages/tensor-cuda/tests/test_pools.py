"""Size rounding, the small and large pools, splitting, coalescing and best fit,
on malloc'd segments (expandable segments off) where segment sizes are exact."""

from __future__ import annotations

import pytest
from allocator_checks import check_all_returned, check_consistent

KiB = 1 << 10
MiB = 1 << 20


def block_size(alloc, ptr):
    for seg in alloc.snapshot():
        for block in seg["blocks"]:
            if block["address"] == ptr:
                return block["size"]
    raise AssertionError(f"no block at {ptr:#x}")


@pytest.mark.parametrize(
    "requested, rounded",
    [(1, 512), (512, 512), (513, 1024), (1000, 1024), (4097, 4608), (MiB - 1, MiB), (MiB, MiB)],
)
def test_small_requests_round_to_512_bytes_in_the_small_pool(legacy, requested, rounded):
    fake, alloc = legacy
    ptr = alloc.malloc(requested)
    stats = alloc.memory_stats()
    assert stats["allocated_bytes.small_pool.current"] == rounded
    assert stats["requested_bytes.small_pool.current"] == requested
    assert stats["segment.small_pool.current"] == 1
    assert stats["reserved_bytes.small_pool.current"] == 2 * MiB  # one small segment
    assert stats["allocation.large_pool.current"] == 0
    assert fake.calls("malloc") == 1
    alloc.free(ptr)


@pytest.mark.parametrize(
    "requested, segment",
    [
        (MiB + 1, 20 * MiB),  # 1..10 MiB carve a 20 MiB segment
        (5 * MiB, 20 * MiB),
        (10 * MiB - 512, 20 * MiB),
        (10 * MiB, 10 * MiB),  # from 10 MiB a segment of its own, rounded to 2 MiB
        (11 * MiB, 12 * MiB),
        (11 * MiB + 1, 12 * MiB),
        (100 * MiB + 7, 102 * MiB),
    ],
)
def test_large_requests_and_their_segments(legacy, requested, segment):
    fake, alloc = legacy
    ptr = alloc.malloc(requested)
    stats = alloc.memory_stats()
    assert stats["reserved_bytes.large_pool.current"] == segment
    assert stats["segment.large_pool.current"] == 1
    assert stats["allocation.large_pool.current"] == 1
    assert stats["allocation.small_pool.current"] == 0
    assert fake.used_bytes() == segment
    check_consistent(fake, alloc)
    alloc.free(ptr)


def test_small_allocations_pack_into_one_2mib_segment(legacy):
    fake, alloc = legacy
    ptrs = [alloc.malloc(1000) for _ in range(4)]
    assert [p - ptrs[0] for p in ptrs] == [0, 1024, 2048, 3072]
    assert fake.calls("malloc") == 1
    # 2048 blocks of 1 KiB fill it; the next one needs a second segment.
    ptrs += [alloc.malloc(1000) for _ in range(2044)]
    assert fake.calls("malloc") == 1
    ptrs.append(alloc.malloc(1000))
    assert fake.calls("malloc") == 2
    check_consistent(fake, alloc)
    for p in ptrs:
        alloc.free(p)
    alloc.empty_cache()
    check_all_returned(fake, alloc)


def test_a_large_segment_serves_several_mid_sized_requests(legacy):
    fake, alloc = legacy
    a = alloc.malloc(5 * MiB)
    b = alloc.malloc(6 * MiB)
    c = alloc.malloc(8 * MiB)
    assert fake.calls("malloc") == 1
    assert b == a + 5 * MiB and c == b + 6 * MiB
    # The last 1 MiB is too small to split off in the large pool: c takes it.
    assert block_size(alloc, c) == 9 * MiB
    assert alloc.memory_stats()["inactive_split.all.current"] == 0
    d = alloc.malloc(MiB + 512)
    assert fake.calls("malloc") == 2
    for p in (a, b, c, d):
        alloc.free(p)


def test_a_large_remainder_of_1mib_or_less_stays_with_the_block(legacy):
    fake, alloc = legacy
    ptr = alloc.malloc(19 * MiB + 512 * KiB)  # a 20 MiB segment, 0.5 MiB over
    stats = alloc.memory_stats()
    assert stats["allocated_bytes.all.current"] == 20 * MiB
    assert stats["requested_bytes.all.current"] == 19 * MiB + 512 * KiB
    assert stats["inactive_split.all.current"] == 0
    alloc.free(ptr)


def test_a_small_remainder_of_512_bytes_is_split_off(legacy):
    fake, alloc = legacy
    ptrs = [alloc.malloc(4096) for _ in range(511)]  # leaves 4 KiB of the 2 MiB
    last = alloc.malloc(3584)
    assert block_size(alloc, last) == 3584
    tail = alloc.malloc(512)
    assert tail == last + 3584 and fake.calls("malloc") == 1
    for p in [*ptrs, last, tail]:
        alloc.free(p)


def test_freed_neighbours_coalesce(legacy):
    fake, alloc = legacy
    a, b, c = (alloc.malloc(4 * MiB) for _ in range(3))
    alloc.free(a)
    alloc.free(c)  # merges with the free tail
    seg = alloc.snapshot()[0]
    assert [(blk["size"], blk["state"]) for blk in seg["blocks"]] == [
        (4 * MiB, "inactive"),
        (4 * MiB, "active_allocated"),
        (12 * MiB, "inactive"),
    ]
    assert alloc.memory_stats()["inactive_split.all.current"] == 2
    alloc.free(b)  # merges with both
    seg = alloc.snapshot()[0]
    assert [(blk["size"], blk["state"]) for blk in seg["blocks"]] == [(20 * MiB, "inactive")]
    stats = alloc.memory_stats()
    assert stats["inactive_split.all.current"] == 0
    assert stats["inactive_split_bytes.all.current"] == 0
    check_consistent(fake, alloc)
    alloc.empty_cache()
    assert fake.calls("free") == 1
    check_all_returned(fake, alloc)


def test_best_fit_takes_the_smallest_free_block_that_fits(legacy):
    fake, alloc = legacy
    a = alloc.malloc(4 * MiB)
    b = alloc.malloc(2 * MiB)
    c = alloc.malloc(6 * MiB)
    d = alloc.malloc(3 * MiB)  # 5 MiB of the segment stay free at the end
    alloc.free(a)
    alloc.free(c)
    # Free: 4 MiB at a, 6 MiB at c, 5 MiB after d.
    assert alloc.malloc(4 * MiB + 512 * KiB) == d + 3 * MiB  # the 5 MiB block
    assert alloc.malloc(3 * MiB + 512 * KiB) == a  # the 4 MiB block
    assert alloc.malloc(5 * MiB + 512 * KiB) == c  # the 6 MiB block
    assert fake.calls("malloc") == 1
    del b


def test_best_fit_prefers_the_lower_address_among_equal_sizes(legacy):
    fake, alloc = legacy
    a, b, c, d = (alloc.malloc(4 * MiB) for _ in range(4))
    alloc.free(c)
    alloc.free(a)
    assert alloc.malloc(4 * MiB) == a
    assert alloc.malloc(4 * MiB) == c
    del b, d


def test_a_freed_block_is_reused_for_the_next_request_that_fits(legacy):
    fake, alloc = legacy
    ptr = alloc.malloc(30 * MiB)
    alloc.free(ptr)
    assert alloc.malloc(29 * MiB) == ptr
    assert fake.calls("malloc") == 1


def test_roundup_power2_divisions(make):
    fake, alloc = make("expandable_segments:False,roundup_power2_divisions:4", total_bytes=8 << 30)
    cases = [
        (1200, 1536),  # not above 512 * 4: plain 512-byte rounding
        (5000, 5120),  # steps of 1 KiB between 4 and 8 KiB
        (9000, 10240),  # steps of 2 KiB between 8 and 16 KiB
        (8192, 8192),  # powers of two stay
        (1200 * MiB, 1280 * MiB),  # steps of 256 MiB between 1 and 2 GiB
    ]
    for requested, rounded in cases:
        ptr = alloc.malloc(requested)
        assert alloc.memory_stats()["allocated_bytes.all.current"] == rounded, requested
        alloc.free(ptr)


def test_roundup_power2_divisions_per_interval(make):
    fake, alloc = make("expandable_segments:False,roundup_power2_divisions:[1:1,>:4]")
    small = alloc.malloc(9000)  # (0, 1 MiB]: one division, 512-byte rounding
    assert alloc.memory_stats()["allocated_bytes.all.current"] == 9216
    alloc.free(small)
    large = alloc.malloc(3 * MiB + 1)  # (2, 4] MiB: 4 divisions, steps of 512 KiB
    assert alloc.memory_stats()["allocated_bytes.all.current"] == 3 * MiB + 512 * KiB
    alloc.free(large)


def test_max_split_size_keeps_oversize_blocks_whole(make):
    fake, alloc = make("expandable_segments:False,max_split_size_mb:40")
    big = alloc.malloc(50 * MiB)
    stats = alloc.memory_stats()
    assert stats["oversize_allocations.current"] == 1
    assert stats["oversize_segments.current"] == 1
    alloc.free(big)
    # A request below the limit never takes an oversize block...
    small = alloc.malloc(30 * MiB)
    assert small != big and fake.calls("malloc") == 2
    # ...an oversize request takes it whole, if it wastes under 20 MiB of it.
    again = alloc.malloc(45 * MiB)
    assert again == big and fake.calls("malloc") == 2
    stats = alloc.memory_stats()
    assert stats["allocated_bytes.all.current"] == 30 * MiB + 50 * MiB
    assert stats["inactive_split.all.current"] == 0
    alloc.free(again)
    far_smaller = alloc.malloc(42 * MiB)
    assert far_smaller == big
    alloc.free(far_smaller)
    alloc.free(small)
    assert alloc.memory_stats()["oversize_allocations.current"] == 0


def test_max_non_split_rounding_limits_the_waste(make):
    fake, alloc = make("expandable_segments:False,max_split_size_mb:40,max_non_split_rounding_mb:2")
    big = alloc.malloc(50 * MiB)
    alloc.free(big)
    other = alloc.malloc(45 * MiB)  # would waste 5 MiB > 2 MiB
    assert other != big and fake.calls("malloc") == 2
    alloc.free(other)


def test_size_zero_returns_null_and_allocates_nothing(legacy):
    fake, alloc = legacy
    assert alloc.malloc(0) == 0
    alloc.free(0)
    assert fake.calls("malloc") == 0
    assert alloc.memory_stats()["allocation.all.allocated"] == 0


def test_empty_cache_returns_every_unused_segment(legacy):
    fake, alloc = legacy
    ptrs = [alloc.malloc(size) for size in (1000, 3 * MiB, 24 * MiB, 30 * MiB)]
    assert fake.calls("malloc") == 4
    keep = alloc.malloc(64 * MiB)
    for p in ptrs:
        alloc.free(p)
    alloc.empty_cache()
    assert fake.calls("free") == 4
    assert fake.live_allocations() == 1
    assert alloc.memory_stats()["reserved_bytes.all.current"] == 64 * MiB
    alloc.free(keep)
    alloc.empty_cache()
    assert fake.calls("free") == 5
    check_all_returned(fake, alloc)


def test_empty_cache_keeps_segments_with_live_blocks(legacy):
    fake, alloc = legacy
    a = alloc.malloc(4 * MiB)
    b = alloc.malloc(4 * MiB)
    alloc.free(a)
    alloc.empty_cache()
    assert fake.calls("free") == 0  # the segment still holds b
    alloc.free(b)
    alloc.empty_cache()
    assert fake.calls("free") == 1


def test_invalid_and_double_frees_raise(harness, legacy):
    fake, alloc = legacy
    ptr = alloc.malloc(4096)
    with pytest.raises(harness.AllocatorError, match="invalid device pointer"):
        alloc.free(ptr + 512)
    alloc.free(ptr)
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        alloc.free(ptr)


def test_a_bad_device_index_raises_index_error(legacy):
    fake, alloc = legacy
    with pytest.raises(IndexError, match="CUDA device index 3 out of range"):
        alloc.malloc(512, device=3)
