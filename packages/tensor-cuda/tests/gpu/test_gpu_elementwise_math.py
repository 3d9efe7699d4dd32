"""The elementwise math group on CUDA against flambeau's CPU kernels: the activations
with their gradients (the *_backward kernels) and logit, the bitwise operators and
shifts, the binary math (atan2 ... ldexp, nextafter, fmod, remainder, gcd, lcm,
heaviside), the unary math (angle, conj_physical, sgn, signbit, isreal, deg2rad,
rad2deg, sinc, nan_to_num, frexp) and the special functions computed in double
(lgamma ... the orthogonal polynomials): every dtype they take, dense, transposed,
sliced and broadcast operands, NaN and infinities."""

from __future__ import annotations

import pytest
from samples import DEVICE, FLOATS, INTS, REALS, assert_close, sample, views

import flambeau
import flambeau.nn.functional as F


def on_device(fn, *args, **kwargs):
    """fn over args moved to the device (tensors only)."""
    moved = [a.to(DEVICE) if isinstance(a, flambeau.Tensor) else a for a in args]
    return fn(*moved, **kwargs)


def _with_specials(dtype, shape=(6, 7)):
    """A floating sample with NaN, +-inf and +-0 in its first row."""
    x = sample(dtype, shape)
    x[0, :5] = flambeau.tensor([float("nan"), float("inf"), float("-inf"), 0.0, -0.0])
    return x


def _fp_tolerance(dtype):
    """(rtol, atol) for float functions: CUDA's libm is within a few ulp of glibc's."""
    return (1e-5, 1e-5) if dtype == flambeau.float32 else (None, None)


# ---- activations --------------------------------------------------------------------

