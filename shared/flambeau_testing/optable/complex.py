"""Rows for the complex-number operators (views of parts, conjugation, polar form)."""

import numpy as np

import flambeau

from . import COMPLEX, FLOATS, OpTest, Sample, binary_samples, make, unary_samples

FLOAT_ALL = ("float16", "bfloat16", "float32", "float64")
SOME_INTS = ("int32", "int64")


def pairs_samples(d, rng):
    """Float tensors of shape (..., 2) that view_as_complex accepts."""
    yield Sample((make((2,), d, rng),), note="one element")
    yield Sample((make((5, 2), d, rng),))
    yield Sample((make((0, 2), d, rng),), note="empty")
    yield Sample((make((6, 3, 2), d, rng)[::2, 1:],), note="strided, offset")
    yield Sample((make((3, 4, 2), d, rng).transpose(1, 0, 2),), note="transposed")


def matrix_samples(d, rng):
    yield Sample((make((3, 4), d, rng),))
    yield Sample((make((2, 3, 5), d, rng),), note="batch")
    yield Sample((make((4, 3), d, rng, noncontig=True),), note="strided")
    yield Sample((make((0, 3), d, rng),), note="empty")


def complex_ref(re, im):
    return (np.asarray(re) + 1j * np.asarray(im)).astype(
        np.complex64 if np.asarray(re).dtype == np.float32 else np.complex128
    )


def polar_ref(r, t):
    return complex_ref(r * np.cos(t), r * np.sin(t))


def angle_ref(x):
    x = np.asarray(x)
    if np.iscomplexobj(x):
        return np.angle(x)
    if not np.issubdtype(x.dtype, np.floating):  # integers compute in float32
        return np.where(x < 0, np.float32(np.pi), np.float32(0))
    return np.where(np.isnan(x), x, np.where(x < 0, np.pi, 0.0).astype(x.dtype))


def angle_samples(d, rng):
    yield from unary_samples(d, rng)
    if d in FLOAT_ALL:
        dt = np.float32 if d == "bfloat16" else d
        x = np.array([np.nan, -1.0, 0.0, -0.0, np.inf, -np.inf], dtype=dt)
        yield Sample((x,), note="special")


def adjoint_ref(x):
    return np.conj(np.swapaxes(x, -1, -2))


TESTS = [
    OpTest(
        "view_as_real",
        flambeau.view_as_real,
        lambda x: np.stack([np.real(x), np.imag(x)], axis=-1),
        unary_samples,
        dtypes=COMPLEX,
    ),
    OpTest(
        "view_as_complex",
        flambeau.view_as_complex,
        lambda x: x[..., 0] + 1j * x[..., 1],
        pairs_samples,
        dtypes=FLOATS,
    ),
    OpTest("real", flambeau.real, np.real, unary_samples, dtypes=FLOAT_ALL + SOME_INTS + COMPLEX),
    OpTest("imag", flambeau.imag, np.imag, unary_samples, dtypes=COMPLEX),
    OpTest(
        "conj",
        flambeau.conj,
        np.conj,
        unary_samples,
        dtypes=FLOAT_ALL + SOME_INTS + ("bool",) + COMPLEX,
    ),
    OpTest(
        "conj_physical",
        flambeau.conj_physical,
        np.conj,
        unary_samples,
        dtypes=FLOAT_ALL + SOME_INTS + COMPLEX,
    ),
    OpTest(
        "conj_physical_",
        lambda x: x.clone().conj_physical_(),
        np.conj,
        unary_samples,
        dtypes=FLOATS + COMPLEX,
    ),
    OpTest(
        "resolve_conj", flambeau.resolve_conj, lambda x: x, unary_samples, dtypes=FLOATS + COMPLEX
    ),
    OpTest(
        "is_conj",
        lambda x: x.is_conj(),
        lambda x: False,
        unary_samples,
        dtypes=FLOATS + COMPLEX,
    ),
    OpTest(
        "angle", flambeau.angle, angle_ref, angle_samples, dtypes=FLOAT_ALL + SOME_INTS + ("bool",)
    ),
    OpTest("angle", flambeau.angle, angle_ref, angle_samples, dtypes=COMPLEX, id="angle_complex"),
    OpTest("polar", flambeau.polar, polar_ref, binary_samples, dtypes=FLOATS),
    OpTest("complex", flambeau.complex, complex_ref, binary_samples, dtypes=FLOATS),
    OpTest("adjoint", flambeau.adjoint, adjoint_ref, matrix_samples, dtypes=FLOATS + COMPLEX),
    OpTest(
        "adjoint",
        lambda x: x.mH,
        adjoint_ref,
        matrix_samples,
        dtypes=FLOATS + COMPLEX + ("int64",),
        id="Tensor.mH",
    ),
]
