"""More reductions on CUDA against flambeau's CPU kernels: var/std (with the mean,
any correction), all, any, count_nonzero, nansum, nanmean, norm (every p), logsumexp,
over one and several dims, on dense and transposed inputs, short slices (one thread
per output) and long ones (blocks, and chunks), with NaN and infinities where the CPU
gives them a meaning; then tril/triu and the ranges (arange, linspace, logspace)."""

from __future__ import annotations

import math

import pytest
from samples import DEVICE, FLOATS, INTS, REALS, assert_close, sample

import flambeau

# (shape, dims): short slices, long slices, and a few outputs over very long ones.
CASES = [
    ((3, 5, 7), None),
    ((3, 5, 7), 1),
    ((3, 5, 7), (0, 2)),
    ((9, 300, 4), 1),
    ((9, 300, 4), (0, 1, 2)),
    ((2, 70, 70), (1, 2)),
    ((2, 40000), 1),
]


def _inputs(dtype, shape, **kw):
    x = sample(dtype, shape, **kw)
    return [x, x.transpose(0, -1)]


def _tol(dtype, n):
    """Sums of n float32 elements in another order: a few ulps per term."""
    if dtype == flambeau.float32:
        return 1e-5 * max(n, 1) ** 0.5, 1e-4
    return None, None


def _both(fn, x, *args, **kwargs):
    """fn on x's copy on the device, and on x."""
    return fn(x.to(DEVICE), *args, **kwargs), fn(x, *args, **kwargs)


@pytest.mark.parametrize("shape, dims", CASES)
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("correction", [0, 1, 2.5])
def test_var_std_and_mean(dtype, shape, dims, correction):
    for x in _inputs(dtype, shape):
        d = dims if dims is not None else tuple(range(x.dim()))
        n = x.numel() // max(x.sum(d).numel(), 1)
        rtol, atol = _tol(dtype, n)
        got, want = _both(flambeau.var, x, d, correction=correction)
        assert_close(got, want, rtol, atol)
        got, want = _both(flambeau.std, x, d, correction=correction, keepdim=True)
        assert_close(got, want, rtol, atol)
        (gv, gm), (wv, wm) = _both(flambeau.var_mean, x, d, correction=correction)
        assert_close(gv, wv, rtol, atol)
        assert_close(gm, wm, rtol, atol)


@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.float64])
def test_var_edge_cases_match_the_cpu(dtype):
    cases = [
        flambeau.tensor([[1.0, float("nan"), 2.0], [1.0, 2.0, 3.0]], dtype=dtype),
        flambeau.tensor([[1.0, float("inf"), 2.0], [5.0, 5.0, 5.0]], dtype=dtype),
        flambeau.tensor([[7.0], [1.0]], dtype=dtype),  # one element: correction 1 divides by 0
        flambeau.ones(2, 0, dtype=dtype),  # empty slices
        flambeau.full((3, 5000), 1e4, dtype=dtype) + sample(dtype, (3, 5000), scale=1e-3),
    ]
    for x in cases:
        for corr in (0, 1):
            got, want = _both(flambeau.var_mean, x, 1, correction=corr)
            assert_close(got[0], want[0], 1e-4, 1e-6)
            assert_close(got[1], want[1])


@pytest.mark.parametrize("shape, dims", CASES)
@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
def test_all_any_count_nonzero(dtype, shape, dims):
    for x in _inputs(dtype, shape, scale=0.6):
        for fn in ("all", "any"):
            if dims is None:
                got, want = _both(getattr(flambeau, fn), x)
            else:
                d = dims if isinstance(dims, int) else dims[-1]
                got, want = _both(getattr(flambeau, fn), x, d)
            assert_close(got, want)
        got, want = _both(lambda t: flambeau.count_nonzero(t, dims), x)
        assert_close(got, want)


def test_all_any_of_nan_and_empty():
    x = flambeau.tensor([[float("nan"), 0.0], [0.0, 0.0]])
    for fn in ("all", "any"):
        for d in (0, 1):
            got, want = _both(getattr(flambeau, fn), x, d)
            assert_close(got, want)
    empty = flambeau.zeros(3, 0)
    assert_close(empty.to(DEVICE).all(1), empty.all(1))
    assert_close(empty.to(DEVICE).any(1), empty.any(1))


@pytest.mark.parametrize("shape, dims", CASES)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_nansum_and_nanmean(dtype, shape, dims):
    for x in _inputs(dtype, shape, nan=True):
        n = x.numel() // max(x.sum(dims).numel() if dims is not None else 1, 1)
        rtol, atol = _tol(dtype, n)
        args = () if dims is None else (dims,)
        got, want = _both(flambeau.nansum, x, *args)
        assert_close(got, want, rtol, atol)
        if dtype.is_floating_point:
            got, want = _both(flambeau.nanmean, x, *args)
            assert_close(got, want, rtol, atol)


