"""Focused tests of the elementwise operators: out= and in-place forms, Python
operators, type promotion, errors, and special values on the vectorized paths."""

import math
import operator

import numpy as np
import pytest

import flambeau


def T(x, dtype=None):
    # A copy: from_numpy shares memory, and in-place tests must not touch the inputs.
    return flambeau.from_numpy(np.array(x, dtype=dtype, copy=True, order="C"))


def N(t):
    return t.numpy()


# ---------------------------------------------------------------- promotion


@pytest.mark.parametrize(
    "fn,a,b,dtype",
    [
        (flambeau.div, np.int64, np.int64, flambeau.float32),
        (flambeau.true_divide, np.int32, np.int32, flambeau.float32),
        (flambeau.add, np.int32, np.float64, flambeau.float64),
        (flambeau.mul, np.uint8, np.int8, flambeau.int16),
        (flambeau.floor_divide, np.int32, np.int64, flambeau.int64),
        (flambeau.remainder, np.int16, np.int16, flambeau.int16),
        (flambeau.atan2, np.int32, np.int32, flambeau.float32),
        (flambeau.eq, np.int32, np.float32, flambeau.bool),
        (flambeau.maximum, np.bool_, np.int8, flambeau.int8),
        (flambeau.bitwise_and, np.bool_, np.bool_, flambeau.bool),
    ],
)
def test_binary_result_dtype(fn, a, b, dtype):
    assert fn(T([1, 2], a), T([3, 4], b)).dtype == dtype


def test_python_scalars_promote_by_category():
    i = T([1, 2, 3], np.int32)
    f = T([1.0, 2.0], np.float32)
    assert (i + 1).dtype == flambeau.int32
    assert (i + 1.5).dtype == flambeau.float32
    assert (i / 2).dtype == flambeau.float32
    assert (i // 2).dtype == flambeau.int32
    assert (f * 2.0).dtype == flambeau.float32
    assert (i**2).dtype == flambeau.int32
    assert (2**i).dtype == flambeau.int32
    assert (i**0.5).dtype == flambeau.float32
    assert (f + 1j).dtype == flambeau.complex64


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "sigmoid", "erf", "reciprocal"])
def test_float_functions_promote_ints(name):
    x = T([1, 2, 3], np.int64)
    r = getattr(flambeau, name)(x)
    assert r.dtype == flambeau.float32
    assert getattr(flambeau, name)(T([True, False])).dtype == flambeau.float32


def test_rounding_keeps_integers():
    x = T([1, -2, 3], np.int32)
    for name in ["floor", "ceil", "trunc", "round"]:
        r = getattr(flambeau, name)(x)
        assert r.dtype == flambeau.int32
        np.testing.assert_array_equal(N(r), [1, -2, 3])


def test_abs_of_complex_is_real():
    z = T(np.array([3 + 4j, -1j], dtype=np.complex64))
    r = flambeau.abs(z)
    assert r.dtype == flambeau.float32
    np.testing.assert_allclose(N(r), [5.0, 1.0])
    assert abs(z).dtype == flambeau.float32
    with pytest.raises(RuntimeError, match="abs"):
        z.abs_()


# ------------------------------------------------------------ out= and in-place


UNARY_INPLACE = [
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "neg",
    "abs",
    "floor",
    "round",
    "relu",
    "reciprocal",
    "square",
    "frac",
    "erfinv",
    "lgamma",
]


@pytest.mark.parametrize("name", UNARY_INPLACE)
def test_unary_inplace_and_out(name):
    x = np.linspace(0.1, 0.9, 12, dtype=np.float32).reshape(3, 4)
    expected = N(getattr(flambeau, name)(T(x)))
    t = T(x)
    r = getattr(t, name + "_")()
    assert r is t
    np.testing.assert_allclose(N(t), expected, rtol=1e-6)
    if name != "relu":
        out = flambeau.empty((0,), dtype=flambeau.float32)
        res = getattr(flambeau, name)(T(x), out=out)
        assert res is out
        assert tuple(out.shape) == (3, 4)
        np.testing.assert_allclose(N(out), expected, rtol=1e-6)


