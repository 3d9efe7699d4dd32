"""The special functions of the CUDA kernels (``special_functions.h``, the CPU's
algorithms as ``__host__ __device__`` code), compiled for the host with g++
(tests/host_kernels/print_special_functions.cpp) and compared with flambeau's CPU
kernels in float64 over grids that include the edges (poles, zeros, NaN, infinities,
negative and fractional degrees, the polynomials' closed forms above degree 64 and
the incomplete gamma functions' Temme region)."""

from __future__ import annotations

import itertools
import math
import subprocess

import pytest
from host_build import compile_host_program

flambeau = pytest.importorskip("flambeau")

NAN, INF = float("nan"), float("inf")
X = [-INF, -7.5, -3.0, -2.5, -1.0, -0.3, -1e-9, 0.0, 1e-9, 0.25, 0.5, 1.0, 1.5, 2.0, 7.25]
X += [12.0, 30.0, 1e3, INF, NAN]
PROBABILITIES = [NAN, -0.1, 0.0, 1e-300, 1e-20, 0.01, 0.1, 0.3, 0.5, 0.9, 0.99, 1 - 1e-12, 1.0]
# I_0 and I_1: tiny, series (up to 20) and Hankel arguments, and overflow.
BESSEL_X = X + [3.0, 3.2, 5.5, 9.99, 15.0, 19.99, 20.0, 20.01, 700.0, 720.0]
BESSEL_X += [-x for x in BESSEL_X]
ERF_VALUES = [NAN, -1.5, -1.0, -0.999999, -0.5, 0.0, 1e-10, 0.3, 0.9, 0.99999999, 1.0, 1.5]

UNARY = {
    "lgamma": (flambeau.lgamma, X),
    "digamma": (flambeau.digamma, X),
    "erfinv": (flambeau.erfinv, ERF_VALUES),
    "entr": (flambeau.special.entr, X),
    "erfcx": (flambeau.special.erfcx, X + [-26.0, -27.0, 26.5, 50.0]),
    "ndtr": (flambeau.special.ndtr, X + [-40.0]),
    "ndtri": (flambeau.special.ndtri, PROBABILITIES),
    "log_ndtr": (flambeau.special.log_ndtr, X + [-40.0, -1e3]),
    "spherical_bessel_j0": (flambeau.special.spherical_bessel_j0, X),
    "i0": (flambeau.i0, BESSEL_X),
    "i0e": (flambeau.special.i0e, BESSEL_X),
    "i1": (flambeau.special.i1, BESSEL_X),
    "i1e": (flambeau.special.i1e, BESSEL_X),
}

DEGREES = [NAN, -1.0, 0.0, 1.0, 2.0, 2.7, 5.0, 10.0, 33.0, 70.0, 200.0]
POLY_X = [-INF, -2.0, -1.0, -0.7, -0.3, 0.0, 0.25, 0.5, 0.9, 1.0, 1.5, 3.0, INF, NAN]
POLYNOMIALS = [
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
]
GAMMA_A = [NAN, -1.0, 0.0, 1e-3, 0.5, 1.0, 3.0, 20.0, 150.0, 2e5, INF]
GAMMA_X = [NAN, -1.0, 0.0, 0.1, 1.0, 3.0, 25.0, 140.0, 2e5 + 300.0, 1e6, INF]


def binary_cases():
    """(name, flambeau CPU function of two float64 tensors, a values, b values)."""
    cases = [
        ("igamma", flambeau.igamma, GAMMA_A, GAMMA_X),
        ("igammac", flambeau.igammac, GAMMA_A, GAMMA_X),
        (
            "zeta",
            flambeau.special.zeta,
            [NAN, 0.5, 1.0, 1.5, 2.0, 3.0, 7.0, 40.0, INF],
            [NAN, -70.5, -3.0, -2.5, -0.5, 0.0, 0.5, 1.0, 3.0, 1e3, INF],
        ),
    ]
    for name in POLYNOMIALS:
        cases.append((name, getattr(flambeau.special, name), POLY_X, DEGREES))
    return cases


def run_host(exe, lines):
    result = subprocess.run(
        [str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True
    )
    return [float(v) for v in result.stdout.split()]


def assert_same(name, inputs, got, want):
    for args, g, w in zip(inputs, got, want):
        if math.isnan(w):
            assert math.isnan(g), (name, args, g, w)
        elif math.isinf(w) or w == 0:
            assert g == w, (name, args, g, w)
        else:  # the same algorithm; only contracted multiply-adds may differ
            assert math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-300), (name, args, g, w)


@pytest.fixture(scope="module")
def exe(tmp_path_factory):
    return compile_host_program("print_special_functions.cpp", tmp_path_factory.mktemp("sf"))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special_functions_match_the_cpu_kernels(exe, name):
    fn, xs = UNARY[name]
    got = run_host(exe, [f"{name} {x!r}" for x in xs])
    want = fn(flambeau.tensor(xs, dtype=flambeau.float64)).tolist()
    assert_same(name, xs, got, want)


@pytest.mark.parametrize("case", binary_cases(), ids=lambda c: c[0])
def test_binary_special_functions_match_the_cpu_kernels(exe, case):
    name, fn, avals, bvals = case
    pairs = list(itertools.product(avals, bvals))
    got = run_host(exe, [f"{name} {a!r} {b!r}" for a, b in pairs])
    a = flambeau.tensor([p[0] for p in pairs], dtype=flambeau.float64)
    b = flambeau.tensor([p[1] for p in pairs], dtype=flambeau.float64)
    assert_same(name, pairs, got, fn(a, b).tolist())


@pytest.mark.parametrize("order", [0, 1, 2, 5])
def test_polygamma_matches_the_cpu_kernel(exe, order):
    xs = [x for x in X if not (math.isinf(x) and x > 0 and order == 0)] + [INF]
    got = run_host(exe, [f"polygamma {order} {x!r}" for x in xs])
    want = flambeau.polygamma(order, flambeau.tensor(xs, dtype=flambeau.float64)).tolist()
    assert_same("polygamma", xs, got, want)


@pytest.mark.parametrize("p", [1, 2, 5])
def test_mvlgamma_matches_the_cpu_kernel(exe, p):
    xs = [2.5, 3.0, 7.25, 30.0, 1e3, INF, NAN]  # mvlgamma needs x > (p - 1) / 2
    got = run_host(exe, [f"mvlgamma {x!r} {p}" for x in xs])
    want = flambeau.mvlgamma(flambeau.tensor(xs, dtype=flambeau.float64), p).tolist()
    assert_same("mvlgamma", xs, got, want)
