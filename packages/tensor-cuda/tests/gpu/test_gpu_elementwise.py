"""Comparisons, logical operators, where, the min/max family, clamp, pow, the unary
functions and the value tests (isnan... isclose) on CUDA against flambeau's CPU kernels:
every dtype they take, dense, transposed, sliced and broadcast operands, Python-number
operands, NaN and infinities."""

from __future__ import annotations

import pytest
from samples import DEVICE, FLOATS, INTS, REALS, UNARY_FLOAT, assert_close, sample, views

import flambeau

COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]


def on_device(fn, *args, **kwargs):
    """fn over args moved to the device (tensors only)."""
    moved = [a.to(DEVICE) if isinstance(a, flambeau.Tensor) else a for a in args]
    return fn(*moved, **kwargs)


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
@pytest.mark.parametrize("op", COMPARISONS + LOGICAL)
def test_comparisons_and_logical_ops(op, dtype):
    fn = getattr(flambeau, op)
    a = sample(dtype, nan=True)
    b = sample(dtype, (5, 1), seed=2, nan=True)
    b[0] = a[0, 0, 0]  # some equal elements
    for name, view in views(a):
        other = b if view.shape[-2:] == (5, 3) else sample(dtype, view.shape[-1:], seed=3)
        got = on_device(fn, view, other)
        assert_close(got, fn(view, other)), name
    assert_close(on_device(fn, a, 1), fn(a, 1))


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
def test_logical_not(dtype):
    a = sample(dtype, nan=True)
    for _, view in views(a):
        assert_close(on_device(flambeau.logical_not, view), flambeau.logical_not(view))


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
def test_where_broadcasts_condition_and_operands(dtype):
    cond = sample(flambeau.bool, (7, 1, 3), seed=5)
    a = sample(dtype)
    b = sample(dtype, (5, 3), seed=6)
    assert_close(on_device(flambeau.where, cond, a, b), flambeau.where(cond, a, b))
    at = a.transpose(0, 2)  # (3, 5, 7)
    ct = sample(flambeau.bool, (3, 5, 7), seed=7)
    assert_close(on_device(flambeau.where, ct, at, 0), flambeau.where(ct, at, 0))


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
@pytest.mark.parametrize("op", ["maximum", "minimum", "fmax", "fmin", "max", "min"])
def test_min_max_family(op, dtype):
    fn = getattr(flambeau, op)
    a = sample(dtype, nan=True)
    b = sample(dtype, (5, 1), seed=2, nan=True)
    for _, view in views(a):
        other = b if view.shape[-2:] == (5, 3) else sample(dtype, view.shape[-1:], seed=3)
        assert_close(on_device(fn, view, other), fn(view, other))


@pytest.mark.parametrize("dtype", REALS)
def test_clamp_forms(dtype):
    x = sample(dtype, nan=True)
    lo = sample(dtype, (5, 1), seed=8, scale=1.0)
    hi = lo + 3 if dtype != flambeau.uint8 else lo + 2
    assert_close(on_device(flambeau.clamp, x, lo, hi), flambeau.clamp(x, lo, hi))
    assert_close(on_device(flambeau.clamp, x, min=1), flambeau.clamp(x, min=1))
    assert_close(on_device(flambeau.clamp, x, max=2), flambeau.clamp(x, max=2))
    assert_close(on_device(flambeau.clamp, x, 0, 3), flambeau.clamp(x, 0, 3))
    assert_close(on_device(flambeau.clamp_min, x, lo), flambeau.clamp_min(x, lo))
    assert_close(
        on_device(flambeau.clamp_max, x.transpose(0, 2), 1),
        flambeau.clamp_max(x.transpose(0, 2), 1),
    )


@pytest.mark.parametrize("dtype", FLOATS)
def test_pow_floats(dtype):
    base = sample(dtype).abs() + 0.25
    exponent = sample(dtype, (5, 3), seed=4, scale=1.0)
    for _, view in views(base):
        e = exponent if view.shape[-2:] == (5, 3) else exponent[0, : view.shape[-1]]
        assert_close(on_device(flambeau.pow, view, e), flambeau.pow(view, e))
    negative = sample(dtype)  # NaN for fractional exponents of negative bases, as the CPU
    assert_close(on_device(flambeau.pow, negative, 0.5), flambeau.pow(negative, 0.5))
    assert_close(on_device(flambeau.pow, negative, 3), flambeau.pow(negative, 3))