def test_inplace_noncontiguous_view():
    arr = np.arange(12, dtype=np.float64).reshape(3, 4)
    view = flambeau.from_numpy(arr[:, ::2])  # shares arr's memory, strided
    view.exp_()
    expected = np.arange(12, dtype=np.float64).reshape(3, 4)
    expected[:, ::2] = np.exp(expected[:, ::2])
    np.testing.assert_allclose(arr, expected)


def test_inplace_cannot_change_int_to_float():
    x = T([1, 2], np.int64)
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.exp_()
    with pytest.raises(RuntimeError, match="can't be cast"):
        x /= 2
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.div_(2)


def test_inplace_shape_must_match():
    x = T([1.0, 2.0])
    with pytest.raises(RuntimeError, match="shape"):
        x.add_(T([[1.0], [2.0]]))


def test_out_with_other_dtype_converts():
    out = flambeau.empty((3,), dtype=flambeau.float64)
    flambeau.add(T([1, 2, 3], np.int32), 1, out=out)
    np.testing.assert_array_equal(N(out), [2.0, 3.0, 4.0])
    out = flambeau.empty((2,), dtype=flambeau.float32)
    flambeau.lt(T([1.0, 3.0]), 2.0, out=out)
    np.testing.assert_array_equal(N(out), [1.0, 0.0])


def test_comparison_inplace_keeps_dtype():
    x = T([1.0, 5.0, 3.0])
    x.gt_(2.0)
    assert x.dtype == flambeau.float64
    np.testing.assert_array_equal(N(x), [0.0, 1.0, 1.0])


def test_logical_out_and_inplace():
    a = T([0.0, 1.0, 2.0])
    a.logical_not_()
    np.testing.assert_array_equal(N(a), [1.0, 0.0, 0.0])
    out = flambeau.empty((3,), dtype=flambeau.int32)
    flambeau.logical_or(T([0, 0, 3]), T([0, 1, 0]), out=out)
    np.testing.assert_array_equal(N(out), [0, 1, 1])


# -------------------------------------------------------------- Python operators


def test_python_operators_match_numpy():
    a_np = np.array([[1.5, -2.0, 3.0], [4.0, -5.5, 6.0]])
    b_np = np.array([2.0, -3.0, 0.5])
    a, b = T(a_np), T(b_np)
    for op in [
        operator.add,
        operator.sub,
        operator.mul,
        operator.truediv,
        operator.floordiv,
        operator.mod,
        operator.pow,
        operator.lt,
        operator.le,
        operator.gt,
        operator.ge,
        operator.eq,
        operator.ne,
    ]:
        expected = op(np.abs(a_np), b_np) if op is operator.pow else op(a_np, b_np)
        got = op(abs(a), b) if op is operator.pow else op(a, b)
        np.testing.assert_allclose(N(got), expected, err_msg=op.__name__)
        np.testing.assert_allclose(N(op(a, 2.0)), op(a_np, 2.0), err_msg=op.__name__)
        if op is not operator.pow:
            np.testing.assert_allclose(N(op(3.0, a)), op(3.0, a_np), err_msg="r" + op.__name__)
    np.testing.assert_allclose(N(-a), -a_np)
    np.testing.assert_allclose(N(+a), a_np)
    np.testing.assert_allclose(N(abs(a)), np.abs(a_np))
    np.testing.assert_allclose(N(2.0**b), 2.0**b_np)


