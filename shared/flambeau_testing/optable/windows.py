"""Rows for the window functions against scipy.signal.windows (and, for hamming's
general coefficients, the formula itself)."""

import numpy as np

import flambeau

from . import OpTest, Sample

DTYPES = ("float32", "float64", "float16", "bfloat16")


def samples(dtype, rng):
    for n in (0, 1, 2, 7, 10):
        yield Sample((n, dtype))
        yield Sample((n, dtype, False), note="symmetric")


def kaiser_samples(dtype, rng):
    yield from samples(dtype, rng)
    for beta in (0.0, 5.0, -3.0, 30.0):
        yield Sample((9, dtype, True, beta), note="beta")


def hamming_samples(dtype, rng):
    yield from samples(dtype, rng)
    yield Sample((8, dtype, True, 0.5, 0.5), note="hann's coefficients")
    yield Sample((7, dtype, False, 0.6, 0.3), note="general coefficients")


def call(op):
    return lambda n, dtype, *args: op(n, *args, dtype=getattr(flambeau, dtype))


def scipy_window(name, *defaults):
    """scipy.signal.windows.<name>(n, *params, sym=...), imported when a reference runs;
    parameters a sample leaves out come from `defaults` (kaiser's beta: torch's 12.0)."""

    def make(n, *params, sym):
        from scipy.signal import windows

        return getattr(windows, name)(n, *params, *defaults[len(params) :], sym=sym)

    return make


def scipy_ref(make):
    """periodic (torch's default) is scipy's sym=False."""

    def ref(n, dtype, periodic=True, *params):
        return make(n, *params, sym=not periodic).astype(np.float64)

    return ref


def hamming_ref(n, dtype, periodic=True, alpha=0.54, beta=0.46):
    if n == 1:
        return np.ones(1)
    k = np.arange(n) / (n if periodic else n - 1)
    return alpha - beta * np.cos(2 * np.pi * k)


TESTS = [
    OpTest(
        "hann_window", call(flambeau.hann_window), scipy_ref(scipy_window("hann")), samples, DTYPES
    ),
    OpTest("hamming_window", call(flambeau.hamming_window), hamming_ref, hamming_samples, DTYPES),
    OpTest(
        "blackman_window",
        call(flambeau.blackman_window),
        scipy_ref(scipy_window("blackman")),
        samples,
        DTYPES,
    ),
    OpTest(
        "bartlett_window",
        call(flambeau.bartlett_window),
        scipy_ref(scipy_window("bartlett")),
        samples,
        DTYPES,
    ),
    OpTest(
        "kaiser_window",
        call(flambeau.kaiser_window),
        scipy_ref(scipy_window("kaiser", 12.0)),
        kaiser_samples,
        DTYPES,
    ),
]