@pytest.mark.parametrize("dtype", INTS)
def test_pow_integers_wrap_as_the_cpu(dtype):
    base = sample(dtype)
    exponent = sample(dtype, (5, 3), seed=4, scale=2.0).abs()
    assert_close(on_device(flambeau.pow, base, exponent), flambeau.pow(base, exponent))
    assert_close(on_device(flambeau.pow, base, 3), flambeau.pow(base, 3))
    if dtype.is_signed:  # negative exponents: 1, -1 or 0
        small = flambeau.tensor([-2, -1, 0, 1, 2], dtype=dtype)
        neg = flambeau.tensor([-1, -2, -3, -1, -2], dtype=dtype)
        assert_close(on_device(flambeau.pow, small, neg), flambeau.pow(small, neg))


def test_pow_bool_with_a_python_bool():
    x = sample(flambeau.bool)
    assert_close(on_device(flambeau.pow, x, False), flambeau.pow(x, False))


# Unary float functions with inputs inside their domains.
def _domain(op, x):
    if op in ("asin", "acos", "atanh"):
        return flambeau.tanh(x) * 0.99
    if op == "acosh":
        return x.abs() + 1
    if op in ("log", "log2", "log10", "sqrt", "rsqrt", "reciprocal"):
        return x.abs() + 0.1
    if op == "log1p":
        return x.abs() - 0.5
    return x


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", UNARY_FLOAT)
def test_unary_float_functions(op, dtype):
    fn = getattr(flambeau, op)
    x = _domain(op, sample(flambeau.float64, scale=2.0)).to(dtype)
    for _, view in views(x):
        # CUDA's float functions are within a few ulp of glibc's: 1e-5 for float32.
        rtol = 1e-5 if dtype == flambeau.float32 else None
        assert_close(on_device(fn, view), fn(view), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("op", ["floor", "ceil", "trunc", "round", "sign", "neg", "abs"])
def test_rounding_and_sign_are_exact(op, dtype):
    fn = getattr(flambeau, op)
    x = sample(dtype, nan=True) * (1 if not dtype.is_floating_point else 1.37)
    for _, view in views(x):
        assert_close(on_device(fn, view), fn(view), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("decimals", [2, -1])
def test_round_with_decimals(dtype, decimals):
    x = sample(dtype, scale=40.0)
    got = on_device(flambeau.round, x, decimals=decimals)
    assert_close(got, flambeau.round(x, decimals=decimals), rtol=0, atol=0)


def test_half_to_even():
    x = flambeau.tensor([0.5, 1.5, 2.5, -0.5, -2.5, 3.5])
    assert on_device(flambeau.round, x).cpu().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 4.0]


def _with_specials(dtype):
    """A sample with NaN, +inf, -inf and zeros in floating dtypes."""
    x = sample(dtype, (6, 7))
    if dtype.is_floating_point:
        x[0, :4] = flambeau.tensor([float("nan"), float("inf"), float("-inf"), 0.0])
        x[3, 5] = float("-inf")
    return x


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
@pytest.mark.parametrize("op", ["isnan", "isinf", "isfinite", "isposinf", "isneginf"])
def test_value_tests(op, dtype):
    fn = getattr(flambeau, op)
    x = _with_specials(dtype)
    for _, view in views(x):
        assert_close(on_device(fn, view), fn(view))


@pytest.mark.parametrize("dtype", REALS + [flambeau.bool])
@pytest.mark.parametrize(
    "rtol, atol, equal_nan", [(1e-5, 1e-8, False), (0.1, 0.5, True), (0, 0, True)]
)
def test_isclose(dtype, rtol, atol, equal_nan):
    a = _with_specials(dtype)
    b = a.clone()
    if dtype.is_floating_point:
        b = b + sample(dtype, (6, 7), seed=4, scale=0.2)  # some close, some not
    elif dtype != flambeau.bool:
        b = b + sample(dtype, (6, 7), seed=4, scale=0.5).abs()
    want = flambeau.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    got = flambeau.isclose(a.to(DEVICE), b.to(DEVICE), rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert_close(got, want)
    at, bt = a.t(), b.t()
    got = flambeau.isclose(at.to(DEVICE), bt.to(DEVICE), rtol=rtol, atol=atol, equal_nan=equal_nan)
    assert_close(got, flambeau.isclose(at, bt, rtol=rtol, atol=atol, equal_nan=equal_nan))