@pytest.mark.parametrize("p", [2, 1, 0, 3, 0.5, math.inf, -math.inf])
@pytest.mark.parametrize("shape, dims", CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_norm(dtype, shape, dims, p):
    for x in _inputs(dtype, shape):
        got, want = _both(lambda t: flambeau.linalg.vector_norm(t, p, dims), x)
        rtol, atol = _tol(dtype, x.numel())
        assert_close(got, want, rtol, atol)


def test_norm_propagates_nan_and_keeps_large_values():
    x = flambeau.tensor([[1.0, float("nan"), 3.0], [3e30, 4e30, 0.0]])
    for p in (2, 1, math.inf, -math.inf, 3):
        got, want = _both(flambeau.linalg.vector_norm, x, p, 1)
        assert_close(got, want, 1e-6, 0)


@pytest.mark.parametrize("shape, dims", CASES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_logsumexp(dtype, shape, dims):
    d = dims if dims is not None else (0, 1)
    for x in _inputs(dtype, shape):
        got, want = _both(lambda t: flambeau.logsumexp(t, d), x)
        assert_close(got, want, *_tol(dtype, x.numel()))


def test_logsumexp_infinities_and_nan():
    inf, nan = float("inf"), float("nan")
    x = flambeau.tensor(
        [[-inf, -inf, -inf], [inf, 1.0, 2.0], [nan, 1.0, inf], [-inf, 0.0, 1.0], [inf, inf, 0.0]]
    )
    for dtype in (flambeau.float32, flambeau.float64):
        got, want = _both(lambda t: flambeau.logsumexp(t, 1), x.to(dtype))
        assert_close(got, want)
    got, want = _both(lambda t: flambeau.logsumexp(t, 1), flambeau.zeros(2, 0))
    assert_close(got, want)


def test_reductions_are_deterministic():
    x = sample(flambeau.float32, (3, 100000), seed=5).to(DEVICE)
    for fn in (
        lambda t: flambeau.var(t, 1),
        lambda t: flambeau.logsumexp(t, 1),
        lambda t: flambeau.linalg.vector_norm(t, 2, 1),
        lambda t: flambeau.nansum(t, 1),
    ):
        assert flambeau.equal(fn(x).cpu(), fn(x).cpu())


# ---- tril / triu -------------------------------------------------------------------


@pytest.mark.parametrize("diagonal", [0, 1, -1, 3, -4, 10])
@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
def test_tril_triu(dtype, diagonal):
    x = sample(dtype, (2, 3, 5, 4))
    views = [x, x.transpose(-1, -2), x[..., ::2], x.transpose(0, 1)]
    for v in views:
        for fn in (flambeau.tril, flambeau.triu):
            got, want = _both(fn, v, diagonal)
            assert_close(got, want)
    # In place on a strided view writes only the view's elements.
    base = sample(flambeau.float32, (6, 6))
    gd = base.to(DEVICE)
    gd[:, ::2].tril_(diagonal)
    base[:, ::2].tril_(diagonal)
    assert_close(gd, base)


# ---- ranges ------------------------------------------------------------------------

RANGE_DTYPES = [flambeau.float32, flambeau.float64, flambeau.float16, flambeau.bfloat16] + INTS


@pytest.mark.parametrize("dtype", RANGE_DTYPES)
def test_arange_matches_the_cpu_bits(dtype):
    for args in [(10,), (2, 50, 3), (-5, 5), (0, 1000, 7)]:
        got = flambeau.arange(*args, dtype=dtype, device=DEVICE)
        assert flambeau.equal(got.cpu(), flambeau.arange(*args, dtype=dtype))
    if dtype.is_floating_point:
        for args in [(0.0, 1.0, 0.1), (-3.5, 7.25, 0.3), (1.0, 0.0, -0.0625)]:
            got = flambeau.arange(*args, dtype=dtype, device=DEVICE)
            assert flambeau.equal(got.cpu(), flambeau.arange(*args, dtype=dtype))


@pytest.mark.parametrize("dtype", RANGE_DTYPES)
@pytest.mark.parametrize("steps", [0, 1, 2, 7, 100, 1001])
def test_linspace_matches_the_cpu_bits(dtype, steps):
    for start, end in [(0, 10), (-3.5, 7.25), (5, -5)]:
        if dtype == flambeau.uint8 and min(start, end) < 0:
            continue
        got = flambeau.linspace(start, end, steps, dtype=dtype, device=DEVICE)
        assert flambeau.equal(got.cpu(), flambeau.linspace(start, end, steps, dtype=dtype))


# Floating dtypes only: pow differs between libm and CUDA by an ulp or two, which an
# integer result's truncation could turn into a difference of one.
@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.float64])
@pytest.mark.parametrize("base", [10.0, 2.0, 0.5])
def test_logspace(dtype, base):
    for start, end, steps in [(0, 3, 7), (-2, 2, 50), (1, 1, 1)]:
        got = flambeau.logspace(start, end, steps, base=base, dtype=dtype, device=DEVICE)
        want = flambeau.logspace(start, end, steps, base=base, dtype=dtype)
        # pow differs between libm and CUDA by an ulp or two.
        assert_close(got, want, 1e-6 if dtype == flambeau.float32 else 1e-14, 0)
