"""The caching allocator on a GPU: counters, peaks, the cache, the snapshot."""

import flambeau

MiB = 1 << 20


def test_allocation_moves_the_counters_and_freeing_caches():
    flambeau.cuda.empty_cache()
    before = flambeau.cuda.memory_allocated()
    x = flambeau.empty(MiB // 4, dtype=flambeau.float32, device="cuda")  # 1 MiB
    assert flambeau.cuda.memory_allocated() == before + MiB
    assert flambeau.cuda.memory_reserved() >= flambeau.cuda.memory_allocated()
    assert flambeau.cuda.max_memory_allocated() >= before + MiB
    reserved = flambeau.cuda.memory_reserved()
    del x
    assert flambeau.cuda.memory_allocated() == before
    assert flambeau.cuda.memory_reserved() == reserved  # kept in the cache
    flambeau.cuda.empty_cache()
    if before == 0:
        assert flambeau.cuda.memory_reserved() == 0


def test_small_sizes_round_to_512_bytes():
    before = flambeau.cuda.memory_allocated()
    x = flambeau.empty(1, dtype=flambeau.uint8, device="cuda")
    assert flambeau.cuda.memory_allocated() - before == 512
    del x


def test_reset_peak_and_stats_keys():
    x = flambeau.empty(4 * MiB, dtype=flambeau.uint8, device="cuda")
    del x
    flambeau.cuda.reset_peak_memory_stats()
    stats = flambeau.cuda.memory_stats()
    assert stats["allocated_bytes.all.peak"] == stats["allocated_bytes.all.current"]
    for key in (
        "reserved_bytes.large_pool.current",
        "num_ooms",
        "segment.all.current",
        "active_bytes.small_pool.peak",
        "num_alloc_retries",
    ):
        assert key in stats


def test_snapshot_lists_live_blocks():
    x = flambeau.empty(3 * MiB, dtype=flambeau.uint8, device="cuda")
    segments = flambeau.cuda.memory_snapshot()
    blocks = [b for s in segments for b in s["blocks"] if b["state"] == "active_allocated"]
    assert any(b["size"] >= 3 * MiB for b in blocks)
    assert all(s["device"] == 0 for s in segments)
    assert "Allocated memory" in flambeau.cuda.memory_summary()
    del x


def test_out_of_memory_error_says_how_much():
    total = flambeau.cuda.get_device_properties(0).total_memory
    try:
        flambeau.empty(2 * total, dtype=flambeau.uint8, device="cuda")
    except RuntimeError as e:  # OutOfMemoryError once the core maps FLB_OUT_OF_MEMORY to it
        assert "out of memory" in str(e).lower()
        assert "Tried to allocate" in str(e) or "allocate" in str(e)
    else:
        raise AssertionError("allocating twice the device's memory succeeded")
    assert flambeau.cuda.memory_stats()["num_ooms"] >= 1
