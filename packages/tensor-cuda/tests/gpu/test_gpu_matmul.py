"""bmm on CUDA (cuBLAS for the floating dtypes, a plain loop for integers) through every
product that reaches it: mm, bmm, matmul with broadcast batches and vectors, mv, and
addmm; row-major, transposed, padded, sliced (packed first) and batch-broadcast
operands; K = 0; against flambeau's CPU (float64 products against NumPy's too), and
the same bits on every run."""

from __future__ import annotations

import numpy as np
import pytest
from samples import DEVICE, FLOATS, assert_close, sample

import flambeau

INTS = [flambeau.int32, flambeau.int64, flambeau.int8]


def _tolerance(dtype, k):
    """Products of length k summed in another order (cuBLAS may use FMA, blocking)."""
    if dtype == flambeau.float32:
        return 1e-5 * k**0.5, 1e-4 * k**0.5
    if dtype in (flambeau.float16, flambeau.bfloat16):
        return (4e-3, 4e-3) if dtype == flambeau.float16 else (2e-2, 2e-2)
    if dtype == flambeau.float64:
        return 1e-12 * k**0.5, 1e-12 * k**0.5
    return None, None


def _operands(dtype, b, m, k, n, seed=0):
    x = sample(dtype, (b, m, k), seed=seed + 1, scale=1.0 if dtype.is_floating_point else 3.0)
    y = sample(dtype, (b, k, n), seed=seed + 2, scale=1.0 if dtype.is_floating_point else 3.0)
    return x, y


def _layouts(x):
    """(name, a (B, R, C) tensor equal to x in a given memory layout)."""
    b, r, c = x.shape
    padded = flambeau.zeros((b, r, c + 3), dtype=x.dtype)
    padded[:, :, :c] = x
    every_other = flambeau.zeros((b, r, 2 * c), dtype=x.dtype)
    every_other[:, :, ::2] = x
    return [
        ("row-major", x),
        ("column-major", x.transpose(1, 2).contiguous().transpose(1, 2)),
        ("padded rows", padded[:, :, :c]),
        ("strided columns (packed)", every_other[:, :, ::2]),
        ("batch-first transposed", x.transpose(0, 1).contiguous().transpose(0, 1)),
    ]


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (3, 7, 5, 4), (2, 33, 65, 17), (1, 128, 256, 64)])
def test_bmm_layouts(dtype, shape):
    x, y = _operands(dtype, *shape)
    want = flambeau.bmm(x, y)
    rtol, atol = _tolerance(dtype, shape[2])
    for xname, xv in _layouts(x):
        for yname, yv in _layouts(y):
            got = flambeau.bmm(xv.to(DEVICE), yv.to(DEVICE))
            assert_close(got, want, rtol, atol), (xname, yname)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_matmul_broadcasts_batches_and_vectors(dtype):
    rtol, atol = _tolerance(dtype, 6)
    a = sample(dtype, (2, 1, 4, 6), seed=3, scale=1.0)
    b = sample(dtype, (3, 6, 5), seed=4, scale=1.0)
    v = sample(dtype, (6,), seed=5, scale=1.0)
    for args in [(a, b), (a, v), (v, b), (b[0].t(), v), (v, v), (a[0, 0], b[0])]:
        got = flambeau.matmul(*(t.to(DEVICE) for t in args))
        assert_close(got, flambeau.matmul(*args), rtol, atol)
    m = sample(dtype, (4, 6), seed=6, scale=1.0)
    assert_close(flambeau.mv(m.to(DEVICE), v.to(DEVICE)), flambeau.mv(m, v), rtol, atol)
    assert_close(flambeau.mm(m.to(DEVICE), m.t().to(DEVICE)), flambeau.mm(m, m.t()), rtol, atol)


@pytest.mark.parametrize("dtype", [flambeau.float32, flambeau.float64])
def test_addmm_and_out(dtype):
    rtol, atol = _tolerance(dtype, 8)
    bias = sample(dtype, (5,), seed=7)
    m1 = sample(dtype, (3, 8), seed=8)
    m2 = sample(dtype, (8, 5), seed=9)
    got = flambeau.addmm(bias.to(DEVICE), m1.to(DEVICE), m2.to(DEVICE), beta=0.5, alpha=2.0)
    assert_close(got, flambeau.addmm(bias, m1, m2, beta=0.5, alpha=2.0), rtol, atol)
    out = flambeau.empty((5, 3), dtype=dtype, device=DEVICE).t()  # a transposed out=
    flambeau.mm(m1.to(DEVICE), m2.to(DEVICE), out=out)
    assert_close(out, flambeau.mm(m1, m2), rtol, atol)


def test_float64_matches_numpy():
    x, y = _operands(flambeau.float64, 2, 17, 31, 9)
    got = flambeau.bmm(x.to(DEVICE), y.to(DEVICE)).cpu().numpy()
    assert np.allclose(got, np.matmul(x.numpy(), y.numpy()), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_empty_inner_dimension_gives_zeros(dtype):
    x = flambeau.ones((2, 3, 0), dtype=dtype, device=DEVICE)
    y = flambeau.ones((2, 0, 4), dtype=dtype, device=DEVICE)
    assert_close(flambeau.bmm(x, y), flambeau.zeros((2, 3, 4), dtype=dtype))
    rows = flambeau.ones((2, 0, 3), dtype=dtype, device=DEVICE)
    empty = flambeau.bmm(rows, flambeau.ones((2, 3, 4), dtype=dtype, device=DEVICE))
    assert tuple(empty.shape) == (2, 0, 4)


def test_integer_products_wrap_as_the_cpu():
    x = flambeau.full((1, 2, 3), 100, dtype=flambeau.int8)
    y = flambeau.full((1, 3, 2), 3, dtype=flambeau.int8)
    assert_close(flambeau.bmm(x.to(DEVICE), y.to(DEVICE)), flambeau.bmm(x, y))


def test_products_are_deterministic():
    x, y = _operands(flambeau.float32, 4, 256, 512, 128)
    x, y = x.to(DEVICE), y.to(DEVICE)
    first = flambeau.bmm(x, y).cpu()
    side = flambeau.cuda.Stream()
    with flambeau.cuda.stream(side):  # another stream has its own handle and workspace
        other = flambeau.bmm(x, y)
    side.synchronize()
    assert flambeau.equal(other.cpu(), first)
    assert flambeau.equal(flambeau.bmm(x, y).cpu(), first)
