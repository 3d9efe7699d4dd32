"""Indexing kernels on CUDA against flambeau's CPU kernels: gather and index (gather,
index_select, take, take_along_dim, x[idx] with one and several index tensors),
scatter and index_put (scatter, scatter_add, scatter_reduce, index_add, index_copy,
index_fill, index_put with and without accumulate), masked_fill, the data-sized
nonzero and masked_select (counted on the device, so no CPU fallback warning) and
embedding; on
every real dtype, strided views, negative dims and negative indices; out-of-range
indices raise RuntimeError with the CPU's message (CUDA cannot raise IndexError
through the plugin ABI, and PyTorch's CUDA kernels raise RuntimeError too) and leave
the target unchanged."""

from __future__ import annotations

import warnings

import pytest
from samples import DEVICE, FLOATS, INTS, REALS, assert_close, sample

import flambeau

ALL = REALS + [flambeau.bool]


def _index(high, shape, seed=2):
    g = flambeau.Generator().manual_seed(seed)
    return flambeau.randint(0, high, shape, generator=g)


def _exact(got, want):
    assert_close(got, want, 0.0, 0.0)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ALL)
def test_index_select(dtype, dim):
    x = sample(dtype, (6, 5, 4))
    for view in (x, x.transpose(0, 2)):
        idx = _index(view.shape[dim], (9,))
        _exact(
            flambeau.index_select(view.to(DEVICE), dim, idx.to(DEVICE)),
            flambeau.index_select(view, dim, idx),
        )


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("dtype", ALL)
def test_gather_and_take_along_dim(dtype, dim):
    x = sample(dtype, (6, 5, 4))
    idx = _index(x.shape[dim], (3, 5, 4) if dim == 0 else (6, 5, 7))
    _exact(flambeau.gather(x.to(DEVICE), dim, idx.to(DEVICE)), flambeau.gather(x, dim, idx))
    xt = x.transpose(1, 2)
    it = _index(xt.shape[dim], (6, 4, 3))
    _exact(flambeau.gather(xt.to(DEVICE), dim, it.to(DEVICE)), flambeau.gather(xt, dim, it))
    _exact(
        flambeau.take_along_dim(x.to(DEVICE), idx.to(DEVICE), dim),
        flambeau.take_along_dim(x, idx, dim),
    )


@pytest.mark.parametrize("dtype", ALL)
def test_take_with_negative_indices(dtype):
    x = sample(dtype, (5, 7))
    idx = _index(35, (4, 3)) - 17  # [-17, 18)
    _exact(flambeau.take(x.to(DEVICE), idx.to(DEVICE)), flambeau.take(x, idx))


@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.int64, flambeau.float16])
def test_advanced_indexing(dtype):
    x = sample(dtype, (6, 5, 4))
    xd = x.to(DEVICE)
    i, j = _index(6, (3, 2)) - 3, _index(5, (3, 2), seed=3)
    _exact(xd[i.to(DEVICE)], x[i])
    _exact(xd[:, j.to(DEVICE)], x[:, j])
    _exact(xd[..., j.to(DEVICE) % 4], x[..., j % 4])


def test_advanced_indexing_with_several_index_tensors():
    x = sample(flambeau.float32, (6, 5, 4))
    xd = x.to(DEVICE)
    i, j = _index(6, (3, 2)) - 3, _index(5, (3, 2), seed=3)
    _exact(xd[i.to(DEVICE), j.to(DEVICE)], x[i, j])  # adjacent: _index_offsets
    _exact(xd[i.to(DEVICE), :, j.to(DEVICE) % 4], x[i, :, j % 4])  # not adjacent
    _exact(xd[i, j], x[i, j])  # CPU indices of a device tensor, as PyTorch allows
    _exact(xd[flambeau.tensor(True)], x[flambeau.tensor(True)])


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize(
    "dtype",
    [
        flambeau.float32,
        flambeau.float64,
        flambeau.int32,
        flambeau.int64,
        flambeau.int8,
        flambeau.float16,
    ],
)
def test_index_put(dtype, accumulate):
    x = sample(dtype, (6, 5))
    # Distinct rows when assigning (duplicates keep any one of the values on CUDA).
    i = _index(6, (8,)) if accumulate else flambeau.tensor([4, 0, -1, 2])
    v = sample(dtype, (i.numel(), 5), seed=5)
    want = flambeau.index_put(x, (i,), v, accumulate=accumulate)
    got = flambeau.index_put(x.to(DEVICE), (i.to(DEVICE),), v.to(DEVICE), accumulate=accumulate)
    assert_close(got, want)


@pytest.mark.parametrize("dtype", ALL)
def test_scatter_assign_distinct_indices(dtype):
    x = sample(dtype, (4, 6))
    src = sample(dtype, (4, 6), seed=7)
    g = flambeau.Generator().manual_seed(3)
    idx = flambeau.stack([flambeau.randperm(6, generator=g)[:4] for _ in range(4)])
    _exact(
        flambeau.scatter(x.to(DEVICE), 1, idx.to(DEVICE), src.to(DEVICE)),
        flambeau.scatter(x, 1, idx, src),
    )
    _exact(flambeau.scatter(x.to(DEVICE), -1, idx.to(DEVICE), 3), flambeau.scatter(x, -1, idx, 3))


