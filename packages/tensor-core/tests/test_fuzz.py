"""Fuzzing the C++ entry points: random shapes, strides, dtypes and arguments.

Every call must either agree with NumPy or raise a Python exception; a crash
(segfault, abort) fails the whole run.
"""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flambeau

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ERRORS = (TypeError, RuntimeError, ValueError, IndexError, NotImplementedError, OverflowError)
DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float32", "float64"]

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


@st.composite
def arrays(draw, shape=None, dtype=None):
    """A NumPy array, sometimes a strided or transposed view."""
    shape = draw(shapes) if shape is None else shape
    dtype = draw(st.sampled_from(DTYPES)) if dtype is None else dtype
    layout = draw(st.sampled_from(["contiguous", "strided", "transposed"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if layout == "strided" and shape:
        base = rng.integers(-5, 6, size=shape[:-1] + (shape[-1] * 2,)).astype(dtype)
        return base[..., ::2]
    if layout == "transposed" and len(shape) >= 2:
        return rng.integers(-5, 6, size=shape[::-1]).astype(dtype).T
    return rng.integers(-5, 6, size=shape).astype(dtype)


def numpy_result(fn, *args):
    try:
        with np.errstate(all="ignore"):
            return fn(*args), None
    except ValueError as e:  # NumPy's broadcast error
        return None, e


@SETTINGS
@given(a=arrays(), b=arrays(), op=st.sampled_from(["add", "mul"]))
def test_binary_ops_broadcast_like_numpy(a, b, op):
    ref, err = numpy_result(getattr(np, {"add": "add", "mul": "multiply"}[op]), a, b)
    ta, tb = flambeau.from_numpy(a), flambeau.from_numpy(b)
    fn = getattr(flambeau, op)
    if err is not None:
        with pytest.raises(RuntimeError, match=re.escape(op)):
            fn(ta, tb)
        return
    if ref.dtype == np.bool_ and op == "add":
        ref = np.logical_or(a, b)
    out = fn(ta, tb)
    assert tuple(out.shape) == ref.shape
    np.testing.assert_array_equal(out.numpy(), ref.astype(out.numpy().dtype))


@SETTINGS
@given(a=arrays(dtype="float64"), data=st.data())
def test_sum_over_random_dims(a, data):
    nd = a.ndim
    dims = data.draw(st.lists(st.integers(-max(nd, 1), max(nd, 1) - 1), max_size=3, unique=True))
    keepdim = data.draw(st.booleans())
    t = flambeau.from_numpy(a)
    wrapped = [d % max(nd, 1) for d in dims]
    if len(set(wrapped)) != len(wrapped) or (nd == 0 and any(d not in (0, -1) for d in dims)):
        with pytest.raises(ERRORS):
            t.sum(dim=tuple(dims), keepdim=keepdim)
        return
    axis = tuple(wrapped) if dims and nd else None
    ref = a.sum(axis=axis, keepdims=keepdim) if nd else a
    out = t.sum(dim=tuple(dims), keepdim=keepdim)
    np.testing.assert_allclose(out.numpy(), ref)


@SETTINGS
@given(a=arrays(dtype="int64"), new=st.lists(st.integers(-1, 6), max_size=4))
def test_reshape_like_numpy(a, new):
    t = flambeau.from_numpy(a)
    try:
        ref = a.reshape(new)
    except ValueError:
        with pytest.raises(RuntimeError, match="reshape"):
            t.reshape(new)
        return
    out = t.reshape(new)
    np.testing.assert_array_equal(out.numpy(), ref)


HUGE = [2**62, 2**40, 2**33 + 1]


@pytest.mark.parametrize("size", [(h,) for h in HUGE] + [(2**31, 2**31, 4), (-1,), (3, -2)])
def test_creation_rejects_impossible_sizes(size):
    for make in (flambeau.zeros, flambeau.ones, flambeau.empty):
        if min(size) >= 0 and np.prod([float(s) for s in size]) * 4 < 2**36:
            continue  # allocatable on a big machine; not an error
        with pytest.raises((RuntimeError, MemoryError)):
            make(size)


# Garbage-in fuzzing of every operator in the table through its Python binding.
POOL = [
    None,
    0,
    1,
    -1,
    2,
    2.5,
    -0.5,
    True,
    False,
    1j,
    "abc",
    "",
    [1, 2],
    (0,),
    [],
    (),
    [[1]],
    flambeau.float32,
    flambeau.int64,
    flambeau.bool,
]


def tensor_pool():
    return [
        flambeau.ones(3),
        flambeau.zeros(2, 3, dtype=flambeau.int64),
        flambeau.ones((), dtype=flambeau.bool),
        flambeau.zeros(0, dtype=flambeau.float64),
        flambeau.full((2, 1, 3), 2.0),
        flambeau.ones(2, 2, dtype=flambeau.float64),
    ]


def _functions():
    names = sorted({row["name"] for row in flambeau.ops_table() if "function" in row["variants"]})
    return [n for n in names if hasattr(flambeau, n)]


@pytest.mark.parametrize("name", _functions())
def test_operator_garbage_arguments_raise_cleanly(name):
    fn = getattr(flambeau, name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # the same garbage every run
    pool = POOL + tensor_pool()
    for _ in range(200):
        nargs = int(rng.integers(0, 5))
        args = [pool[int(rng.integers(len(pool)))] for _ in range(nargs)]
        try:
            fn(*args)
        except ERRORS:
            pass
        except MemoryError:
            pass
