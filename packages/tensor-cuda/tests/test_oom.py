"""Out of memory: give back one cached segment that makes room and retry, then
everything cached and retry, then raise OutOfMemoryError with the numbers."""

from __future__ import annotations

import pytest
from allocator_checks import check_all_returned, check_consistent

MiB = 1 << 20
S0, S1, S2 = 0, 1, 2


def cache_on_stream(alloc, stream, *sizes):
    """Allocates `sizes` on `stream` at once, then frees them: cached segments."""
    ptrs = [alloc.malloc(size, stream=stream) for size in sizes]
    for p in ptrs:
        alloc.free(p)
    return ptrs


def device_calls(log, *names):
    return [entry for entry in log if entry[0] in names]


def test_free_one_cached_segment_then_retry(make):
    fake, alloc = make("expandable_segments:False", total_bytes=100 * MiB)
    a, b = cache_on_stream(alloc, S1, 30 * MiB, 50 * MiB)
    fake.set_logging(True)
    ptr = alloc.malloc(30 * MiB, stream=S0)  # S1's blocks are not S0's to reuse
    assert device_calls(fake.take_log(), "malloc", "free") == [
        ("malloc", "oom"),
        ("free", "ok"),  # the 30 MiB segment: the smallest that makes room
        ("malloc", "ok"),
    ]
    stats = alloc.memory_stats()
    assert stats["num_alloc_retries"] == 0 and stats["num_ooms"] == 0
    assert stats["reserved_bytes.all.current"] == 80 * MiB  # the 50 MiB one is still cached
    assert [s["address"] for s in alloc.snapshot() if s["stream"] == S1] == [b]
    alloc.free(ptr)


def test_free_everything_cached_then_retry(make):
    fake, alloc = make("expandable_segments:False", total_bytes=100 * MiB)
    cache_on_stream(alloc, S1, 30 * MiB, 50 * MiB)
    fake.set_logging(True)
    ptr = alloc.malloc(60 * MiB, stream=S0)  # no single cached segment is enough
    assert device_calls(fake.take_log(), "malloc", "free") == [
        ("malloc", "oom"),
        ("free", "ok"),
        ("free", "ok"),
        ("malloc", "ok"),
    ]
    stats = alloc.memory_stats()
    assert stats["num_alloc_retries"] == 1 and stats["num_ooms"] == 0
    assert stats["num_sync_all_streams"] == 1
    alloc.free(ptr)


def test_then_raise_with_the_numbers(harness, make):
    fake, alloc = make("expandable_segments:False", total_bytes=100 * MiB)
    live = alloc.malloc(70 * MiB)
    cache_on_stream(alloc, S1, 5 * MiB)  # a 20 MiB segment
    fake.set_logging(True)
    with pytest.raises(harness.OutOfMemoryError) as info:
        alloc.malloc(40 * MiB)
    assert device_calls(fake.take_log(), "malloc", "free") == [
        ("malloc", "oom"),
        ("free", "ok"),  # not enough alone: free-one skips it, free-all takes it
        ("malloc", "oom"),
    ]
    e = info.value
    assert isinstance(e, RuntimeError)
    assert (e.requested, e.allocated, e.reserved) == (40 * MiB, 70 * MiB, 70 * MiB)
    assert (e.device_total, e.device_free) == (100 * MiB, 30 * MiB)
    assert (e.largest_free, e.free_cached, e.fragmentation) == (0, 0, 0.0)
    message = str(e)
    assert message.startswith("CUDA out of memory. Tried to allocate 40.00 MiB. ")
    assert "GPU 0 has a total capacity of 100.00 MiB of which 30.00 MiB is free." in message
    assert "70.00 MiB is allocated by flambeau, and 0 bytes is reserved by flambeau" in message
    stats = alloc.memory_stats()
    assert stats["num_ooms"] == 1 and stats["num_alloc_retries"] == 1
    # Nothing is broken: memory freed is usable again.
    alloc.free(live)
    alloc.free(alloc.malloc(40 * MiB))
    alloc.empty_cache()
    check_all_returned(fake, alloc)


