"""Rows for the in-place metadata operators: set_, is_set_to, resize_ and the in-place views.

Each in-place op returns its (re-pointed) self, compared with NumPy's view of the same
elements. Storage sharing, growth and lifetime are tested in test_metadata_mutation.py.
"""

import numpy as np

import flambeau

from . import OpTest, Sample
from .shape import DTYPES, arr, np_as_strided, np_squeeze, np_t, one_input


def _contiguous_clone(t):
    return t.clone(memory_format=flambeau.contiguous_format)


def _set_from_storage(a, source, storage_offset, size, stride=None):
    return a.set_(source, storage_offset, size, stride)


def _ref_set_from_storage(a, source, storage_offset, size, stride=None):
    if not stride:
        stride = tuple(int(np.prod(size[i + 1 :])) for i in range(len(size)))
    return np_as_strided(source, size, stride, storage_offset)


def _set_samples(d, rng):
    src = arr((12,), d, rng)
    yield Sample((arr((3,), d, rng), src, 2, (2, 3), (4, 1)), note="strided window")
    yield Sample((arr((3,), d, rng), src, 0, (3, 4)), note="contiguous strides")
    yield Sample((arr((3,), d, rng), src, 1, (2, 2), ()), note="empty stride: contiguous")
    yield Sample((arr((3,), d, rng), src, 11, ()), note="0-dim at the last element")
    yield Sample((arr((3,), d, rng), src, 5, (0, 4)), note="empty")
    yield Sample((arr((2, 2), d, rng), arr((4, 3), d, rng), 0, (3, 4), (1, 3)), note="transposed")


def _resize_shrink(a, size):
    return _contiguous_clone(a).resize_(size)


def _ref_resize_shrink(a, size):
    n = int(np.prod(size))
    return np.ascontiguousarray(a).reshape(-1)[:n].reshape(size)


def _resize_grow_keeps_prefix(a, size):
    t = _contiguous_clone(a)
    return t.resize_(size).reshape(-1)[: a.numel()]


def _is_set_to_cases(a):
    return (
        a.is_set_to(a),
        a.is_set_to(a.view(a.shape)),
        a.is_set_to(a.clone()),
        a.is_set_to(a.unsqueeze(0)),
    )


def _ref_is_set_to_cases(a):
    return (True, True, False, False)


def _swapped(a, d0, d1):
    return np.swapaxes(a, d0, d1) if a.ndim else a


SWAP_SAMPLES = lambda d, rng: [  # noqa: E731
    Sample((arr((2, 3, 4), d, rng), 0, 2)),
    Sample((arr((3, 4), d, rng, "strided"), -1, 0)),
    Sample((arr((3, 4), d, rng, "T"), 0, 1)),
    Sample((arr((), d, rng), 0, -1)),
    Sample((arr((0, 2), d, rng), 0, 1)),
]

