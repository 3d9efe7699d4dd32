"""The hot path serves repeated allocations from the cache. (Its host time, the GPU
target of 1 µs a pair, belongs in a benchmark, not in a timed test: the harness's
``bench_alloc_free`` gives it, about 0.1 µs a pair on the fake device.)"""

from __future__ import annotations

import pytest

MiB = 1 << 20


@pytest.mark.parametrize("conf", ["expandable_segments:False", ""])
@pytest.mark.parametrize("size", [4096, 30 * MiB])
def test_repeated_alloc_and_free_reach_the_device_once(harness, make, conf, size):
    fake, alloc = make(conf)
    harness.bench_alloc_free(alloc, size, 2_000)
    assert fake.calls("malloc") + fake.calls("map") == 1  # every later pair from the cache
