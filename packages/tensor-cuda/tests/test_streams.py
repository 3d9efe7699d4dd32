"""Stream-ordered reuse: a free block is reused only on its allocation stream,
and a block used on other streams (record_stream) only once their work is done."""

from __future__ import annotations

import pytest
from allocator_checks import check_all_returned, check_consistent

MiB = 1 << 20
S1, S2, S3 = 1, 2, 3


def states(alloc):
    return {b["address"]: b["state"] for seg in alloc.snapshot() for b in seg["blocks"]}


@pytest.fixture(params=["malloc'd", "expandable"])
def device(request, make):
    return make("expandable_segments:False" if request.param == "malloc'd" else "")


def test_a_free_block_is_reused_on_its_own_stream_only(device):
    fake, alloc = device
    ptr = alloc.malloc(4 * MiB, stream=S1)
    alloc.free(ptr)
    other = alloc.malloc(4 * MiB, stream=S2)
    assert other != ptr
    same = alloc.malloc(4 * MiB, stream=S1)
    assert same == ptr
    snapshot = check_consistent(fake, alloc)[0]
    assert {seg["stream"] for seg in snapshot} == {S1, S2}
    for p in (other, same):
        alloc.free(p)


def test_small_blocks_follow_the_same_rule(device):
    fake, alloc = device
    ptr = alloc.malloc(1000, stream=S1)
    alloc.free(ptr)
    assert alloc.malloc(1000, stream=S2) != ptr
    assert alloc.malloc(1000, stream=S1) == ptr


def test_a_block_used_on_another_stream_waits_for_that_stream(device):
    fake, alloc = device
    ptr = alloc.malloc(4 * MiB, stream=S1)
    alloc.record_stream(ptr, S2)
    alloc.free(ptr)
    assert fake.calls("event_record") == 1
    stats = alloc.memory_stats()
    assert stats["allocation.all.current"] == 0  # freed by the caller...
    assert stats["active.all.current"] == 1  # ...but not reusable yet
    assert states(alloc)[ptr] == "active_pending_free"

    while_pending = alloc.malloc(4 * MiB, stream=S1)
    assert while_pending != ptr
    fake.complete(S2)
    after = alloc.malloc(4 * MiB, stream=S1)
    assert after == ptr
    assert alloc.memory_stats()["active.all.current"] == 2
    check_consistent(fake, alloc)
    alloc.free(while_pending)
    alloc.free(after)


def test_work_finished_before_the_free_does_not_count(device):
    fake, alloc = device
    ptr = alloc.malloc(4 * MiB, stream=S1)
    alloc.record_stream(ptr, S2)
    fake.complete(S2)  # the event is recorded at free time, after this
    alloc.free(ptr)
    assert alloc.malloc(4 * MiB, stream=S1) != ptr


def test_every_recorded_stream_must_finish(device):
    fake, alloc = device
    ptr = alloc.malloc(4 * MiB, stream=S1)
    alloc.record_stream(ptr, S2)
    alloc.record_stream(ptr, S3)
    alloc.record_stream(ptr, S3)  # twice is once
    alloc.free(ptr)
    assert fake.calls("event_record") == 2
    fake.complete(S2)
    assert alloc.malloc(4 * MiB, stream=S1) != ptr
    fake.complete(S3)
    assert alloc.malloc(4 * MiB, stream=S1) == ptr


def test_recording_the_allocation_stream_is_a_no_op(device):
    fake, alloc = device
    ptr = alloc.malloc(4 * MiB, stream=S1)
    alloc.record_stream(ptr, S1)
    alloc.free(ptr)
    assert fake.calls("event_record") == 0
    assert alloc.malloc(4 * MiB, stream=S1) == ptr


def test_a_pending_block_merges_with_its_neighbours_once_free(make):
    fake, alloc = make("expandable_segments:False")
    a = alloc.malloc(4 * MiB, stream=S1)
    b = alloc.malloc(4 * MiB, stream=S1)
    alloc.record_stream(a, S2)
    alloc.free(a)
    alloc.free(b)
    assert _large_segment_states(alloc) == ["active_pending_free", "inactive"]
    fake.complete(S2)
    alloc.malloc(512, stream=S3)  # any malloc processes finished events (a small segment)
    assert _large_segment_states(alloc) == ["inactive"]


def _large_segment_states(alloc) -> list:
    # The snapshot lists segments by address, and the fake device's addresses have no
    # set order: pick the one large segment by its pool.
    (large,) = [seg for seg in alloc.snapshot() if seg["segment_type"] == "large"]
    return [blk["state"] for blk in large["blocks"]]


def test_events_are_pooled(device):
    fake, alloc = device
    for _ in range(50):
        ptr = alloc.malloc(MiB, stream=S1)
        alloc.record_stream(ptr, S2)
        alloc.free(ptr)
        fake.complete(S2)
    assert fake.calls("event_create") == 1
    assert fake.calls("event_record") == 50


def test_empty_cache_waits_for_pending_frees(device):
    fake, alloc = device
    ptr = alloc.malloc(4 * MiB, stream=S1)
    alloc.record_stream(ptr, S2)
    alloc.free(ptr)
    before = alloc.memory_stats()["num_sync_all_streams"]
    alloc.empty_cache()
    assert fake.calls("event_synchronize") == 1
    assert alloc.memory_stats()["num_sync_all_streams"] == before + 1
    check_all_returned(fake, alloc)


def test_record_stream_of_an_unknown_pointer_raises(harness, device):
    fake, alloc = device
    with pytest.raises(harness.AllocatorError, match="record_stream: invalid device pointer"):
        alloc.record_stream(0x1000, S2)
    alloc.record_stream(0, S2)  # nullptr: nothing to do


def test_a_failing_event_record_is_reported(harness, device):
    fake, alloc = device
    ptr = alloc.malloc(MiB, stream=S1)
    alloc.record_stream(ptr, S2)
    fake.inject("event_record", error="error")
    with pytest.raises(harness.AllocatorError, match="CUDA error in event_record on device 0"):
        alloc.free(ptr)