ACTIVATIONS = {
    "elu": lambda x: F.elu(x, alpha=1.3),
    "selu": F.selu,
    "celu": lambda x: F.celu(x, alpha=0.7),
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "hardshrink": lambda x: F.hardshrink(x, 0.7),
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "hardtanh": lambda x: F.hardtanh(x, -1.5, 2.0),
    "relu6": F.relu6,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
    "logsigmoid": F.logsigmoid,
    "mish": F.mish,
    "silu": F.silu,
    "softplus": lambda x: F.softplus(x, beta=2.0, threshold=5.0),
    "softshrink": lambda x: F.softshrink(x, 0.6),
    "threshold": lambda x: F.threshold(x, 0.5, -2.0),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations(name, dtype):
    fn = ACTIVATIONS[name]
    rtol, atol = _fp_tolerance(dtype)
    x = sample(dtype, nan=True)
    for _, view in views(x):
        assert_close(on_device(fn, view), fn(view), rtol, atol)


def _value_and_grad(fn, x, g):
    leaf = x.detach().clone().requires_grad_(True)
    out = fn(leaf)
    out.backward(g)
    return out.detach(), leaf.grad


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradients(name, dtype):
    fn = ACTIVATIONS[name]
    rtol, atol = _fp_tolerance(dtype)
    x = sample(dtype, scale=3.0)
    g = sample(dtype, seed=5, scale=1.0)
    want = _value_and_grad(fn, x, g)
    got = _value_and_grad(fn, x.to(DEVICE), g.to(DEVICE))
    for a, b in zip(got, want):
        assert_close(a, b, rtol, atol)


@pytest.mark.parametrize("dtype", INTS)
def test_threshold_on_integers(dtype):
    x = sample(dtype)
    for _, view in views(x):
        got = on_device(F.threshold, view, 1, 7)
        assert_close(got, F.threshold(view, 1, 7))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("eps", [None, 0.05])
def test_logit(dtype, eps):
    x = flambeau.sigmoid(sample(flambeau.float64, scale=2.0)).to(dtype)
    x[0, 0, 0] = 0.0
    x[0, 0, 1] = 1.0
    rtol, atol = _fp_tolerance(dtype)
    for _, view in views(x):
        assert_close(on_device(flambeau.logit, view, eps), flambeau.logit(view, eps), rtol, atol)


# ---- bitwise ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INTS + [flambeau.bool])
@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_binary(op, dtype):
    fn = getattr(flambeau, op)
    a = sample(dtype, scale=40.0)
    b = sample(dtype, (5, 1), seed=2, scale=40.0)
    for _, view in views(a):
        other = b if view.shape[-2:] == (5, 3) else sample(dtype, view.shape[-1:], seed=3)
        assert_close(on_device(fn, view, other), fn(view, other))


@pytest.mark.parametrize("dtype", INTS + [flambeau.bool])
def test_bitwise_not(dtype):
    a = sample(dtype, scale=40.0)
    for _, view in views(a):
        assert_close(on_device(flambeau.bitwise_not, view), flambeau.bitwise_not(view))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shifts_including_out_of_range_amounts(op, dtype):
    fn = getattr(flambeau, op)
    a = sample(dtype, (6, 11), scale=40.0)
    bits = dtype.itemsize * 8
    amounts = [0, 1, 3, bits - 1, bits, bits + 5] + ([-1, -3] if dtype.is_signed else [])
    b = flambeau.tensor(amounts + [2] * (11 - len(amounts)), dtype=dtype)
    for _, view in views(a):
        assert_close(on_device(fn, view, b[: view.shape[-1]]), fn(view, b[: view.shape[-1]]))


# ---- binary math ----------------------------------------------------------------------

FLOAT_BINARY = [
    "atan2",
    "copysign",
    "hypot",
    "logaddexp",
    "logaddexp2",
    "xlogy",
    "ldexp",
    "nextafter",
    "fmod",
    "remainder",
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", FLOAT_BINARY + ["special.xlog1py"])
def test_float_binary_math(op, dtype):
    fn = getattr(flambeau.special, op[8:]) if op.startswith("special.") else getattr(flambeau, op)
    a = _with_specials(dtype)
    b = sample(dtype, (6, 7), seed=2)
    if op == "ldexp":
        b = b.round()
    if op in ("xlogy", "special.xlog1py"):
        b = b.abs()
        a[2, :3] = 0.0
    if op == "nextafter":
        b[1, :3] = a[1, :3]  # equal: the result is b
    rtol, atol = _fp_tolerance(dtype)
    for _, view in views(a):
        other = b.t()[: view.shape[0], : view.shape[1]] if view.shape != b.shape else b
        assert_close(on_device(fn, view, other), fn(view, other), rtol, atol)
    exact = op in ("copysign", "nextafter", "fmod", "ldexp")
    assert_close(on_device(fn, a, b), fn(a, b), *((0, 0) if exact else (rtol, atol)))


def _nonzero(dtype, shape, seed):
    """Divisors: nonzero, of both signs for signed dtypes."""
    d = sample(dtype, shape, seed=seed, scale=5.0).abs() + 1
    if dtype.is_signed:
        d = flambeau.where(sample(flambeau.bool, shape, seed=seed + 1), d, -d)
    return d


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", ["fmod", "remainder", "gcd", "lcm"])
def test_integer_binary_math(op, dtype):
    fn = getattr(flambeau, op)
    a = sample(dtype, scale=30.0)
    b = _nonzero(dtype, (5, 3), seed=2)
    for _, view in views(a):
        other = b if view.shape[-2:] == (5, 3) else _nonzero(dtype, view.shape[-1:], seed=3)
        assert_close(on_device(fn, view, other), fn(view, other))
    if dtype.is_signed:  # the most negative value and -1
        low = flambeau.tensor([flambeau.iinfo(dtype).min, 7, -7, 0], dtype=dtype)
        minus_one = flambeau.tensor([-1, -1, 3, 5], dtype=dtype)
        assert_close(on_device(fn, low, minus_one), fn(low, minus_one))


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
def test_heaviside(dtype):
    x = _with_specials(dtype) if dtype.is_floating_point else sample(dtype, (6, 7))
    values = sample(dtype, (7,), seed=4)
    for _, view in views(x):
        v = values[: view.shape[-1]]
        assert_close(on_device(flambeau.heaviside, view, v), flambeau.heaviside(view, v))


# ---- unary math -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["angle", "deg2rad", "rad2deg", "sinc", "sgn", "conj_physical"])
def test_float_unary_math(op, dtype):
    fn = getattr(flambeau, op)
    x = _with_specials(dtype)
    rtol, atol = _fp_tolerance(dtype)
    for _, view in views(x):
        assert_close(on_device(fn, view), fn(view), rtol, atol)


@pytest.mark.parametrize("dtype", INTS + [flambeau.bool])
@pytest.mark.parametrize("op", ["sgn", "conj_physical", "nan_to_num"])
def test_unary_math_on_integers_and_bool(op, dtype):
    fn = getattr(flambeau, op)
    x = sample(dtype)
    for _, view in views(x):
        assert_close(on_device(fn, view), fn(view))


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
@pytest.mark.parametrize("op", ["signbit", "isreal"])
def test_bool_tests(op, dtype):
    fn = getattr(flambeau, op)
    x = _with_specials(dtype) if dtype.is_floating_point else sample(dtype, (6, 7))
    for _, view in views(x):
        assert_close(on_device(fn, view), fn(view))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs", [{}, {"nan": 2.5}, {"nan": 0.0, "posinf": 7.0, "neginf": -9.0}])
def test_nan_to_num(dtype, kwargs):
    x = _with_specials(dtype)
    for _, view in views(x):
        got = on_device(flambeau.nan_to_num, view, **kwargs)
        assert_close(got, flambeau.nan_to_num(view, **kwargs), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_frexp(dtype):
    x = _with_specials(dtype) * 37.0
    for _, view in views(x):
        mantissa, exponent = on_device(flambeau.frexp, view)
        want_m, want_e = flambeau.frexp(view)
        assert_close(mantissa, want_m, rtol=0, atol=0)
        assert_close(exponent, want_e)


# ---- special functions ----------------------------------------------------------------

# name: (function, the inputs' transform into its domain)
SPECIAL_UNARY = {
    "lgamma": (flambeau.lgamma, lambda x: x.abs() + 0.1),
    "digamma": (flambeau.digamma, lambda x: x.abs() + 0.1),
    "erfinv": (flambeau.erfinv, lambda x: flambeau.tanh(x)),
    "entr": (flambeau.special.entr, lambda x: x),
    "erfcx": (flambeau.special.erfcx, lambda x: x),
    "ndtr": (flambeau.special.ndtr, lambda x: x),
    "ndtri": (flambeau.special.ndtri, lambda x: flambeau.sigmoid(x)),
    "log_ndtr": (flambeau.special.log_ndtr, lambda x: x * 4),
    "spherical_bessel_j0": (flambeau.special.spherical_bessel_j0, lambda x: x * 3),
    "mvlgamma": (lambda x: flambeau.mvlgamma(x, 3), lambda x: x.abs() + 1.5),
    "i0": (flambeau.i0, lambda x: x * 6),
    "i0e": (flambeau.special.i0e, lambda x: x * 6),
    "i1": (flambeau.special.i1, lambda x: x * 6),
    "i1e": (flambeau.special.i1e, lambda x: x * 6),
    "modified_bessel_i0": (flambeau.special.modified_bessel_i0, lambda x: x * 6),
    "modified_bessel_i1": (flambeau.special.modified_bessel_i1, lambda x: x * 6),
    # bessel_functions.h: the series, Hankel and trapezoid ranges
    "bessel_j0": (flambeau.special.bessel_j0, lambda x: x * 5),
    "bessel_j1": (flambeau.special.bessel_j1, lambda x: x * 5),
    "bessel_y0": (flambeau.special.bessel_y0, lambda x: x.abs() * 5),
    "bessel_y1": (flambeau.special.bessel_y1, lambda x: x.abs() * 5),
    "modified_bessel_k0": (flambeau.special.modified_bessel_k0, lambda x: x.abs() * 4),
    "modified_bessel_k1": (flambeau.special.modified_bessel_k1, lambda x: x.abs() * 4),
    "scaled_modified_bessel_k0": (
        flambeau.special.scaled_modified_bessel_k0,
        lambda x: x.abs() * 4,
    ),
    "scaled_modified_bessel_k1": (
        flambeau.special.scaled_modified_bessel_k1,
        lambda x: x.abs() * 4,
    ),
    "airy_ai": (flambeau.special.airy_ai, lambda x: x * 4),
    "polygamma1": (lambda x: flambeau.polygamma(1, x), lambda x: x.abs() + 0.1),
    "polygamma3": (lambda x: flambeau.polygamma(3, x), lambda x: x.abs() + 0.1),
}


def _special_tolerance(dtype):
    """Computed in double with the same algorithm; float64 differs by CUDA's libm (the
    Bessel and Airy functions, bessel_functions.h's algorithms, by under 1e-13 on these
    ranges: the CPU's libstdc++ error)."""
    return (1e-10, 1e-12) if dtype == flambeau.float64 else (None, None)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", sorted(SPECIAL_UNARY))
def test_special_unary(name, dtype):
    fn, domain = SPECIAL_UNARY[name]
    x = domain(sample(flambeau.float64, scale=2.0)).to(dtype)
    for _, view in views(x):
        assert_close(on_device(fn, view), fn(view), *_special_tolerance(dtype))


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


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials(name, dtype):
    fn = getattr(flambeau.special, name)
    x = flambeau.tanh(sample(flambeau.float64, (6, 7))).to(dtype) * 1.2
    n = flambeau.tensor([0.0, 1.0, 2.0, 3.7, 6.0, 12.0, 70.0], dtype=dtype)
    for _, view in views(x):
        got = on_device(fn, view, n[: view.shape[-1]])
        assert_close(got, fn(view, n[: view.shape[-1]]), *_special_tolerance(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["igamma", "igammac", "zeta"])
def test_special_binary(op, dtype):
    fn = flambeau.special.zeta if op == "zeta" else getattr(flambeau, op)
    a = sample(flambeau.float64, scale=3.0).abs() + (1.1 if op == "zeta" else 0.05)
    b = sample(flambeau.float64, (5, 3), seed=2, scale=3.0).abs() + 0.05
    a, b = a.to(dtype), b.to(dtype)
    for _, view in views(a):
        other = b if view.shape[-2:] == (5, 3) else b[0, : view.shape[-1]]
        assert_close(on_device(fn, view, other), fn(view, other), *_special_tolerance(dtype))


# ---- the shared operator table ----------------------------------------------------------

# The operators (table rows) of this group whose every real-dtype kernel is registered.
ELEMENTWISE_MATH_OPS = {
    "elu",
    "gelu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "log_sigmoid",
    "mish",
    "silu",
    "softplus",
    "softshrink",
    "threshold",
    "logit",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "atan2",
    "copysign",
    "fmod",
    "remainder",
    "hypot",
    "logaddexp",
    "logaddexp2",
    "xlogy",
    "special_xlog1py",
    "nextafter",
    "heaviside",
    "gcd",
    "lcm",
    "ldexp",
    "angle",
    "conj_physical",
    "sgn",
    "isreal",
    "signbit",
    "deg2rad",
    "rad2deg",
    "digamma",
    "lgamma",
    "erfinv",
    "sinc",
    "nan_to_num",
    "frexp",
    "mvlgamma",
    "polygamma",
    "igamma",
    "igammac",
    "special_entr",
    "special_erfcx",
    "special_ndtr",
    "special_ndtri",
    "special_log_ndtr",
    "special_zeta",
    "special_spherical_bessel_j0",
    "i0",
    "special_i0e",
    "special_i1",
    "special_i1e",
    "special_modified_bessel_i0",
    "special_modified_bessel_i1",
    "special_bessel_j0",
    "special_bessel_j1",
    "special_bessel_y0",
    "special_bessel_y1",
    "special_modified_bessel_k0",
    "special_modified_bessel_k1",
    "special_scaled_modified_bessel_k0",
    "special_scaled_modified_bessel_k1",
    "special_airy_ai",
    "special_chebyshev_polynomial_t",
    "special_hermite_polynomial_h",
    "special_laguerre_polynomial_l",
    "special_legendre_polynomial_p",
}


def _table_rows():
    try:
        from flambeau_testing.run_on_device import select_rows
    except ImportError:
        return []
    # Complex dtypes have no CUDA kernels yet (README).
    return [op for op in select_rows(None, ELEMENTWISE_MATH_OPS) if "complex" not in op.id]


@pytest.mark.parametrize("row", _table_rows(), ids=lambda op: op.id)
def test_table_row_matches_the_cpu(row):
    from flambeau_testing import check_on_device

    report = check_on_device(row, DEVICE)
    assert report.ok, report.mismatches[:5]
