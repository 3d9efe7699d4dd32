"""fakecuda itself: the device the allocator tests rely on behaves as the table's
contract says (csrc/allocator/device_api.h)."""

from __future__ import annotations

import pytest

KiB = 1 << 10
MiB = 1 << 20


@pytest.fixture
def fake(harness):
    return harness.FakeDevice(total_bytes=64 * MiB, granularity=2 * MiB)


def test_malloc_respects_the_device_size(fake):
    status, a = fake.raw_malloc(40 * MiB)
    assert status == "ok" and a != 0
    assert fake.raw_mem_get_info() == ("ok", 24 * MiB, 64 * MiB)
    assert fake.raw_malloc(30 * MiB) == ("oom", 0)
    assert fake.last_error() == "fakecuda malloc: out of memory"
    assert fake.raw_free(a) == "ok"
    assert fake.raw_free(a) == "error"
    assert fake.last_error() == "fakecuda free: invalid device pointer"
    assert fake.used_bytes() == 0
    assert fake.counts()["malloc"] == 2 and fake.failures("malloc") == 1


def test_injected_failures_hit_exactly_the_calls_asked_for(fake):
    fake.raw_malloc(MiB)
    fake.inject("malloc", nth=2, count=2, error="error")
    results = [fake.raw_malloc(MiB)[0] for _ in range(4)]
    assert results == ["ok", "error", "error", "ok"]
    assert "(injected)" in fake.last_error()


def test_an_event_completes_when_its_stream_does(fake):
    status, event = fake.raw_event_create()
    assert status == "ok"
    assert fake.raw_event_query(event) == "ok"  # never recorded
    assert fake.raw_event_record(event, 5) == "ok"
    assert fake.raw_event_query(event) == "not_ready"
    assert fake.pending_events() == 1
    fake.complete(4)
    assert fake.raw_event_query(event) == "not_ready"
    fake.complete(5)
    assert fake.raw_event_query(event) == "ok"
    fake.raw_event_record(event, 5)  # recorded again: new work
    assert fake.raw_event_query(event) == "not_ready"
    assert fake.raw_event_synchronize(event) == "ok"  # the host waits for it
    assert fake.raw_event_query(event) == "ok"
    assert fake.raw_event_destroy(event) == "ok"
    assert fake.raw_event_query(event) == "error"
    assert fake.live_events() == 0


def test_later_work_on_a_stream_is_not_completed_by_earlier_syncs(fake):
    _, first = fake.raw_event_create()
    _, second = fake.raw_event_create()
    fake.raw_event_record(first, 1)
    fake.raw_event_record(second, 1)
    fake.raw_event_synchronize(first)
    assert fake.raw_event_query(first) == "ok"
    assert fake.raw_event_query(second) == "not_ready"
    fake.complete_all()
    assert fake.raw_event_query(second) == "ok"


def test_virtual_memory_checks_alignment_and_state(fake):
    status, base = fake.raw_reserve_va(16 * MiB)
    assert status == "ok" and base % (2 * MiB) == 0
    assert fake.raw_reserve_va(3 * MiB)[0] == "error"  # not whole granules
    assert fake.raw_map(base + 2 * MiB, 4 * MiB) == "ok"
    assert fake.mapped_bytes() == 4 * MiB and fake.used_bytes() == 4 * MiB
    assert fake.raw_map(base + 4 * MiB, 2 * MiB) == "error"  # already mapped
    assert fake.raw_map(base + 1 * MiB, 2 * MiB) == "error"  # misaligned
    assert fake.raw_map(base + 14 * MiB, 4 * MiB) == "error"  # past the range
    assert fake.raw_map(base - 2 * MiB, 2 * MiB) == "error"  # before it
    assert fake.raw_unmap(base, 2 * MiB) == "error"  # not mapped
    assert fake.raw_release_va(base, 16 * MiB) == "error"  # still mapped
    assert fake.raw_unmap(base + 4 * MiB, 2 * MiB) == "ok"  # part of a map
    assert fake.raw_unmap(base + 2 * MiB, 2 * MiB) == "ok"
    assert fake.raw_release_va(base, 16 * MiB) == "ok"
    assert fake.reserved_va_bytes() == 0 and fake.used_bytes() == 0
    assert fake.counts()["map"] == 5 and fake.failures("map") == 4


def test_mapping_counts_against_the_device_size(fake):
    _, base = fake.raw_reserve_va(128 * MiB)  # address space is free
    assert fake.raw_map(base, 64 * MiB) == "ok"
    assert fake.raw_map(base + 64 * MiB, 2 * MiB) == "oom"
    assert fake.raw_malloc(512)[0] == "oom"


def test_without_virtual_memory_the_functions_are_absent(harness):
    assert not harness.FakeDevice(virtual_memory=False).has_virtual_memory


def test_devices_are_separate(harness):
    fake = harness.FakeDevice(total_bytes=8 * MiB, device_count=2)
    assert fake.raw_malloc(8 * MiB, device=0)[0] == "ok"
    assert fake.raw_malloc(8 * MiB, device=1)[0] == "ok"
    assert fake.raw_malloc(512, device=2) == ("error", 0)
    assert fake.last_error() == "fakecuda malloc: invalid device ordinal"


def test_a_granularity_must_be_whole_host_pages(harness):
    with pytest.raises(ValueError, match="granularity"):
        harness.FakeDevice(granularity=1000)
