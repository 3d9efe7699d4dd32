"""Rows for elementwise operators."""

import numpy as np

import flambeau
from optable import ALL_REAL, FLOATS, OpTest, binary_samples

TESTS = [
    OpTest("add", lambda a, b, **kw: flambeau.add(a, b, **kw), np.add,
           lambda d, rng: binary_samples(d, rng, scalar=2), dtypes=ALL_REAL),
    OpTest("add", lambda a, b: flambeau.add(a, b, alpha=2), lambda a, b: a + 2 * b,
           lambda d, rng: binary_samples(d, rng), dtypes=FLOATS, id="add_alpha"),
    OpTest("sub", flambeau.sub, np.subtract, lambda d, rng: binary_samples(d, rng, scalar=1.5),
           dtypes=FLOATS),
    OpTest("rsub", flambeau.rsub, lambda a, b: b - a, lambda d, rng: binary_samples(d, rng),
           dtypes=FLOATS),
    OpTest("mul", flambeau.mul, np.multiply, lambda d, rng: binary_samples(d, rng, scalar=3),
           dtypes=ALL_REAL),
]
