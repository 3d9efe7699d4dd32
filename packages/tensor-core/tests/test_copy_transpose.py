"""Copies of transposed layouts (the copy kernel's cache-blocked path) against NumPy:
every item size, odd and tile-straddling shapes, batched and permuted views, strided
sources and destinations, with one thread and with several."""

from __future__ import annotations

import numpy as np
import pytest

import flambeau

# (flambeau dtype, numpy dtype its values round-trip through)
DTYPES = [
    (flambeau.bool, np.bool_),
    (flambeau.uint8, np.uint8),
    (flambeau.int8, np.int8),
    (flambeau.int16, np.int16),
    (flambeau.float16, np.float16),
    (flambeau.bfloat16, np.float32),
    (flambeau.int32, np.int32),
    (flambeau.float32, np.float32),
    (flambeau.int64, np.int64),
    (flambeau.float64, np.float64),
    (flambeau.complex64, np.complex64),
    (flambeau.complex128, np.complex128),
]
SHAPES = [(8, 8), (7, 9), (9, 7), (33, 65), (64, 32), (100, 3), (3, 100), (1, 50), (131, 257)]


def sample(shape, npdtype, seed=0):
    rng = np.random.default_rng(seed)
    if npdtype == np.bool_:
        return rng.random(shape) > 0.5
    if np.issubdtype(npdtype, np.integer):
        info = np.iinfo(npdtype)
        return rng.integers(info.min, info.max, shape, dtype=npdtype, endpoint=True)
    if np.issubdtype(npdtype, np.complexfloating):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(npdtype)
    return (rng.standard_normal(shape) * 100).astype(npdtype)


def as_flambeau(a, dtype):
    t = flambeau.from_numpy(np.ascontiguousarray(a))
    return t if t.dtype == dtype else t.to(dtype)


def as_numpy(t, npdtype):
    return (t if t.dtype != flambeau.bfloat16 else t.to(flambeau.float32)).numpy().astype(npdtype)


def reference(a, dtype, npdtype):
    """a's values as `dtype` holds them (bfloat16 rounds)."""
    return as_numpy(as_flambeau(a, dtype), npdtype)


@pytest.mark.parametrize("dtype,npdtype", DTYPES, ids=[str(d[0]) for d in DTYPES])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_t_contiguous_and_clone(dtype, npdtype, shape):
    a = sample(shape, npdtype)
    x = as_flambeau(a, dtype)
    want = reference(a, dtype, npdtype).T
    clone = x.t().clone(memory_format=flambeau.contiguous_format)
    for got in (x.t().contiguous(), clone, x.mT.contiguous()):
        assert got.is_contiguous() and tuple(got.shape) == want.shape
        np.testing.assert_array_equal(as_numpy(got, npdtype), want)


@pytest.mark.parametrize("dtype,npdtype", DTYPES[::3], ids=[str(d[0]) for d in DTYPES[::3]])
def test_large_parallel(threads, dtype, npdtype):
    a = sample((300, 517), npdtype, seed=1)
    want = reference(a, dtype, npdtype).T
    np.testing.assert_array_equal(as_numpy(as_flambeau(a, dtype).t().contiguous(), npdtype), want)


@pytest.mark.parametrize(
    "shape,perm",
    [
        ((5, 37, 41), (0, 2, 1)),  # batched transpose of the last two dims
        ((2, 3, 40, 50), (0, 1, 3, 2)),
        ((2, 3, 40, 50), (1, 0, 3, 2)),
        ((17, 19, 23), (2, 1, 0)),
        ((17, 19, 23), (1, 2, 0)),
        ((17, 19, 23), (2, 0, 1)),
        ((64, 33, 3), (2, 1, 0)),
    ],
)
@pytest.mark.parametrize("npdtype", [np.float32, np.float64, np.int16, np.uint8])
def test_permuted(threads, shape, perm, npdtype):
    dtype = {np.float32: flambeau.float32, np.float64: flambeau.float64}.get(npdtype)
    dtype = dtype or {np.int16: flambeau.int16, np.uint8: flambeau.uint8}[npdtype]
    a = sample(shape, npdtype, seed=2)
    got = as_flambeau(a, dtype).permute(*perm).contiguous()
    np.testing.assert_array_equal(got.numpy(), a.transpose(perm))


def test_strided_source_and_destination():
    a = sample((90, 70), np.float32, seed=3)
    x = flambeau.from_numpy(a.copy())
    # a transposed view of a sliced source
    np.testing.assert_array_equal(x[::2, 1::3].t().contiguous().numpy(), a[::2, 1::3].T)
    # writing a contiguous source into a transposed destination
    dst = flambeau.zeros(70, 90)
    dst.t().copy_(x)
    np.testing.assert_array_equal(dst.numpy(), a.T)
    # a transposed destination inside a larger buffer (only its elements change)
    big = flambeau.zeros(80, 100)
    big[5:75, 3:93].t().copy_(x)
    want = np.zeros((80, 100), np.float32)
    want[5:75, 3:93] = a.T
    np.testing.assert_array_equal(big.numpy(), want)


def test_special_values_survive_bit_for_bit():
    a = sample((40, 24), np.float32, seed=4)
    a[::7, ::5] = np.nan
    a[1, :] = -0.0
    a[2, :] = np.inf
    bits = a.view(np.int32)
    bits[3, :] = 0x7FA00001  # a NaN payload (signalling) must not be rewritten
    got = flambeau.from_numpy(a.copy()).t().contiguous().numpy()
    np.testing.assert_array_equal(got.view(np.int32), a.T.copy().view(np.int32))


def test_zero_size_and_thin():
    for shape in [(0, 5), (5, 0), (1, 1), (2, 1000), (1000, 2)]:
        a = sample(shape, np.float32)
        np.testing.assert_array_equal(flambeau.from_numpy(a).t().contiguous().numpy(), a.T)
