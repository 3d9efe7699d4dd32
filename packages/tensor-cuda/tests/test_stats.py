"""memory_stats: torch.cuda.memory_stats' keys and meanings, peaks and resets."""

from __future__ import annotations

from allocator_checks import POOLS, check_consistent

KiB = 1 << 10
MiB = 1 << 20
STATS = (
    "allocation",
    "segment",
    "active",
    "inactive_split",
    "allocated_bytes",
    "reserved_bytes",
    "active_bytes",
    "inactive_split_bytes",
    "requested_bytes",
)
METRICS = ("current", "peak", "allocated", "freed")


def test_the_keys_are_torchs(legacy):
    fake, alloc = legacy
    keys = set(alloc.memory_stats())
    for stat in STATS:
        for pool in POOLS:
            for metric in METRICS:
                assert f"{stat}.{pool}.{metric}" in keys
    for stat in ("oversize_allocations", "oversize_segments"):
        for metric in METRICS:
            assert f"{stat}.{metric}" in keys
    for key in (
        "num_alloc_retries",
        "num_ooms",
        "num_sync_all_streams",
        "num_device_alloc",
        "num_device_free",
        "max_split_size",
    ):
        assert key in keys
    assert alloc.memory_stats()["max_split_size"] == -1  # unlimited, as PyTorch reports it


def test_counts_and_bytes_through_a_sequence(legacy):
    fake, alloc = legacy
    a = alloc.malloc(1000)  # small: 1024 bytes in a 2 MiB segment
    b = alloc.malloc(3 * MiB)  # large: 3 MiB in a 20 MiB segment
    s = alloc.memory_stats()
    assert s["allocation.all.current"] == 2
    assert s["allocation.small_pool.current"] == s["allocation.large_pool.current"] == 1
    assert s["allocated_bytes.all.current"] == 1024 + 3 * MiB
    assert s["requested_bytes.all.current"] == 1000 + 3 * MiB
    assert s["reserved_bytes.all.current"] == 22 * MiB
    assert s["segment.all.current"] == 2
    assert s["inactive_split.all.current"] == 2  # both segments' remainders
    assert s["inactive_split_bytes.all.current"] == 22 * MiB - 1024 - 3 * MiB
    assert s["num_device_alloc"] == 2
    alloc.free(a)
    alloc.free(b)
    s = alloc.memory_stats()
    assert s["allocation.all.current"] == 0
    assert s["allocation.all.allocated"] == s["allocation.all.freed"] == 2
    assert s["allocated_bytes.all.peak"] == 1024 + 3 * MiB
    assert s["allocated_bytes.all.freed"] == 1024 + 3 * MiB
    assert s["inactive_split.all.current"] == 0  # whole free segments are not split
    assert s["reserved_bytes.all.current"] == 22 * MiB  # cached
    alloc.empty_cache()
    s = alloc.memory_stats()
    assert s["reserved_bytes.all.current"] == 0
    assert s["reserved_bytes.all.peak"] == 22 * MiB
    assert s["segment.all.freed"] == 2
    assert s["num_device_free"] == 2


def test_peaks_and_reset_peak(legacy):
    fake, alloc = legacy
    ptrs = [alloc.malloc(4 * MiB) for _ in range(4)]
    for p in ptrs[1:]:
        alloc.free(p)
    s = alloc.memory_stats()
    assert s["allocated_bytes.all.peak"] == 16 * MiB
    assert s["allocated_bytes.all.current"] == 4 * MiB
    alloc.reset_peak_memory_stats()
    s = alloc.memory_stats()
    for key, value in s.items():
        if key.endswith(".peak"):
            assert value == s[key[: -len("peak")] + "current"], key
    assert s["allocation.all.allocated"] == 4  # accumulated values stay
    alloc.free(ptrs[0])


def test_reset_accumulated(legacy):
    fake, alloc = legacy
    alloc.free(alloc.malloc(2 * MiB))
    alloc.reset_accumulated_memory_stats()
    s = alloc.memory_stats()
    for key, value in s.items():
        if key.endswith((".allocated", ".freed")) or key.startswith("num_"):
            assert value == 0, key
    assert s["reserved_bytes.all.current"] == 20 * MiB  # current values stay


def test_requested_bytes_show_the_rounding(legacy):
    fake, alloc = legacy
    ptrs = [alloc.malloc(n) for n in (1, 513, 100 * KiB + 1)]
    s = alloc.memory_stats()
    assert s["requested_bytes.all.current"] == 1 + 513 + 100 * KiB + 1
    assert s["allocated_bytes.all.current"] == 512 + 1024 + 100 * KiB + 512
    for p in ptrs:
        alloc.free(p)
    assert alloc.memory_stats()["requested_bytes.all.current"] == 0


def test_an_unused_device_reports_zeros_without_touching_it(make):
    fake, alloc = make("", device_count=2)
    ptr = alloc.malloc(MiB, device=0)
    before = fake.counts()
    s = alloc.memory_stats(device=1)
    assert all(v == 0 for k, v in s.items() if k != "max_split_size")
    alloc.reset_peak_memory_stats(device=1)
    assert fake.counts() == before
    assert alloc.snapshot()[0]["device"] == 0
    alloc.free(ptr)


def test_devices_are_independent(make):
    fake, alloc = make("expandable_segments:False", device_count=2)
    a = alloc.malloc(MiB, device=0)
    b = alloc.malloc(3 * MiB, device=1)
    assert alloc.memory_stats(0)["reserved_bytes.all.current"] == 2 * MiB
    assert alloc.memory_stats(1)["reserved_bytes.all.current"] == 20 * MiB
    assert fake.used_bytes(0) == 2 * MiB and fake.used_bytes(1) == 20 * MiB
    assert {s["device"] for s in alloc.snapshot()} == {0, 1}
    alloc.free(b)  # the pointer alone finds its device
    alloc.free(a)
    alloc.empty_cache()
    assert fake.used_bytes(0) == fake.used_bytes(1) == 0


def test_stats_agree_with_the_snapshot_and_the_device(expandable):
    fake, alloc = expandable
    ptrs = [alloc.malloc(n, stream=n % 3) for n in (1000, 5 * MiB, 300 * KiB, 12 * MiB, 7)]
    alloc.free(ptrs[1])
    alloc.free(ptrs[2])
    check_consistent(fake, alloc)
    alloc.empty_cache()
    check_consistent(fake, alloc)