OOM, FREE, OK = ("malloc", "oom"), ("free", "ok"), ("malloc", "ok")


@pytest.mark.parametrize(
    "failures, expected",
    [
        (1, [OOM, FREE, OK]),  # free-one was enough
        (2, [OOM, FREE, OOM, FREE, OK]),  # free-all was
        (3, [OOM, FREE, OOM, FREE, OOM]),  # raise
    ],
)
def test_the_sequence_with_injected_failures(harness, make, failures, expected):
    fake, alloc = make("expandable_segments:False")
    cache_on_stream(alloc, S1, 30 * MiB, 50 * MiB)
    fake.inject("malloc", nth=1, count=failures)
    fake.set_logging(True)
    if failures < 3:
        alloc.free(alloc.malloc(30 * MiB))
    else:
        with pytest.raises(harness.OutOfMemoryError):
            alloc.malloc(30 * MiB)
    assert device_calls(fake.take_log(), "malloc", "free") == expected
    stats = alloc.memory_stats()
    assert stats["num_alloc_retries"] == (1 if failures >= 2 else 0)
    assert stats["num_ooms"] == (1 if failures == 3 else 0)


def test_the_message_measures_fragmentation(harness, make):
    fake, alloc = make("expandable_segments:False", total_bytes=64 * MiB)
    a, b, c = (alloc.malloc(6 * MiB) for _ in range(3))  # a 20 MiB segment, 2 MiB left
    alloc.free(b)
    with pytest.raises(harness.OutOfMemoryError) as info:
        alloc.malloc(50 * MiB)
    e = info.value
    assert (e.largest_free, e.free_cached) == (6 * MiB, 8 * MiB)
    assert e.fragmentation == pytest.approx(0.25)
    message = str(e)
    assert "of which 44.00 MiB is free" in message
    assert "12.00 MiB is allocated by flambeau, and 8.00 MiB is reserved" in message
    assert "the largest free block is 6.00 MiB (fragmentation 0.25" in message
    assert "expandable_segments" not in message  # 8 MiB in one piece would not have been enough


def test_the_hint_appears_when_pieces_would_have_been_enough(harness, make):
    fake, alloc = make("expandable_segments:False", total_bytes=40 * MiB)
    quarters = [alloc.malloc(4 * MiB) for _ in range(4)]  # a 20 MiB segment, 4 MiB left
    full = alloc.malloc(19 * MiB)  # a second 20 MiB segment: the device is full
    alloc.free(quarters[0])
    alloc.free(quarters[2])
    with pytest.raises(harness.OutOfMemoryError) as info:
        alloc.malloc(10 * MiB)
    e = info.value
    assert (e.largest_free, e.free_cached) == (4 * MiB, 12 * MiB)
    assert "fragmentation 0.67" in str(e)
    assert "FLAMBEAU_CUDA_ALLOC_CONF=expandable_segments:True avoids this fragmentation" in str(e)
    del full


def test_expandable_free_one_unmaps_another_streams_pages(make):
    fake, alloc = make("", total_bytes=64 * MiB)
    cache_on_stream(alloc, S1, 30 * MiB)
    cache_on_stream(alloc, S2, 10 * MiB)
    fake.set_logging(True)
    ptr = alloc.malloc(30 * MiB, stream=S0)
    assert device_calls(fake.take_log(), "map", "unmap") == [
        ("map", "oom"),
        ("unmap", "ok"),  # S1's 30 MiB
        ("map", "ok"),
    ]
    assert fake.mapped_bytes() == 40 * MiB
    check_consistent(fake, alloc)
    alloc.free(ptr)
    alloc.empty_cache()
    check_all_returned(fake, alloc)


