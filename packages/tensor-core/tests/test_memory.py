"""Memory behaviour: shared storage for views and the NumPy bridge, no leaks."""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest

import flambeau


def test_view_shares_storage_and_writes_through():
    a = flambeau.zeros(2, 6)
    v = a.view(3, 4)
    assert v._is_view_of(a)
    v.fill_(7.0)
    assert a.sum().item() == 84.0


def test_from_numpy_and_numpy_share_memory():
    arr = np.arange(6, dtype=np.float32)
    t = flambeau.from_numpy(arr)
    back = t.numpy()
    assert np.shares_memory(arr, back)
    back[0] = 42
    assert arr[0] == 42 and t.sum().item() == 42 + 15


def test_from_numpy_keeps_array_alive():
    t = flambeau.from_numpy(np.arange(1000, dtype=np.int64))
    gc.collect()
    assert t.sum().item() == 999 * 1000 // 2


def test_tensor_outlives_numpy_view():
    arr = flambeau.ones(10).numpy()  # the array holds the storage
    gc.collect()
    assert arr.sum() == 10


def test_allocator_returns_memory():
    gc.collect()
    before = flambeau._C._allocator_stats()["allocated_bytes"]
    xs = [flambeau.ones(1000) for _ in range(100)]
    during = flambeau._C._allocator_stats()["allocated_bytes"]
    assert during - before >= 100 * 4000
    del xs
    gc.collect()
    assert flambeau._C._allocator_stats()["allocated_bytes"] == before


@pytest.mark.skipif(
    bool(os.environ.get("FLAMBEAU_SANITIZED")),
    reason="AddressSanitizer keeps freed memory in quarantine: RSS does not measure leaks there",
)
def test_no_leak_over_a_million_small_ops():
    psutil = pytest.importorskip("psutil")
    proc = psutil.Process()
    a, b = flambeau.ones(1), flambeau.ones(1)
    for _ in range(20_000):  # warm up allocator and caches
        a + b
    gc.collect()
    rss_before = proc.memory_info().rss
    blocks_before = flambeau._C._allocator_stats()["allocations"]
    for _ in range(1_000_000):
        a + b
    gc.collect()
    assert flambeau._C._allocator_stats()["allocations"] == blocks_before
    assert proc.memory_info().rss - rss_before < 8 * 2**20


def test_detach_shares_storage_and_drops_requires_grad():
    a = flambeau.ones(3, requires_grad=True)
    d = a.detach()
    assert d._is_view_of(a) and not d.requires_grad


def test_requires_grad_only_for_floating_types():
    with pytest.raises(RuntimeError, match="floating point and complex"):
        flambeau.ones(2, dtype=flambeau.int64).requires_grad_()