@pytest.mark.parametrize("dtype", ALL)
def test_scatter_add_with_duplicates(dtype):
    x = sample(dtype, (5, 4))
    src = sample(dtype, (30, 4), seed=8)
    idx = _index(5, (30, 4))
    want = flambeau.scatter_add(x, 0, idx, src)
    got = flambeau.scatter_add(x.to(DEVICE), 0, idx.to(DEVICE), src.to(DEVICE))
    # float16/bfloat16 round after every addition, in another order on CUDA.
    rtol = 0.05 if dtype in (flambeau.float16, flambeau.bfloat16) else None
    assert_close(got, want, rtol, rtol)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize(
    "dtype",
    [
        flambeau.float32,
        flambeau.float64,
        flambeau.int32,
        flambeau.int64,
        flambeau.int16,
        flambeau.uint8,
    ],
)
def test_scatter_reduce(dtype, reduce, include_self):
    x = sample(dtype, (5, 4), scale=2.0)
    src = sample(dtype, (12, 4), seed=9, scale=2.0)
    idx = _index(5, (12, 4))
    want = flambeau.scatter_reduce(x, 0, idx, src, reduce, include_self=include_self)
    got = flambeau.scatter_reduce(
        x.to(DEVICE), 0, idx.to(DEVICE), src.to(DEVICE), reduce, include_self=include_self
    )
    assert_close(got, want)


@pytest.mark.parametrize("dtype", FLOATS)
def test_scatter_reduce_amax_lets_nan_win(dtype):
    x = flambeau.zeros(3, dtype=dtype)
    src = flambeau.tensor([1.0, float("nan"), 2.0, -1.0], dtype=dtype)
    idx = flambeau.tensor([0, 0, 1, 2])
    for reduce in ("amax", "amin"):
        _exact(
            flambeau.scatter_reduce(x.to(DEVICE), 0, idx.to(DEVICE), src.to(DEVICE), reduce),
            flambeau.scatter_reduce(x, 0, idx, src, reduce),
        )


@pytest.mark.parametrize("dtype", ALL)
def test_index_add_copy_fill(dtype):
    x = sample(dtype, (6, 5))
    src = sample(dtype, (6, 3), seed=4)
    idx = flambeau.tensor([4, 0, 2])
    xd, sd, idd = x.to(DEVICE), src.to(DEVICE), idx.to(DEVICE)
    _exact(flambeau.index_copy(xd, 1, idd, sd), flambeau.index_copy(x, 1, idx, src))
    _exact(flambeau.index_fill(xd, 1, idd - 3, 1), flambeau.index_fill(x, 1, idx - 3, 1))
    if dtype != flambeau.bool:
        dup = flambeau.tensor([4, 4, 1])
        assert_close(
            flambeau.index_add(xd, 1, dup.to(DEVICE), sd, alpha=2),
            flambeau.index_add(x, 1, dup, src, alpha=2),
        )


@pytest.mark.parametrize("dtype", ALL)
def test_masked_fill(dtype):
    x = sample(dtype, (6, 5))
    mask = sample(flambeau.bool, (5,), seed=3)  # broadcast over rows
    for view in (x, x.t()[:5, :5]):
        m = mask[: view.shape[-1]]
        _exact(view.to(DEVICE).masked_fill(m.to(DEVICE), 1), view.masked_fill(m, 1))
    inplace = x.t().to(DEVICE)
    inplace.masked_fill_(sample(flambeau.bool, (5, 6)).to(DEVICE), 0)
    _exact(inplace, x.t().masked_fill(sample(flambeau.bool, (5, 6)), 0))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_embedding(dtype):
    w = sample(dtype, (10, 6))
    idx = _index(10, (4, 3))
    _exact(
        flambeau.nn.functional.embedding(idx.to(DEVICE), w.to(DEVICE)),
        flambeau.nn.functional.embedding(idx, w),
    )


def test_out_of_range_indices_raise_and_change_nothing():
    x = flambeau.arange(10.0).reshape(5, 2)
    xd = x.to(DEVICE)
    bad = flambeau.tensor([1, 9]).to(DEVICE)
    with pytest.raises(RuntimeError, match="index 9 is out of bounds for dimension 0 with size 5"):
        flambeau.index_select(xd, 0, bad)
    with pytest.raises(RuntimeError, match="out of bounds"):
        flambeau.gather(xd, 0, flambeau.tensor([[0, -1]]).to(DEVICE))
    with pytest.raises(RuntimeError, match="index 9 is out of bounds"):
        xd.index_add_(0, bad, flambeau.ones(2, 2, device=DEVICE))
    with pytest.raises(RuntimeError, match="index 9 is out of bounds"):
        xd.scatter_(0, flambeau.tensor([[0, 9]]).to(DEVICE), 7.0)
    with pytest.raises(RuntimeError, match="out of bounds"):
        xd[flambeau.tensor([-6]).to(DEVICE)]
    assert_close(xd, x)  # the failed writes left it as it was
    # The device is still usable after a failure (no device-side assert).
    assert_close(xd + 1, x + 1)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(), (0, 3), (7,), (6, 5, 4), (3, 40000)])
def test_nonzero_masked_select_and_mask_indexing_stay_on_the_device(dtype, shape):
    x = sample(dtype, shape)
    if dtype != flambeau.bool:
        x = x * (sample(flambeau.bool, shape, seed=5) if x.dim() else 1)
    mask = sample(flambeau.bool, shape, seed=3)
    d, m = x.to(DEVICE), mask.to(DEVICE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a CPU fallback would warn
        got = [flambeau.nonzero(d), flambeau.masked_select(d, m), d[m]]
        got += list(flambeau.nonzero(d, as_tuple=True))
    want = [flambeau.nonzero(x), flambeau.masked_select(x, mask), x[mask]]
    want += list(flambeau.nonzero(x, as_tuple=True))
    for g, w in zip(got, want):
        assert g.device.type == DEVICE
        _exact(g, w)