TESTS = [
    OpTest(
        "set_",
        lambda a, source: a.set_(source),
        lambda a, source: source,
        lambda d, rng: [
            Sample((arr((3,), d, rng), arr((2, 4), d, rng))),
            Sample((arr((3,), d, rng), arr((4, 3), d, rng, "T")), note="transposed source"),
            Sample((arr((2, 2), d, rng), arr((3, 5), d, rng, "strided")), note="strided"),
            Sample((arr((3,), d, rng), arr((), d, rng)), note="0-dim source"),
        ],
        dtypes=DTYPES,
        id="set_-source",
    ),
    OpTest(
        "set_",
        _set_from_storage,
        _ref_set_from_storage,
        _set_samples,
        dtypes=DTYPES,
        id="set_-storage_offset",
    ),
    OpTest(
        "set_",
        lambda a: a.set_(),
        lambda a: np.empty((0,), dtype=a.dtype),
        one_input([((3, 2), "", {}), ((), "", {})]),
        dtypes=DTYPES,
        id="set_-empty",
    ),
    OpTest(
        "is_set_to",
        _is_set_to_cases,
        _ref_is_set_to_cases,
        one_input([((3, 2), "", {}), ((4, 3), "T", {}), ((), "", {}), ((0, 2), "", {})]),
        dtypes=("bool", "int64", "float32", "complex64"),
    ),
    OpTest(
        "resize_",
        _resize_shrink,
        _ref_resize_shrink,
        lambda d, rng: [
            Sample((arr((3, 4), d, rng), (2, 6)), note="same numel"),
            Sample((arr((3, 4), d, rng, "T"), (5,)), note="shrink a transposed input"),
            Sample((arr((3, 4), d, rng), ()), note="to 0-dim"),
            Sample((arr((3, 4), d, rng), (0, 7)), note="to empty"),
        ],
        dtypes=DTYPES,
        id="resize_-shrink",
    ),
    OpTest(
        "resize_",
        _resize_grow_keeps_prefix,
        lambda a, size: np.ascontiguousarray(a).reshape(-1),
        lambda d, rng: [
            Sample((arr((3, 4), d, rng), (5, 7))),
            Sample((arr((2,), d, rng), (1000,))),
            Sample((arr((0,), d, rng), (4, 4)), note="from empty"),
        ],
        dtypes=DTYPES,
        id="resize_-grow",
    ),
    OpTest(
        "resize_as_",
        lambda a, b: _contiguous_clone(a).resize_as_(b),
        lambda a, b: np.ascontiguousarray(a).reshape(-1)[: b.size].reshape(b.shape),
        lambda d, rng: [
            Sample((arr((3, 4), d, rng), arr((2, 2, 3), d, rng))),
            Sample((arr((3, 4), d, rng), arr((5,), d, rng, "strided"))),
            Sample((arr((3, 4), d, rng), arr((), d, rng))),
        ],
        dtypes=("bool", "int64", "float32", "complex64"),
    ),
    OpTest(
        "t_",
        lambda a: a.t_(),
        np_t,
        one_input([((), "", {}), ((4,), "", {}), ((3, 4), "strided", {}), ((0, 2), "", {})]),
        dtypes=DTYPES,
    ),
    OpTest("transpose_", lambda a, d0, d1: a.transpose_(d0, d1), _swapped, SWAP_SAMPLES, DTYPES),
    OpTest("swapaxes_", lambda a, d0, d1: a.swapaxes_(d0, d1), _swapped, SWAP_SAMPLES, DTYPES),
    OpTest("swapdims_", lambda a, d0, d1: a.swapdims_(d0, d1), _swapped, SWAP_SAMPLES, DTYPES),
    OpTest(
        "squeeze_",
        lambda a, **kw: a.squeeze_(**kw),
        np_squeeze,
        one_input(
            [
                ((), "", {}),
                ((1, 3, 1), "", {}),
                ((1, 3, 1), "", {"dim": 0}),
                ((1, 3, 1), "", {"dim": 1}),
                ((1, 3, 1), "", {"dim": (0, 2)}),
                ((2, 1, 4), "strided", {"dim": -2}),
                ((1, 0), "", {}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "unsqueeze_",
        lambda a, dim: a.unsqueeze_(dim),
        lambda a, dim: np.expand_dims(a, dim),
        one_input(
            [
                ((), "", {"dim": 0}),
                ((3, 4), "T", {"dim": 1}),
                ((3, 4), "strided", {"dim": -1}),
                ((0,), "", {"dim": 0}),
            ]
        ),
        dtypes=DTYPES,
    ),
    OpTest(
        "as_strided_",
        lambda a, *args: a.as_strided_(*args),
        np_as_strided,
        lambda d, rng: [
            Sample((arr((12,), d, rng), (3, 3), (3, 1))),
            Sample((arr((3, 4), d, rng), (2, 2), (1, 4), 2)),
            Sample((arr((3, 4), d, rng), (4, 3), (0, 1))),
            Sample((arr((3, 4), d, rng), (0, 5), (100, 100))),
        ],
        dtypes=DTYPES,
    ),
]
