"""Rows for bitwise and logical operators."""

import numpy as np

import flambeau

from . import ALL_REAL, COMPLEX, OpTest, Sample, binary_samples, make, unary_samples

INT_ALL = ("uint8", "int8", "int16", "int32", "int64")
INT_BOOL = INT_ALL + ("bool",)


def bit_samples(d, rng):
    yield from binary_samples(d, rng, low=-100, high=100, scalar=True if d == "bool" else 5)


def shift_samples(d, rng):
    def m(s, **kw):
        return make(s, d, rng, low=-100, high=100, **kw)

    def k(s, **kw):
        return make(s, d, rng, low=0, high=6, **kw)

    yield Sample((m((7,)), k((7,))))
    yield Sample((m((3, 4), noncontig=True), k((4,))), note="broadcast strided")
    yield Sample((m(()), k((3,))), note="0-dim")
    yield Sample((m((0, 2)), k((2,))), note="empty")
    yield Sample((m((4, 3)).T, k((3, 4))), note="transposed")
    yield Sample((m((2, 3)), 2), note="python scalar")


def logical_samples(d, rng):
    for s in binary_samples(d, rng, low=-1, high=1, scalar=0):
        yield Sample(
            tuple(
                np.asarray(np.round(a)) if isinstance(a, np.ndarray) and d != "bool" else a
                for a in s.args
            ),
            s.kwargs,
            s.note,
        )


def logical_unary_samples(d, rng):
    for s in unary_samples(d, rng, -1, 1):
        yield Sample(
            tuple(np.asarray(np.round(a)) if d != "bool" else a for a in s.args), note=s.note
        )


TESTS = [
    OpTest("bitwise_and", flambeau.bitwise_and, np.bitwise_and, bit_samples, dtypes=INT_BOOL),
    OpTest("bitwise_or", flambeau.bitwise_or, np.bitwise_or, bit_samples, dtypes=INT_BOOL),
    OpTest("bitwise_xor", flambeau.bitwise_xor, np.bitwise_xor, bit_samples, dtypes=INT_BOOL),
    OpTest(
        "bitwise_not",
        flambeau.bitwise_not,
        np.invert,
        lambda d, rng: unary_samples(d, rng, -100, 100),
        dtypes=INT_BOOL,
    ),
    OpTest(
        "bitwise_left_shift",
        flambeau.bitwise_left_shift,
        np.left_shift,
        shift_samples,
        dtypes=INT_ALL,
    ),
    OpTest(
        "bitwise_right_shift",
        flambeau.bitwise_right_shift,
        np.right_shift,
        shift_samples,
        dtypes=INT_ALL,
    ),
    OpTest(
        "logical_and",
        flambeau.logical_and,
        np.logical_and,
        logical_samples,
        dtypes=ALL_REAL + ("bool",) + COMPLEX,
    ),
    OpTest(
        "logical_or",
        flambeau.logical_or,
        np.logical_or,
        logical_samples,
        dtypes=ALL_REAL + ("bool",),
    ),
    OpTest(
        "logical_xor",
        flambeau.logical_xor,
        np.logical_xor,
        logical_samples,
        dtypes=ALL_REAL + ("bool",),
    ),
    OpTest(
        "logical_not",
        flambeau.logical_not,
        np.logical_not,
        logical_unary_samples,
        dtypes=ALL_REAL + ("bool",) + COMPLEX,
    ),
]
