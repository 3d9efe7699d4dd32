"""Reductions along dims on CUDA against flambeau's CPU kernels: sum, mean, prod, amax,
amin, max/min with indices, argmax/argmin, over single and several dims, keepdim, on
dense and strided inputs, with short slices (one thread per output) and long ones (one
block per output), NaN and ties (the first index wins), empty slices; and the same
bits on every run (fixed reduction order)."""

from __future__ import annotations

import pytest
from samples import DEVICE, FLOATS, INTS, REALS, assert_close, sample

import flambeau

# (shape, dims): short slices (serial path) and long ones (block path).
CASES = [
    ((3, 5, 7), None),
    ((3, 5, 7), 1),
    ((3, 5, 7), (0, 2)),
    ((3, 5, 7), -1),
    ((9, 300, 4), 1),
    ((9, 300, 4), (1, 2)),
    ((9, 300, 4), (0, 1, 2)),
    ((2, 70, 70), (1, 2)),
]


def _inputs(dtype, shape):
    x = sample(dtype, shape)
    return [x, x.transpose(0, -1)]


def _tolerance(dtype, n):
    """Sums of n float elements accumulated in another order: a few ulps per term."""
    if dtype == flambeau.float32:
        return 1e-5 * max(n, 1) ** 0.5, 1e-4
    return None, None


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape, dims", CASES)
@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
def test_sum(dtype, shape, dims, keepdim):
    for x in _inputs(dtype, shape):
        if dims is None:
            got, want = x.to(DEVICE).sum(), x.sum()
        else:
            got, want = x.to(DEVICE).sum(dims, keepdim=keepdim), x.sum(dims, keepdim=keepdim)
        rtol, atol = _tolerance(dtype, x.numel() // max(want.numel(), 1))
        assert_close(got, want, rtol, atol)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape, dims", CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_mean(dtype, shape, dims, keepdim):
    for x in _inputs(dtype, shape):
        if dims is None:
            got, want = x.to(DEVICE).mean(), x.mean()
        else:
            got, want = x.to(DEVICE).mean(dims, keepdim=keepdim), x.mean(dims, keepdim=keepdim)
        rtol, atol = _tolerance(dtype, x.numel() // max(want.numel(), 1))
        assert_close(got, want, rtol, atol)


@pytest.mark.parametrize("dtype", REALS)
@pytest.mark.parametrize("shape, dim", [((3, 5, 7), 1), ((4, 200), 1), ((6, 3), 0)])
def test_prod(dtype, shape, dim):
    # Factors near 1 (floats) or of +-1 with a few 2s (integers) keep products finite.
    if dtype.is_floating_point:
        x = (1 + sample(flambeau.float64, shape, scale=0.01)).to(dtype)
    else:
        s = sample(flambeau.int64, shape, scale=1.0)
        x = flambeau.where(s > 1, 2, flambeau.where(s < 0, -1, 1)).to(dtype)
        if dtype == flambeau.uint8:
            x = x.abs()
    for view in (x, x.transpose(0, 1)):
        d = dim if view is x else 1 - dim
        got, want = view.to(DEVICE).prod(d), view.prod(d)
        assert_close(got, want, 5e-5 if dtype == flambeau.float32 else None, None)
    assert_close(x.to(DEVICE).prod(), x.prod(), 1e-4 if dtype == flambeau.float32 else None)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("shape, dims", CASES)
@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_amin(op, dtype, shape, dims, keepdim):
    for x in _inputs(dtype, shape):
        x = x.clone()
        if dtype.is_floating_point:
            x.reshape(-1)[5] = float("nan")  # NaN propagates into its output
        fn = getattr(flambeau, op)
        d = () if dims is None else dims
        assert_close(fn(x.to(DEVICE), d, keepdim=keepdim), fn(x, d, keepdim=keepdim), 0, 0)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1, None])
@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argmax_argmin_first_index(op, dtype, dim, keepdim):
    # Few distinct values: many ties, where the first index must win.
    x = sample(dtype, (6, 40, 5), scale=1.0)
    if dtype.is_floating_point:
        x = x.round()
        x[2, 7, 1] = float("nan")  # the first NaN wins
        x[2, 9, 1] = float("nan")
    fn = getattr(flambeau, op)
    for view in (x, x.transpose(0, 1)):
        got = fn(view.to(DEVICE), dim, keepdim=keepdim)
        assert_close(got, fn(view, dim, keepdim=keepdim))


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_along_a_dim(op, dtype):
    x = sample(dtype, (6, 40, 5), scale=1.0)
    if dtype.is_floating_point:
        x = x.round()
        x[1, 3, 2] = float("nan")
    fn = getattr(flambeau, op)
    for dim in (0, 1, 2):
        values, indices = fn(x.to(DEVICE), dim)
        want_values, want_indices = fn(x, dim)
        assert_close(values, want_values, 0, 0)
        assert_close(indices, want_indices)
    assert_close(fn(x.to(DEVICE)), fn(x), 0, 0)


@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.float64, flambeau.int64])
def test_empty_slices(dtype):
    x = flambeau.ones((4, 0, 3), dtype=dtype)
    assert_close(x.to(DEVICE).sum(1), x.sum(1))
    assert_close(x.to(DEVICE).prod(1), x.prod(1))
    if dtype.is_floating_point:
        assert_close(x.to(DEVICE).mean(1), x.mean(1))  # NaN
    assert_close(x.to(DEVICE).amax(0), x.amax(0))  # an empty output


@pytest.mark.parametrize("dims", [None, 0, (1, 2)])
def test_float_sums_are_deterministic(dims):
    x = sample(flambeau.float32, (64, 1000, 3), scale=100.0).to(DEVICE)
    first = x.sum() if dims is None else x.sum(dims)
    for _ in range(3):
        again = x.sum() if dims is None else x.sum(dims)
        assert flambeau.equal(again.cpu(), first.cpu())


@pytest.mark.parametrize("dtype", INTS)
def test_integer_sums_are_exact(dtype):
    x = sample(dtype, (5, 1000))
    assert_close(x.to(DEVICE).sum(1), x.sum(1))
    assert_close(x.to(DEVICE).sum(), x.sum())


@pytest.mark.parametrize("shape, dims", [((3_000_001,), 0), ((3, 200_003), 1), ((70_000, 5), 0)])
def test_long_slices_split_into_chunks(shape, dims):
    """Few outputs over long slices: chunks reduced by separate blocks, then combined."""
    x = sample(flambeau.float32, shape)
    d = x.to(DEVICE)
    n = x.numel() // (x.numel() // x.shape[dims])
    rtol, atol = 1e-5 * n**0.5, 1e-3
    assert_close(d.sum(dims), x.sum(dims), rtol, atol)
    assert_close(d.mean(dims), x.mean(dims), rtol, atol)
    assert_close(d.amax(dims), x.amax(dims), 0, 0)
    ints = sample(flambeau.int64, shape, scale=2.0)  # ties everywhere: the first index wins
    assert_close(ints.to(DEVICE).argmax(dims), ints.argmax(dims))
    assert_close(ints.to(DEVICE).sum(dims), ints.sum(dims))
    first = d.sum(dims).cpu()
    assert flambeau.equal(d.sum(dims).cpu(), first)
    with_nan = x.clone()
    with_nan.reshape(-1)[x.numel() // 2] = float("nan")
    assert_close(with_nan.to(DEVICE).argmin(dims), with_nan.argmin(dims))
