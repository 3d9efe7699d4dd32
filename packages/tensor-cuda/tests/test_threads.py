"""Several threads allocating and freeing at once (one mutex per device)."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from allocator_checks import check_all_returned, check_consistent

MiB = 1 << 20


@pytest.mark.parametrize("conf", ["expandable_segments:False", ""])
@pytest.mark.parametrize("shared_stream", [False, True])
def test_native_threads_never_get_overlapping_blocks(harness, make, conf, shared_stream):
    fake, alloc = make(conf, total_bytes=1 << 30)
    result = harness.hammer(alloc, threads=4, iterations=3000, seed=1, shared_stream=shared_stream)
    assert result["errors"] == []
    assert result["overlaps"] == 0
    assert result["allocations"] > 4000
    check_consistent(fake, alloc)
    assert alloc.memory_stats()["allocation.all.current"] == 0
    alloc.empty_cache()
    check_all_returned(fake, alloc)


def test_python_threads(make):
    fake, alloc = make("", total_bytes=1 << 30)

    def work(seed):
        rng = random.Random(seed)
        live = []
        for _ in range(300):
            if live and rng.random() < 0.5:
                alloc.free(live.pop(rng.randrange(len(live))))
            else:
                size = rng.choice([512, 4096, 300_000, 3 * MiB, 11 * MiB])
                live.append(alloc.malloc(size, stream=seed % 2))
        for p in live:
            alloc.free(p)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))
    alloc.empty_cache()
    check_all_returned(fake, alloc)
