"""Selection, search and the remaining indexing kernels on CUDA against flambeau's CPU
kernels: kthvalue, median and nanmedian along a dim (NaN, ties and -0.0: the CPU's
values and indices), mode (the smallest most frequent value, its last index),
searchsorted (left/right, a sorter, a shared or per-row sequence, NaN, int32 out),
masked_scatter (strided targets, broadcast masks, a short source raising the CPU's
message and changing nothing), embedding_bag (sum, mean, max, per-sample weights,
padding_idx, empty bags) and the embedding backward (padding_idx,
scale_grad_by_freq)."""

from __future__ import annotations

import pytest
from samples import DEVICE, FLOATS, INTS, REALS, assert_close, sample

import flambeau
import flambeau.nn.functional as F


def _exact(got, want):
    assert_close(got, want, 0.0, 0.0)


def _with_specials(x):
    if not x.dtype.is_floating_point:
        return x
    flat = x.reshape(-1).clone()
    for k, v in enumerate([float("nan"), -0.0, 0.0, float("inf"), float("nan")]):
        flat[(11 * k) % flat.numel()] = v
    flat[1::4] = flat[2]
    return flat.reshape(x.shape)


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("dtype", REALS)
def test_kthvalue_median_nanmedian(dtype, dim):
    x = _with_specials(sample(dtype, (9, 13)))
    xd = x.to(DEVICE)
    for k in (1, 5, x.shape[dim]):
        for g, w in zip(flambeau.kthvalue(xd, k, dim), flambeau.kthvalue(x, k, dim)):
            _exact(g, w)
    for fn in (flambeau.median, flambeau.nanmedian):
        for g, w in zip(fn(xd, dim, keepdim=True), fn(x, dim, keepdim=True)):
            _exact(g, w)
        _exact(fn(xd), fn(x))
    if dtype.is_floating_point:  # a row of NaN only
        allnan = flambeau.full((2, 3), float("nan"), dtype=dtype)
        for g, w in zip(flambeau.nanmedian(allnan.to(DEVICE), 1), flambeau.nanmedian(allnan, 1)):
            _exact(g, w)


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
def test_mode(dtype):
    x = _with_specials(sample(dtype, (7, 20), scale=1.5))
    for dim in (0, 1):
        for g, w in zip(flambeau.mode(x.to(DEVICE), dim), flambeau.mode(x, dim)):
            _exact(g, w)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_searchsorted(dtype):
    seq = flambeau.sort(_with_specials(sample(dtype, (4, 15))), dim=-1).values
    values = _with_specials(sample(dtype, (4, 6), seed=3))
    for right in (False, True):
        for out_int32 in (False, True):
            _exact(
                flambeau.searchsorted(
                    seq.to(DEVICE), values.to(DEVICE), right=right, out_int32=out_int32
                ),
                flambeau.searchsorted(seq, values, right=right, out_int32=out_int32),
            )
        shared = seq[0]
        _exact(
            flambeau.searchsorted(shared.to(DEVICE), values.to(DEVICE), right=right),
            flambeau.searchsorted(shared, values, right=right),
        )
    unsorted = sample(dtype, (4, 15), seed=5)
    sorter = flambeau.argsort(unsorted, dim=-1)
    _exact(
        flambeau.searchsorted(unsorted.to(DEVICE), values.to(DEVICE), sorter=sorter.to(DEVICE)),
        flambeau.searchsorted(unsorted, values, sorter=sorter),
    )


def test_searchsorted_bad_sorter_raises():
    seq = flambeau.tensor([1.0, 2.0, 3.0], device=DEVICE)
    with pytest.raises(RuntimeError, match="sorter index 5 is out of range"):
        flambeau.searchsorted(seq, seq, sorter=flambeau.tensor([0, 5, 1]).to(DEVICE))


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
def test_masked_scatter(dtype):
    x = sample(dtype, (6, 5))
    mask = sample(flambeau.bool, (5,), seed=3)
    src = sample(dtype, (40,), seed=4)
    for view in (x, x.t()[:5, :5]):
        m = mask[: view.shape[-1]]
        _exact(
            view.to(DEVICE).masked_scatter(m.to(DEVICE), src.to(DEVICE)),
            view.masked_scatter(m, src),
        )
    inplace = x.t().to(DEVICE)
    m2 = sample(flambeau.bool, (5, 6), seed=6)
    inplace.masked_scatter_(m2.to(DEVICE), src.reshape(5, 8).to(DEVICE))
    _exact(inplace, x.t().masked_scatter(m2, src.reshape(5, 8)))


def test_masked_scatter_short_source_raises_and_changes_nothing():
    x = flambeau.zeros(4, device=DEVICE)
    with pytest.raises(RuntimeError, match="expected source to have at least 3 elements"):
        x.masked_scatter_(
            flambeau.tensor([True, False, True, True]).to(DEVICE), flambeau.ones(2, device=DEVICE)
        )
    assert_close(x, flambeau.zeros(4))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_bag(dtype, mode):
    w = sample(dtype, (10, 4))
    idx = flambeau.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0, 0])
    offsets = flambeau.tensor([0, 3, 3, 8])  # an empty bag
    for pad in (None, 4):
        got = F.embedding_bag(idx.to(DEVICE), w.to(DEVICE), offsets, mode=mode, padding_idx=pad)
        assert_close(got, F.embedding_bag(idx, w, offsets, mode=mode, padding_idx=pad))
    if mode == "sum":
        psw = sample(dtype, (10,), seed=5)
        got = F.embedding_bag(
            idx.to(DEVICE), w.to(DEVICE), offsets, per_sample_weights=psw.to(DEVICE)
        )
        assert_close(got, F.embedding_bag(idx, w, offsets, per_sample_weights=psw))


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_backward(dtype):
    idx = flambeau.tensor([[1, 2, 4, 5], [4, 3, 2, 9], [1, 1, 1, 0]])
    g = sample(dtype, (3, 4, 6))
    for pad in (-1, 1):
        for freq in (False, True):
            _exact(
                flambeau.embedding_dense_backward(g.to(DEVICE), idx.to(DEVICE), 10, pad, freq),
                flambeau.embedding_dense_backward(g, idx, 10, pad, freq),
            )
    w = sample(dtype, (10, 6)).requires_grad_(True)
    wd = w.detach().to(DEVICE).requires_grad_(True)
    F.embedding(idx, w, padding_idx=2).sum().backward()
    F.embedding(idx.to(DEVICE), wd, padding_idx=2).sum().backward()
    _exact(wd.grad, w.grad)
