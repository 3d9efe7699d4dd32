"""Rows for matrix products."""

import numpy as np

import flambeau
from optable import COMPLEX, FLOATS, OpTest, Sample, make

PAIRS = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 1, 2, 3), (4, 3, 5)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
    ((3,), (2, 3, 4)),
]


def matmul_samples(dtype, rng):
    for sa, sb in PAIRS:
        yield Sample((make(sa, dtype, rng), make(sb, dtype, rng)))
    yield Sample((make((4, 3), dtype, rng).T, make((4, 2), dtype, rng)), note="transposed")
    yield Sample(
        (make((3, 4), dtype, rng, noncontig=True), make((4, 2), dtype, rng)), note="strided"
    )


def shaped(samples, ndims):
    def gen(dtype, rng):
        for s in samples(dtype, rng):
            if tuple(a.ndim for a in s.args) == ndims:
                yield s

    return gen


DTYPES = FLOATS + COMPLEX + ("int64", "float16", "bfloat16")

TESTS = [
    OpTest("matmul", flambeau.matmul, np.matmul, matmul_samples, dtypes=DTYPES),
    OpTest("mm", flambeau.mm, np.matmul, shaped(matmul_samples, (2, 2)), dtypes=DTYPES),
    OpTest(
        "bmm",
        flambeau.bmm,
        np.matmul,
        lambda d, rng: [
            Sample((make((3, 2, 4), d, rng), make((3, 4, 5), d, rng))),
            Sample((make((0, 2, 4), d, rng), make((0, 4, 5), d, rng))),
        ],
        dtypes=DTYPES,
    ),
    OpTest("mv", flambeau.mv, np.matmul, shaped(matmul_samples, (2, 1)), dtypes=DTYPES),
    OpTest("dot", flambeau.dot, np.dot, shaped(matmul_samples, (1, 1)), dtypes=DTYPES),
]
