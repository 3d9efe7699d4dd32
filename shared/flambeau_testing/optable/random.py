"""Rows for the random samplers.

Random values have no NumPy reference, so these rows use parameters that make
the result deterministic (std=0, from == to, p in {0, 1}, a one-value range,
a sorted permutation); the statistics and the stream itself are tested in
test_random.py (see NO_REFERENCE for the samplers covered only there).
"""

import numpy as np

import flambeau

from . import FLOATS, OpTest, Sample, binary_samples, make, unary_samples

INTS_AND_FLOATS = ("uint8", "int8", "int16", "int32", "int64", "float32", "float64")


def zero_std_samples(dtype, rng):
    for s in binary_samples(dtype, rng):
        mean, std = s.args
        yield Sample((mean, np.zeros_like(std)), note=s.note)


def probability_samples(dtype, rng):
    for s in unary_samples(dtype, rng):
        (a,) = s.args
        yield Sample(((np.asarray(a) > 0).astype(a.dtype),), note=s.note)


def shape_samples(dtype, rng):
    for shape in [(), (0,), (7,), (2, 3, 4)]:
        yield Sample((make(shape, dtype, rng),), note=f"shape {shape}")


def one_hot_weights(dtype, rng):
    """Weights with one nonzero category per row: multinomial has one answer."""
    for shape in [(5,), (3, 5), (2, 1)]:
        a = np.abs(make(shape, dtype, rng)) + 1
        mask = np.zeros_like(a)
        np.put_along_axis(mask, np.argmax(a, axis=-1)[..., None], 1, axis=-1)
        yield Sample((a * mask,), note=f"one-hot {shape}")


def only_category(a, n):
    return np.repeat(np.argmax(a, axis=-1)[..., None], n, axis=-1)


def sorted_perm(a):
    return np.sort(flambeau.randperm(a.numel()).numpy())


TESTS = [
    OpTest(
        "normal",
        lambda m, s: flambeau.normal(m, s),
        lambda m, s: np.broadcast_arrays(m, s)[0],
        zero_std_samples,
        dtypes=FLOATS,
    ),
    OpTest(
        "normal",
        lambda a: flambeau.normal(a),
        lambda a: a,
        lambda d, rng: ([Sample((make((0,), d, rng),), note="empty")]),
        dtypes=FLOATS,
        id="normal_default_std_empty",
    ),
    OpTest(
        "normal",
        lambda a: flambeau.normal(2.5, 0.0, tuple(a.shape), dtype=a.dtype),
        lambda a: np.full(a.shape, 2.5, a.dtype),
        shape_samples,
        dtypes=FLOATS,
        id="normal_float_float",
    ),
    OpTest(
        "uniform_",
        lambda a: a.clone().uniform_(1.5, 1.5),
        lambda a: np.full_like(a, 1.5),
        unary_samples,
        dtypes=FLOATS,
    ),
    OpTest(
        "normal_",
        lambda a: a.clone().normal_(0.5, 0.0),
        lambda a: np.full_like(a, 0.5),
        unary_samples,
        dtypes=FLOATS,
    ),
    OpTest(
        "random_",
        lambda a: a.clone().random_(3, 4),
        lambda a: np.full_like(a, 3),
        unary_samples,
        dtypes=INTS_AND_FLOATS,
    ),
    OpTest(
        "random_",
        lambda a: a.clone().random_(1),
        lambda a: np.zeros_like(a),
        unary_samples,
        dtypes=INTS_AND_FLOATS,
        id="random_to",
    ),
    OpTest(
        "bernoulli_",
        lambda a: a.clone().bernoulli_(1.0),
        lambda a: np.ones_like(a),
        unary_samples,
        dtypes=INTS_AND_FLOATS,
    ),
    OpTest(
        "bernoulli_",
        lambda a: a.clone().bernoulli_(0.0),
        lambda a: np.zeros_like(a),
        unary_samples,
        dtypes=FLOATS,
        id="bernoulli_p0",
    ),
    OpTest("bernoulli", flambeau.bernoulli, lambda p: p, probability_samples, dtypes=FLOATS),
    OpTest(
        "bernoulli_",
        lambda p: flambeau.zeros_like(p).bernoulli_(p),
        lambda p: p,
        probability_samples,
        dtypes=FLOATS,
        id="bernoulli__tensor",
    ),
    OpTest(
        "bernoulli",
        lambda a: flambeau.bernoulli(a, 1.0),
        np.ones_like,
        unary_samples,
        dtypes=FLOATS,
        id="bernoulli_p",
    ),
    OpTest(
        "multinomial",
        lambda a: flambeau.multinomial(a, 4, replacement=True),
        lambda a: only_category(a, 4),
        one_hot_weights,
        dtypes=FLOATS,
    ),
    OpTest(
        "multinomial",
        lambda a: a.multinomial(1),
        lambda a: only_category(a, 1),
        one_hot_weights,
        dtypes=FLOATS,
        id="multinomial_no_replacement",
    ),
    OpTest(
        "poisson", lambda a: flambeau.poisson(a * 0), np.zeros_like, unary_samples, dtypes=FLOATS
    ),
    OpTest(
        "randint",
        lambda a: flambeau.randint(5, 6, tuple(a.shape), dtype=a.dtype),
        lambda a: np.full(a.shape, 5, a.dtype),
        shape_samples,
        dtypes=INTS_AND_FLOATS,
    ),
    OpTest(
        "randint_like",
        lambda a: flambeau.randint_like(a, 5, 6),
        lambda a: np.full_like(a, 5),
        unary_samples,
        dtypes=INTS_AND_FLOATS,
    ),
    OpTest("randperm", sorted_perm, lambda a: np.arange(a.size), shape_samples, dtypes=("int64",)),
]