def test_expandable_free_all_then_raise(harness, make):
    fake, alloc = make("", total_bytes=64 * MiB)
    live = alloc.malloc(40 * MiB)
    cache_on_stream(alloc, S1, 10 * MiB)
    cache_on_stream(alloc, S2, 10 * MiB)
    fake.set_logging(True)
    ptr = alloc.malloc(20 * MiB, stream=S0)  # needs both streams' pages back
    assert device_calls(fake.take_log(), "map", "unmap") == [
        ("map", "oom"),
        ("unmap", "ok"),
        ("unmap", "ok"),
        ("map", "ok"),
    ]
    assert alloc.memory_stats()["num_alloc_retries"] == 1
    with pytest.raises(harness.OutOfMemoryError) as info:
        alloc.malloc(10 * MiB, stream=S1)
    assert "expandable_segments" not in str(info.value)
    for p in (live, ptr):
        alloc.free(p)
    alloc.empty_cache()
    check_all_returned(fake, alloc)


def test_a_failed_first_map_leaves_no_reservation(harness, make):
    fake, alloc = make("", total_bytes=64 * MiB)
    with pytest.raises(harness.OutOfMemoryError):
        alloc.malloc(65 * MiB)  # more than the device
    fake.inject("map", count=3)
    with pytest.raises(harness.OutOfMemoryError):
        alloc.malloc(MiB)
    assert fake.reserved_va_bytes() == 0
    check_all_returned(fake, alloc)


def test_pending_frees_are_waited_for_before_giving_up(make):
    fake, alloc = make("expandable_segments:False", total_bytes=64 * MiB)
    ptr = alloc.malloc(40 * MiB, stream=S1)
    alloc.record_stream(ptr, S2)
    alloc.free(ptr)  # pending on S2, which never finishes by itself
    again = alloc.malloc(40 * MiB, stream=S0)
    assert fake.calls("event_synchronize") == 1
    assert alloc.memory_stats()["num_alloc_retries"] == 1
    alloc.free(again)


def test_memory_fraction_caps_reserved_memory(harness, make):
    fake, alloc = make("expandable_segments:False", total_bytes=64 * MiB)
    alloc.set_memory_fraction(0.5)
    with pytest.raises(harness.OutOfMemoryError) as info:
        alloc.malloc(40 * MiB)
    assert fake.calls("malloc") == 0  # refused before asking the device
    assert "This process may use at most 32.00 MiB" in str(info.value)
    alloc.free(alloc.malloc(30 * MiB))
    with pytest.raises(ValueError, match=r"fraction must be in \[0, 1\]"):
        alloc.set_memory_fraction(1.5)


def test_other_device_errors_are_not_retried(harness, make):
    fake, alloc = make("expandable_segments:False")
    fake.inject("malloc", error="error")
    with pytest.raises(harness.AllocatorError) as info:
        alloc.malloc(MiB)
    assert str(info.value) == (
        "CUDA error in malloc on device 0: fakecuda malloc: unspecified launch failure (injected)"
    )
    assert fake.calls("malloc") == 1
    assert alloc.memory_stats()["num_ooms"] == 0
    alloc.free(alloc.malloc(MiB))


def test_garbage_collection_releases_the_least_recently_freed_first(make):
    fake, alloc = make(
        "expandable_segments:False,garbage_collection_threshold:0.5", total_bytes=100 * MiB
    )
    old, recent = cache_on_stream(alloc, S1, 20 * MiB, 24 * MiB)
    # 44 MiB cached + a 10 MiB segment would pass 50 MiB: the oldest goes first.
    ptr = alloc.malloc(10 * MiB, stream=S0)
    assert [s["address"] for s in alloc.snapshot() if s["stream"] == S1] == [recent]
    assert fake.calls("free") == 1
    assert alloc.memory_stats()["num_alloc_retries"] == 0
    alloc.free(ptr)
    del old


@pytest.mark.parametrize(
    "size, text",
    [
        (0, "0 bytes"),
        (1023, "1023 bytes"),
        (1536, "1.50 KiB"),
        (20 * MiB, "20.00 MiB"),
        (3 << 30, "3.00 GiB"),
    ],
)
def test_sizes_in_messages(harness, size, text):
    assert harness.format_bytes(size) == text