def test_reflected_and_inplace_operators():
    a = T([1.0, 2.0, 4.0])
    np.testing.assert_allclose(N(1 / a), [1.0, 0.5, 0.25])
    np.testing.assert_allclose(N(7 // a), [7.0, 3.0, 1.0])
    np.testing.assert_allclose(N(7 % a), [0.0, 1.0, 3.0])
    np.testing.assert_allclose(N(10 - a), [9.0, 8.0, 6.0])
    a += 1
    a *= 2
    a -= 1
    a /= 3
    a **= 2
    a //= 1
    a %= 2
    expected = (((np.array([1.0, 2.0, 4.0]) + 1) * 2 - 1) / 3) ** 2 // 1 % 2
    np.testing.assert_allclose(N(a), expected)


def test_bitwise_operators():
    a_np = np.array([0b1100, 0b1010, -7], dtype=np.int32)
    b_np = np.array([0b1010, 0b0110, 3], dtype=np.int32)
    a, b = T(a_np), T(b_np)
    np.testing.assert_array_equal(N(a & b), a_np & b_np)
    np.testing.assert_array_equal(N(a | b), a_np | b_np)
    np.testing.assert_array_equal(N(a ^ b), a_np ^ b_np)
    np.testing.assert_array_equal(N(~a), ~a_np)
    np.testing.assert_array_equal(N(a << 2), a_np << 2)
    np.testing.assert_array_equal(N(a >> 1), a_np >> 1)
    np.testing.assert_array_equal(N(1 << b), 1 << b_np)
    np.testing.assert_array_equal(N(64 >> b), 64 >> b_np)
    np.testing.assert_array_equal(N(3 & a), 3 & a_np)
    c = T(a_np)
    c &= b
    c |= 1
    c ^= 2
    c <<= 1
    c >>= 1
    np.testing.assert_array_equal(N(c), ((((a_np & b_np) | 1) ^ 2) << 1) >> 1)
    m = T([True, False])
    np.testing.assert_array_equal(N(~m), [False, True])
    np.testing.assert_array_equal(N(m & True), [True, False])


def test_shift_out_of_range():
    x = T([1, -8, 100], np.int32)
    np.testing.assert_array_equal(N(flambeau.bitwise_left_shift(x, 40)), [0, 0, 0])
    np.testing.assert_array_equal(N(flambeau.bitwise_right_shift(x, 40)), [0, -1, 0])
    np.testing.assert_array_equal(N(flambeau.bitwise_right_shift(x, -1)), [0, -1, 0])


def test_eq_with_non_tensor():
    t = T([1.0, 2.0])
    assert (t is None) is False
    assert (t is not None) is True
    assert (t == "a") is False
    with pytest.raises(TypeError):
        t < None  # noqa: B015
    with pytest.raises(TypeError):
        t + "a"


def test_tensors_stay_hashable():
    a, b = T([1.0]), T([1.0])
    d = {a: 1, b: 2}
    assert d[a] == 1 and d[b] == 2
    assert hash(a) == hash(a)


# ------------------------------------------------------------------- errors


def test_integer_division_by_zero():
    x = T([1, 2], np.int64)
    for fn in [
        lambda: x // 0,
        lambda: x % 0,
        lambda: flambeau.fmod(x, 0),
        lambda: flambeau.div(x, T([1, 0]), rounding_mode="trunc"),
    ]:
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            fn()
    np.testing.assert_array_equal(N(x / 0), [np.inf, np.inf])


def test_integer_min_by_minus_one_does_not_crash():
    x = T([np.iinfo(np.int64).min, 7], np.int64)
    assert N(x // -1)[1] == -7
    np.testing.assert_array_equal(N(x % -1), [0, 0])
    np.testing.assert_array_equal(N(flambeau.fmod(x, -1)), [0, 0])


def test_div_rounding_mode_errors():
    with pytest.raises(ValueError, match="rounding_mode"):
        flambeau.div(T([1.0]), 2, rounding_mode="round")


def test_pow_negative_integer_exponent():
    x = T([1, 2, 3], np.int64)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        x**-1
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        flambeau.pow(x, -2)
    # A tensor exponent follows integer arithmetic instead.
    np.testing.assert_array_equal(N(flambeau.pow(T([1, -1, 2]), T([-1, -1, -1]))), [1, -1, 0])
    np.testing.assert_allclose(N(T([2.0, 4.0]) ** -1), [0.5, 0.25])


def test_bool_restrictions():
    m = T([True, False])
    with pytest.raises(RuntimeError, match="bool"):
        _ = -m
    with pytest.raises(RuntimeError, match="bool"):
        _ = +m
    with pytest.raises(RuntimeError, match="Subtraction"):
        m - m
    with pytest.raises(RuntimeError):
        flambeau.bitwise_and(T([1.0]), T([1.0]))
    with pytest.raises(RuntimeError):
        flambeau.bitwise_left_shift(T([1.0]), 1)
    np.testing.assert_array_equal(N(flambeau.square(m)), [1, 0])
    assert flambeau.square(m).dtype == flambeau.int64


def test_complex_restrictions():
    z = T(np.array([1 + 1j]))
    for fn in [flambeau.sign, flambeau.lt, flambeau.clamp, flambeau.maximum]:
        with pytest.raises(RuntimeError):
            fn(z, z) if fn in (flambeau.lt, flambeau.maximum) else (
                fn(z, 0, 1) if fn is flambeau.clamp else fn(z)
            )
    with pytest.raises(RuntimeError):
        flambeau.isposinf(z)


def test_clamp_errors_and_forms():
    x = T([-2.0, 0.5, 3.0])
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        flambeau.clamp(x)
    np.testing.assert_allclose(N(x.clamp(min=0)), [0.0, 0.5, 3.0])
    np.testing.assert_allclose(N(x.clamp(max=1)), [-2.0, 0.5, 1.0])
    np.testing.assert_allclose(N(x.clip(-1, 1)), [-1.0, 0.5, 1.0])
    x.clamp_(T([-1.0, 1.0, 0.0]), 2)
    np.testing.assert_allclose(N(x), [-1.0, 1.0, 2.0])
    i = T([1, 5], np.int32)
    assert flambeau.clamp(i, 0.5, 2).dtype == flambeau.float32
    nan = T([np.nan, 1.0])
    assert np.isnan(N(flambeau.clamp(nan, 0, 2))[0])


def test_broadcast_error_names_op():
    with pytest.raises(RuntimeError, match="mul"):
        T([1.0, 2.0]) * T([1.0, 2.0, 3.0])


def test_lerp_dtype_check_and_addcdiv_ints():
    with pytest.raises(RuntimeError, match="lerp"):
        flambeau.lerp(T([1.0], np.float32), T([2.0], np.float64), 0.5)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        flambeau.addcdiv(T([1.0]), T([1]), T([2]))


def test_where_errors_and_method():
    c = T([True, False, True])
    a = T([1.0, 2.0, 3.0])
    np.testing.assert_allclose(N(a.where(c, 0.0)), [1.0, 0.0, 3.0])
    np.testing.assert_allclose(N(flambeau.where(c, a, T([9], np.int64))), [1.0, 9.0, 3.0])
    assert flambeau.where(c, T([1], np.int32), 2.5).dtype == flambeau.float32
    with pytest.raises(RuntimeError, match="condition"):
        flambeau.where(T([1.0, 0.0, 1.0]), a, a)
    out = flambeau.empty((3,), dtype=flambeau.float64)
    assert flambeau.where(c, a, -a, out=out) is out
    np.testing.assert_allclose(N(out), [1.0, -2.0, 3.0])


def test_isclose_allclose_equal():
    a = T([1.0, np.nan, np.inf])
    b = T([1.0 + 1e-9, np.nan, np.inf])
    np.testing.assert_array_equal(N(flambeau.isclose(a, b)), [True, False, True])
    np.testing.assert_array_equal(N(a.isclose(b, equal_nan=True)), [True, True, True])
    assert flambeau.allclose(a, b, equal_nan=True) is True
    assert flambeau.allclose(a, b) is False
    assert flambeau.equal(T([1, 2]), T([1, 2])) is True
    assert flambeau.equal(T([1, 2]), T([1, 3])) is False
    assert flambeau.equal(T([1, 2]), T([[1, 2]])) is False
    with pytest.raises(RuntimeError, match="same dtype"):
        flambeau.isclose(T([1.0], np.float32), T([1.0], np.float64))
    with pytest.raises(RuntimeError, match="rtol"):
        flambeau.isclose(a, b, rtol=-1.0)


def test_nan_to_num_defaults():
    x = T(np.array([np.nan, np.inf, -np.inf], dtype=np.float32))
    r = N(flambeau.nan_to_num(x))
    assert r[0] == 0 and r[1] == np.finfo(np.float32).max and r[2] == np.finfo(np.float32).min
    h = flambeau.nan_to_num(T(np.array([np.inf, -np.inf], dtype=np.float16)))
    np.testing.assert_array_equal(N(h), [65504.0, -65504.0])
    x.nan_to_num_(nan=1.0, posinf=2.0, neginf=3.0)
    np.testing.assert_array_equal(N(x), [1.0, 2.0, 3.0])


# ---------------------------------------------------- vectorized paths, values


SPECIAL = np.array(
    [
        np.nan,
        np.inf,
        -np.inf,
        0.0,
        -0.0,
        1e-30,
        -1e-30,
        88.0,
        89.0,
        -104.0,
        710.0,
        -750.0,
        1e30,
        -1e30,
        0.5,
        -0.5,
        1.0,
        -1.0,
        3.0,
    ],
    dtype=np.float64,
)
VEC_FUNCS = {
    "exp": np.exp,
    "exp2": np.exp2,
    "expm1": np.expm1,
    "log": np.log,
    "log1p": np.log1p,
    "log2": np.log2,
    "log10": np.log10,
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": np.vectorize(math.erf),
    "erfc": np.vectorize(math.erfc),
    "relu": lambda x: np.where(np.isnan(x), x, np.maximum(x, 0)),
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(VEC_FUNCS))
def test_vectorized_special_values(name, dtype):
    # Long enough for the vector loop (and its tail), with specials everywhere.
    rng = np.random.default_rng(1)
    x = np.concatenate([SPECIAL, rng.uniform(-5, 5, 100), SPECIAL[::-1]]).astype(dtype)
    with np.errstate(all="ignore"):
        expected = VEC_FUNCS[name](x.astype(np.float64)).astype(dtype)
    got = N(getattr(flambeau, name)(T(x)))
    assert got.dtype == dtype
    np.testing.assert_allclose(
        got,
        expected,
        rtol=1e-5 if dtype == np.float32 else 1e-12,
        atol=1e-30,
        equal_nan=True,
        err_msg=name,
    )
    # The strided path computes the same values.
    strided_in = flambeau.from_numpy(np.repeat(x, 2)[::2])
    assert not strided_in.is_contiguous()
    strided = N(getattr(flambeau, name)(strided_in))
    np.testing.assert_allclose(
        strided,
        expected,
        rtol=1e-5 if dtype == np.float32 else 1e-12,
        atol=1e-30,
        equal_nan=True,
        err_msg=name,
    )


def test_large_parallel_inputs():
    rng = np.random.default_rng(2)
    x = rng.uniform(-10, 10, 300_001).astype(np.float32)
    y = rng.uniform(-10, 10, 300_001).astype(np.float32)
    np.testing.assert_allclose(N(flambeau.exp(T(x))), np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(N(T(x) * T(y) + T(x)), x * y + x, rtol=1e-6)
    np.testing.assert_array_equal(N(flambeau.relu(T(x))), np.maximum(x, 0))


def test_sign_and_sgn_values():
    x = T([-2.0, 0.0, 3.0, -0.0])
    np.testing.assert_array_equal(N(flambeau.sign(x)), [-1.0, 0.0, 1.0, 0.0])
    z = T(np.array([3 + 4j, 0j], dtype=np.complex128))
    np.testing.assert_allclose(N(flambeau.sgn(z)), [0.6 + 0.8j, 0])


def test_floor_divide_and_remainder_signs():
    a = np.array([7.0, -7.0, 7.0, -7.0, 0.0])
    b = np.array([2.0, 2.0, -2.0, -2.0, -3.0])
    np.testing.assert_array_equal(N(T(a) // T(b)), a // b)
    np.testing.assert_array_equal(N(T(a) % T(b)), np.remainder(a, b))
    np.testing.assert_array_equal(N(flambeau.fmod(T(a), T(b))), np.fmod(a, b))
    ai, bi = a.astype(np.int64), b.astype(np.int64)
    np.testing.assert_array_equal(N(T(ai) // T(bi)), ai // bi)
    np.testing.assert_array_equal(N(T(ai) % T(bi)), ai % bi)
    np.testing.assert_array_equal(
        N(flambeau.div(T(ai), T(bi), rounding_mode="trunc")), np.trunc(a / b).astype(np.int64)
    )


def test_dtype_restrictions_match_pytorch():
    i = T([1, 2], np.int32)
    m = T([True, False])
    with pytest.raises(RuntimeError, match="round"):
        flambeau.round(i, decimals=1)
    np.testing.assert_array_equal(N(flambeau.round(i)), [1, 2])
    with pytest.raises(RuntimeError, match="lerp"):
        flambeau.lerp(i, i, 0.5)
    with pytest.raises(RuntimeError, match="addcmul"):
        flambeau.addcmul(m, m, m)
    with pytest.raises(RuntimeError, match="logaddexp"):
        flambeau.logaddexp(i, i)
    with pytest.raises(RuntimeError, match="frac"):
        flambeau.frac(i)


def test_bool_subtraction_and_power():
    m = T([True, False])
    with pytest.raises(RuntimeError, match="Subtraction"):
        m - 1
    with pytest.raises(RuntimeError, match="Subtraction"):
        T([1.0]) - True
    np.testing.assert_array_equal(N(m**True), [True, False])
    np.testing.assert_array_equal(N(m**False), [True, True])
    assert (m**True).dtype == flambeau.bool


def test_unsigned_division_by_255():
    # -1 as a uint8 divisor is 255, not a negation.
    x = T([7, 255, 0], np.uint8)
    np.testing.assert_array_equal(N(x // -1), [0, 1, 0])
    np.testing.assert_array_equal(N(x % -1), [7, 0, 0])


def test_nan_to_num_complex():
    z = T(np.array([complex(np.nan, np.inf), complex(-np.inf, 1.0)], dtype=np.complex64))
    r = N(flambeau.nan_to_num(z, posinf=5.0))
    np.testing.assert_array_equal(r, [complex(0, 5), complex(np.finfo(np.float32).min, 1.0)])


def test_elementwise_result_keeps_the_memory_order_of_a_dense_input():
    # As PyTorch: a transposed input gives a transposed result, so every operand is
    # walked contiguously; inputs that are not dense (slices) give a contiguous one.
    x, y = np.arange(12.0).reshape(3, 4), np.arange(12.0, 24.0).reshape(3, 4)
    a, b = flambeau.from_numpy(x).t(), flambeau.from_numpy(y).t()
    r = a + b
    assert r.stride() == (1, 4) and not r.is_contiguous()
    np.testing.assert_array_equal(r.numpy(), x.T + y.T)
    assert (a * 2).stride() == (1, 4)
    assert flambeau.exp(a).stride() == (1, 4)
    c = flambeau.from_numpy(np.arange(24.0).reshape(4, 6))[:, ::2]  # not dense
    assert (c + 1).is_contiguous()
    p = flambeau.from_numpy(np.arange(24.0).reshape(2, 3, 4)).permute(2, 0, 1)
    assert (p - 1).stride() == p.stride()
    out = flambeau.empty(4, 3)
    flambeau.add(a, b, out=out)
    assert out.is_contiguous()
    np.testing.assert_array_equal(out.numpy(), x.T + y.T)


@pytest.mark.parametrize("name", ["sin", "cos"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sin_and_cos_stay_within_unit_bounds(name, dtype):
    # The vectorized libm can round one ulp past 1 (sinf(777.5442f) was -1.0000001f).
    x = np.random.default_rng(7).uniform(-1e4, 1e4, 1 << 20).astype(dtype)
    x[:3] = [777.5442, np.nan, np.inf]
    out = getattr(flambeau, name)(flambeau.from_numpy(x)).numpy()
    finite = np.isfinite(x)
    assert np.all(np.abs(out[finite]) <= 1)
    assert np.isnan(out[~finite]).all()
    np.testing.assert_allclose(out[finite], getattr(np, name)(x[finite].astype(np.float64)),
                               atol=4 * np.finfo(dtype).eps)  # fmt: skip
