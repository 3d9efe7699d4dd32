"""The fast paths of the gather/scatter kernels against NumPy: whole-row gathers
(index_select), many values combined into a small 1-d target (scatter_add,
scatter_reduce, index_add), the parallel index check, and their errors."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau

rng = np.random.default_rng(11)


@pytest.mark.parametrize("npdtype", [np.float32, np.float64, np.int16, np.complex128, np.bool_])
def test_index_select_rows(threads, npdtype):
    src = (rng.standard_normal((300, 70)) * 10).astype(npdtype)
    idx = rng.integers(0, 300, 5000)
    got = flambeau.index_select(flambeau.from_numpy(src), 0, flambeau.from_numpy(idx))
    np.testing.assert_array_equal(got.numpy(), src[idx])
    idx32 = flambeau.from_numpy(idx.astype(np.int32))
    np.testing.assert_array_equal(flambeau.from_numpy(src).index_select(0, idx32).numpy(), src[idx])


def test_index_select_strided_and_inner_dims(threads):
    src = rng.standard_normal((40, 50, 6)).astype(np.float32)
    t = flambeau.from_numpy(src)
    idx = rng.integers(0, 40, 300)
    i = flambeau.from_numpy(idx)
    np.testing.assert_array_equal(t[:, ::2].index_select(0, i).numpy(), src[:, ::2][idx])
    np.testing.assert_array_equal(t[::3].index_select(0, i % 14).numpy(), src[::3][idx % 14])
    np.testing.assert_array_equal(t.index_select(1, i % 50).numpy(), np.take(src, idx % 50, axis=1))


def test_index_select_bad_index_raises(threads):
    idx = np.arange(5000) % 300
    idx[4321] = 300
    with pytest.raises(IndexError, match="300"):
        flambeau.index_select(flambeau.zeros(300, 70), 0, flambeau.from_numpy(idx))


@pytest.mark.parametrize("npdtype", [np.float32, np.float64, np.int64, np.complex64])
def test_scatter_add_into_small_target_is_the_serial_sum(threads, npdtype):
    n, size = 200_000, 1000
    idx = rng.integers(0, size, n)
    vals = (rng.standard_normal(n) * 100).astype(npdtype)
    base = (rng.standard_normal(size) * 100).astype(npdtype)
    want = base.copy()
    np.add.at(want, idx, vals)  # one value at a time, in order: the same roundings
    got = flambeau.scatter_add(flambeau.from_numpy(base), 0, flambeau.from_numpy(idx),
                               flambeau.from_numpy(vals))  # fmt: skip
    np.testing.assert_array_equal(got.numpy(), want)
    got = flambeau.from_numpy(base.copy()).index_add_(
        0, flambeau.from_numpy(idx), flambeau.from_numpy(vals)
    )
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("reduce,ufunc", [("amax", np.maximum), ("amin", np.minimum),
                                          ("prod", np.multiply), ("sum", np.add)])  # fmt: skip
def test_scatter_reduce_into_small_target(threads, reduce, ufunc):
    n, size = 50_000, 64
    idx = rng.integers(0, size, n)
    vals = (1 + rng.standard_normal(n) * 1e-3).astype(np.float64)
    base = rng.standard_normal(size)
    want = base.copy()
    ufunc.at(want, idx, vals)
    got = flambeau.from_numpy(base).scatter_reduce(
        0, flambeau.from_numpy(idx), flambeau.from_numpy(vals), reduce
    )
    np.testing.assert_array_equal(got.numpy(), want)


def test_scatter_add_into_strided_target():
    base = np.zeros((300, 4), np.float32)
    idx = rng.integers(0, 300, 10_000)
    vals = rng.standard_normal(10_000).astype(np.float32)
    t = flambeau.from_numpy(base.copy())
    t[:, 1].scatter_add_(0, flambeau.from_numpy(idx), flambeau.from_numpy(vals))
    want = base.copy()
    col = want[:, 1].copy()
    np.add.at(col, idx, vals)
    want[:, 1] = col
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize("bad", [64, -65, -1])
def test_bad_index_leaves_an_in_place_target_untouched(threads, bad):
    idx = rng.integers(0, 64, 100_000)
    idx[77_777] = bad
    idx[90_000] = 1000  # only the first bad index is reported
    x = flambeau.ones(64)
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for dimension 0"):
        x.scatter_add_(0, flambeau.from_numpy(idx), flambeau.ones(100_000))
    assert bool((x == 1).all())
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds"):
        x.index_add_(0, flambeau.from_numpy(idx), flambeau.ones(100_000))
    assert bool((x == 1).all())


def test_values_overlapping_the_target_combine_in_order():
    # the target is every 8th element of the values' own buffer: each value read
    # sees the additions made before it, as in the serial loop
    big = np.arange(800, dtype=np.float64)
    idx = rng.integers(0, 100, 800)
    t = flambeau.from_numpy(big.copy())
    t[::8].scatter_add_(0, flambeau.from_numpy(idx), t)
    want = big.copy()
    for i, k in enumerate(idx):
        want[8 * k] += want[i]
    np.testing.assert_array_equal(t.numpy(), want)


def test_gather_dim0_and_bad_index(threads):
    src = rng.standard_normal((500, 64)).astype(np.float32)
    idx = rng.integers(0, 500, (2000, 64))
    got = flambeau.gather(flambeau.from_numpy(src), 0, flambeau.from_numpy(idx))
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(src, idx, 0))
    idx[1500, 3] = -1
    with pytest.raises((IndexError, RuntimeError), match="-1"):
        flambeau.gather(flambeau.from_numpy(src), 0, flambeau.from_numpy(idx))
