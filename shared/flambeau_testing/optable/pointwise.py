"""Rows for elementwise arithmetic and unary operators."""

import math

import numpy as np

import flambeau

from . import (
    ALL_REAL,
    COMPLEX,
    FLOATS,
    OpTest,
    Sample,
    binary_samples,
    make,
    scipy_special,
    unary_samples,
)

FLOAT_ALL = ("float16", "bfloat16", "float32", "float64")
SIGNED_INTS = ("int8", "int16", "int32", "int64")
INT_ALL = ("uint8", "int8", "int16", "int32", "int64")
# Integer inputs to float functions: the result is float32 while NumPy computes
# float64, so those rows compare with a float32 tolerance.
F32_TOL = {"rtol": 2e-5, "atol": 1e-5}


def f32(ref):
    """NumPy reference computing in float32 (flambeau's default float)."""

    def run(*args, **kw):
        conv = [
            a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind in "biu" else a
            for a in args
        ]
        return ref(*conv, **kw)

    return run


def scipy_ref(name):
    def run(a):
        special = scipy_special()
        return getattr(special, name)(a)

    return run


def vectorize(fn, out_dtype=None):
    def run(a):
        return np.vectorize(fn, otypes=[out_dtype or a.dtype])(a)

    return run


def nonzero_divisor(samples):
    """binary samples with zeros in the divisor replaced by 1 (integer division)."""
    for s in samples:
        a, b = s.args
        if isinstance(b, np.ndarray):
            b = np.where(b == 0, np.ones_like(b), b)
        elif b == 0:
            b = 1
        yield Sample((a, b), s.kwargs, s.note)


def unary_rows(name, ref, low=-3.0, high=3.0, complex_ok=False, int_ok=True, fn=None):
    """A float row, an integer row (promoted to float32) and optionally a complex row."""
    fn = fn or getattr(flambeau, name)

    def samples(d, rng):
        return unary_samples(d, rng, low, high)

    rows = [OpTest(name, fn, ref, samples, dtypes=FLOAT_ALL)]
    if int_ok:
        lo_i, hi_i = math.ceil(low), math.floor(high)
        rows.append(
            OpTest(
                name,
                fn,
                f32(ref),
                lambda d, rng: unary_samples(d, rng, lo_i, hi_i),
                dtypes=("uint8", "int32", "int64") if lo_i >= 0 else ("int8", "int32"),
                id=f"{name}_int",
                **F32_TOL,
            )
        )
    if complex_ok:
        rows.append(OpTest(name, fn, ref, samples, dtypes=COMPLEX, id=f"{name}_complex"))
    return rows


def polygamma_ref(n):
    def run(a):
        special = scipy_special()
        return special.polygamma(n, a).astype(a.dtype)

    return run


def polygamma_rows():
    """Orders 0..3 on positive, negative non-integer and pole inputs; integer
    inputs (float32 results); the method, in-place and out= forms."""
    rows = []
    for n in range(4):
        fn = lambda a, n=n: flambeau.polygamma(n, a)  # noqa: E731
        rows.append(
            OpTest(
                "polygamma",
                fn,
                polygamma_ref(n),
                lambda d, rng: unary_samples(d, rng, 0.5, 6.0),
                dtypes=FLOAT_ALL,
                id=f"polygamma_{n}",
            )
        )
        rows.append(
            OpTest(
                "polygamma",
                fn,
                polygamma_ref(n),
                lambda d, rng: (
                    Sample((np.array([-2.5, -0.3, -1.7, -3.2, 0.4, 1.5, 12.0, 150.0], dtype=d),)),
                ),
                dtypes=FLOATS,
                rtol=1e-7 if n else None,
                id=f"polygamma_{n}_negative",
            )
        )
        # Poles and infinities: +-inf as SciPy (signed by the order), NaN stays NaN.
        rows.append(
            OpTest(
                "polygamma",
                fn,
                polygamma_ref(n),
                lambda d, rng: (
                    Sample((np.array([0.0, -1.0, -2.0, -np.inf, np.inf, np.nan, 1.0], dtype=d),)),
                ),
                dtypes=("float16", "float32"),
                id=f"polygamma_{n}_poles",
            )
        )
    rows.append(
        OpTest(
            "polygamma",
            lambda a: flambeau.polygamma(1, a),
            f32(polygamma_ref(1)),
            lambda d, rng: unary_samples(d, rng, 1, 5),
            dtypes=("uint8", "int32", "int64", "bool"),
            id="polygamma_int",
            **F32_TOL,
        )
    )
    # The method, in-place and out= forms, on samples away from the poles.
    for n, fn, dtypes, ident in [
        (2, lambda a: a.polygamma(2), FLOATS, "polygamma_method"),
        (3, lambda a: a.clone().polygamma_(3), FLOAT_ALL, "polygamma_inplace"),
        (
            1,
            lambda a: flambeau.polygamma(
                1, a, out=flambeau.empty(0, dtype=a.dtype, device=a.device)
            ),
            ("float16", "float32"),
            "polygamma_out",
        ),
    ]:
        rows.append(
            OpTest(
                "polygamma",
                fn,
                polygamma_ref(n),
                lambda d, rng: unary_samples(d, rng, 0.5, 6.0),
                dtypes=dtypes,
                id=ident,
            )
        )
    return rows


def pow_samples(d, rng):
    if d in INT_ALL:

        def base(s, **kw):
            return make(s, d, rng, low=-3 if d != "uint8" else 0, high=3, **kw)

        def exp(s, **kw):
            return make(s, d, rng, low=0, high=3, **kw)
    else:

        def base(s, **kw):
            return make(s, d, rng, low=0.1, high=2.5, **kw)

        def exp(s, **kw):
            return make(s, d, rng, low=-2, high=2, **kw)

    yield Sample((base((5,)), exp((5,))))
    yield Sample((base((3, 4)), exp((4,))), note="broadcast")
    yield Sample((base(()), exp((3,))), note="0-dim")
    yield Sample((base((0, 3)), exp((3,))), note="empty")
    yield Sample((base((4, 3)).T, exp((3, 4))), note="transposed")
    yield Sample((base((2, 3)), 2), note="python int exponent")
    yield Sample((base((2, 3)), 3), note="python int exponent 3")


def rounding_samples(d, rng):
    yield from unary_samples(d, rng, -5, 5)
    if d not in INT_ALL:
        yield Sample(
            (
                np.array(
                    [0.5, 1.5, 2.5, -0.5, -1.5, -2.49, 2.51],
                    dtype=d if d != "bfloat16" else np.float32,
                ),
            ),
            note="halves",
        )


def nan_samples(d, rng):
    yield from unary_samples(d, rng)
    if d in FLOAT_ALL:
        dt = np.float32 if d == "bfloat16" else d
        yield Sample(
            (np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, 2.5], dtype=dt),), note="special values"
        )


def nan_binary_samples(d, rng):
    yield from binary_samples(d, rng, scalar=1)
    if d in FLOAT_ALL:
        dt = np.float32 if d == "bfloat16" else d
        a = np.array([np.nan, 1.0, np.nan, -np.inf, 2.0], dtype=dt)
        b = np.array([1.0, np.nan, np.nan, 3.0, np.inf], dtype=dt)
        yield Sample((a, b), note="nan")


def clamp_samples(d, rng):
    def m(s, **kw):
        return make(s, d, rng, **kw)

    def lo(s, **kw):
        return make(s, d, rng, low=-3, high=0, **kw)

    def hi(s, **kw):
        return make(s, d, rng, low=0, high=3, **kw)

    yield Sample((m((7,)), lo((7,)), hi((7,))))
    yield Sample((m((3, 4), noncontig=True), lo((4,)), hi((3, 1))), note="broadcast strided")
    yield Sample((m(()), lo(()), hi(())), note="0-dim")
    yield Sample((m((0, 2)), lo((2,)), hi((2,))), note="empty")
    yield Sample((m((4, 3)).T, -1, 2), note="python scalars")
    yield Sample((m((2, 5)), None, 1), note="max only")
    yield Sample((m((2, 5)), -1, None), note="min only")
    yield Sample((m((2, 5)), 2, -1), note="min > max")


def clamp_ref(a, lo, hi):
    r = a
    if lo is not None:
        r = np.maximum(r, lo)
    if hi is not None:
        r = np.minimum(r, hi)
    return r.astype(np.result_type(a, *[x for x in (lo, hi) if isinstance(x, np.ndarray)]))


def ternary_samples(d, rng, low=-3.0, high=3.0, third_low=None, third_high=None):
    def m(s, **kw):
        return make(s, d, rng, low=low, high=high, **kw)

    def t(s):
        return make(
            s,
            d,
            rng,
            low=third_low if third_low is not None else low,
            high=third_high if third_high is not None else high,
        )

    yield Sample((m((6,)), m((6,)), t((6,))))
    yield Sample((m((3, 4), noncontig=True), m((4,)), t((3, 1))), note="broadcast strided")
    yield Sample((m(()), m(()), t(())), note="0-dim")
    yield Sample((m((0, 3)), m((3,)), t((3,))), note="empty")
    yield Sample((m((4, 3)).T, m((3, 4)), t((3, 4))), note="transposed")


def lerp_samples(d, rng):
    yield from ternary_samples(d, rng, third_low=0.0, third_high=1.0)

    def m(s, **kw):
        return make(s, d, rng, **kw)

    yield Sample((m((2, 3)), m((2, 3)), 0.25), note="scalar weight")
    yield Sample((m((2, 3)), m((2, 3)), 0.75), note="scalar weight > 0.5")


def addc_samples(d, rng, nonzero=False):
    for s in ternary_samples(d, rng, third_low=0.5 if nonzero else -3.0, third_high=3.0):
        yield s
        yield Sample(s.args, {"value": 2}, note=s.note + " value=2")


def nan_to_num_samples(d, rng):
    yield from nan_samples(d, rng)
    if d in FLOAT_ALL:
        dt = np.float32 if d == "bfloat16" else d
        x = np.array([np.nan, np.inf, -np.inf, 1.5], dtype=dt)
        yield Sample((x,), {"nan": 2.0, "posinf": 100.0, "neginf": -50.0}, note="values")
        yield Sample((x,), {"posinf": 7.0}, note="posinf only")


def nan_to_num_ref(a, nan=0.0, posinf=None, neginf=None, dtype=None):
    if dtype == "bfloat16":  # the stored type's limits
        big = 3.3895313892515355e38
        posinf = big if posinf is None else posinf
        neginf = -big if neginf is None else neginf
    return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)


def sgn_ref(a):
    if np.iscomplexobj(a):
        mag = np.abs(a)
        return np.where(mag == 0, 0, a / np.where(mag == 0, 1, mag)).astype(a.dtype)
    return np.sign(a)


def rsqrt(a):
    return 1 / np.sqrt(a)


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


def logit_ref(a, eps=None):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    return np.log(a / (1 - a))


def logit_samples(d, rng):
    yield from unary_samples(d, rng, 0.05, 0.95)
    yield Sample((make((2, 4), d, rng, low=0.0, high=1.0),), {"eps": 0.2}, note="eps")


def logaddexp_complex_ref(a, b):
    """PyTorch's branch: the operand with the larger real part is factored out."""
    big = np.real(a) >= np.real(b)
    hi, lo = np.where(big, a, b), np.where(big, b, a)
    return hi + np.log(1 + np.exp(lo - hi))


def floordiv_float(a, b):
    return np.floor_divide(a, b)


TESTS = [
    OpTest(
        "add",
        lambda a, b, **kw: flambeau.add(a, b, **kw),
        np.add,
        lambda d, rng: binary_samples(d, rng, scalar=2),
        dtypes=ALL_REAL + ("bool",),
    ),
    OpTest(
        "add",
        lambda a, b: flambeau.add(a, b, alpha=2),
        lambda a, b: a + 2 * b,
        lambda d, rng: binary_samples(d, rng),
        dtypes=FLOATS + INT_ALL,
        id="add_alpha",
    ),
    OpTest(
        "add",
        flambeau.add,
        np.add,
        lambda d, rng: binary_samples(d, rng, scalar=1.5 - 2j),
        dtypes=COMPLEX,
        id="add_complex",
    ),
    OpTest(
        "sub",
        flambeau.sub,
        np.subtract,
        lambda d, rng: binary_samples(d, rng, scalar=1.5),
        dtypes=FLOAT_ALL + COMPLEX,
    ),
    OpTest(
        "sub",
        flambeau.sub,
        np.subtract,
        lambda d, rng: binary_samples(d, rng, scalar=2),
        dtypes=INT_ALL,
        id="sub_int",
    ),
    OpTest(
        "rsub",
        flambeau.rsub,
        lambda a, b: b - a,
        lambda d, rng: binary_samples(d, rng),
        dtypes=FLOATS,
    ),
    OpTest(
        "mul",
        flambeau.mul,
        np.multiply,
        lambda d, rng: binary_samples(d, rng, scalar=3),
        dtypes=ALL_REAL + ("bool",) + COMPLEX,
    ),
    # Division.
    OpTest(
        "div",
        flambeau.div,
        np.true_divide,
        lambda d, rng: binary_samples(d, rng, scalar=2.5),
        dtypes=FLOAT_ALL + COMPLEX,
    ),
    OpTest(
        "div",
        flambeau.div,
        f32(np.true_divide),
        lambda d, rng: nonzero_divisor(binary_samples(d, rng, scalar=2)),
        dtypes=INT_ALL + ("bool",),
        id="div_int",
        **F32_TOL,
    ),
    OpTest(
        "div",
        lambda a, b: flambeau.div(a, b, rounding_mode="trunc"),
        lambda a, b: np.trunc(np.true_divide(a, b)).astype(np.result_type(a, b)),
        lambda d, rng: nonzero_divisor(binary_samples(d, rng, low=-20, high=20, scalar=3)),
        dtypes=FLOATS + SIGNED_INTS,
        id="div_trunc",
    ),
    OpTest(
        "div",
        lambda a, b: flambeau.div(a, b, rounding_mode="floor"),
        np.floor_divide,
        lambda d, rng: nonzero_divisor(binary_samples(d, rng, low=-20, high=20, scalar=3)),
        dtypes=FLOAT_ALL + INT_ALL,
        id="div_floor",
    ),
    OpTest(
        "true_divide",
        flambeau.true_divide,
        np.true_divide,
        lambda d, rng: binary_samples(d, rng, scalar=2.0),
        dtypes=FLOATS,
    ),
    OpTest(
        "floor_divide",
        flambeau.floor_divide,
        np.floor_divide,
        lambda d, rng: nonzero_divisor(binary_samples(d, rng, low=-20, high=20, scalar=3)),
        dtypes=FLOAT_ALL + INT_ALL,
    ),
    OpTest(
        "remainder",
        flambeau.remainder,
        np.remainder,
        lambda d, rng: nonzero_divisor(binary_samples(d, rng, low=-20, high=20, scalar=3)),
        dtypes=FLOAT_ALL + INT_ALL,
    ),
    OpTest(
        "fmod",
        flambeau.fmod,
        np.fmod,
        lambda d, rng: nonzero_divisor(binary_samples(d, rng, low=-20, high=20, scalar=3)),
        dtypes=FLOAT_ALL + INT_ALL,
    ),
    OpTest("pow", flambeau.pow, np.power, pow_samples, dtypes=FLOAT_ALL + INT_ALL),
    OpTest(
        "pow",
        flambeau.pow,
        np.power,
        lambda d, rng: binary_samples(d, rng, -1.5, 1.5),
        dtypes=COMPLEX,
        id="pow_complex",
        rtol=1e-4,
        atol=1e-5,
    ),
    OpTest(
        "pow",
        lambda a, b: flambeau.pow(a, b),
        lambda a, b: np.power(a, np.float32(b)),
        lambda d, rng: (Sample((make((2, 3), d, rng, low=0, high=4), 0.5)),),
        dtypes=("int32",),
        id="pow_int_float_exponent",
        **F32_TOL,
    ),
    # Sign and magnitude.
    OpTest(
        "neg", flambeau.neg, np.negative, unary_samples, dtypes=FLOAT_ALL + SIGNED_INTS + COMPLEX
    ),
    OpTest("negative", flambeau.negative, np.negative, unary_samples, dtypes=FLOATS),
    OpTest(
        "positive",
        flambeau.positive,
        np.positive,
        unary_samples,
        dtypes=FLOAT_ALL + INT_ALL + COMPLEX,
    ),
    OpTest("abs", flambeau.abs, np.abs, unary_samples, dtypes=FLOAT_ALL + SIGNED_INTS + COMPLEX),
    OpTest("absolute", flambeau.absolute, np.abs, unary_samples, dtypes=FLOATS),
    OpTest(
        "sign",
        flambeau.sign,
        lambda a: a if a.dtype == bool else np.sign(a),
        unary_samples,
        dtypes=FLOAT_ALL + SIGNED_INTS + ("uint8", "bool"),
    ),
    OpTest("sgn", flambeau.sgn, sgn_ref, unary_samples, dtypes=FLOATS + SIGNED_INTS + COMPLEX),
    OpTest(
        "square", flambeau.square, np.square, unary_samples, dtypes=FLOAT_ALL + INT_ALL + COMPLEX
    ),
    OpTest(
        "square",
        flambeau.square,
        lambda a: np.square(a.astype(np.int64)),
        unary_samples,
        dtypes=("bool",),
        id="square_bool",
    ),
    *unary_rows("reciprocal", np.reciprocal, 0.5, 3.0, complex_ok=True, fn=flambeau.reciprocal),
    # Exponentials and logarithms.
    *unary_rows("exp", np.exp, complex_ok=True),
    *unary_rows("exp2", np.exp2, complex_ok=True),
    *unary_rows("expm1", np.expm1, complex_ok=True),
    *unary_rows("log", np.log, 0.1, 5.0, complex_ok=True),
    *unary_rows("log1p", np.log1p, -0.9, 5.0, complex_ok=True),
    *unary_rows("log2", np.log2, 0.1, 5.0, complex_ok=True),
    *unary_rows("log10", np.log10, 0.1, 5.0, complex_ok=True),
    *unary_rows("sqrt", np.sqrt, 0.0, 5.0, complex_ok=True),
    *unary_rows("rsqrt", rsqrt, 0.1, 5.0, complex_ok=True),
    # Trigonometric and hyperbolic.
    *unary_rows("sin", np.sin, complex_ok=True),
    *unary_rows("cos", np.cos, complex_ok=True),
    *unary_rows("tan", np.tan, -1.2, 1.2, complex_ok=True),
    *unary_rows("asin", np.arcsin, -0.95, 0.95, complex_ok=True),
    *unary_rows("acos", np.arccos, -0.95, 0.95, complex_ok=True),
    *unary_rows("atan", np.arctan, complex_ok=True),
    *unary_rows("sinh", np.sinh, complex_ok=True),
    *unary_rows("cosh", np.cosh, complex_ok=True),
    *unary_rows("tanh", np.tanh, complex_ok=True),
    *unary_rows("asinh", np.arcsinh, complex_ok=True),
    *unary_rows("acosh", np.arccosh, 1.1, 5.0, complex_ok=True),
    *unary_rows("atanh", np.arctanh, -0.95, 0.95, complex_ok=True),
    OpTest("arcsin", flambeau.arcsin, np.arcsin, lambda d, r: unary_samples(d, r, -0.9, 0.9)),
    OpTest("arccos", flambeau.arccos, np.arccos, lambda d, r: unary_samples(d, r, -0.9, 0.9)),
    OpTest("arctan", flambeau.arctan, np.arctan, unary_samples),
    OpTest("arcsinh", flambeau.arcsinh, np.arcsinh, unary_samples),
    OpTest("arccosh", flambeau.arccosh, np.arccosh, lambda d, r: unary_samples(d, r, 1.1, 4.0)),
    OpTest("arctanh", flambeau.arctanh, np.arctanh, lambda d, r: unary_samples(d, r, -0.9, 0.9)),
    # Special functions.
    *unary_rows("sigmoid", sigmoid, -8.0, 8.0, complex_ok=True),
    *unary_rows("erf", vectorize(math.erf)),
    *unary_rows("erfc", vectorize(math.erfc)),
    *unary_rows("erfinv", scipy_ref("erfinv"), -0.95, 0.95, int_ok=False),
    *unary_rows("lgamma", vectorize(math.lgamma), 0.1, 6.0),
    *unary_rows("digamma", scipy_ref("digamma"), 0.1, 6.0, int_ok=False),
    OpTest(
        "digamma",
        flambeau.digamma,
        scipy_ref("digamma"),
        lambda d, rng: (Sample((np.array([-2.5, -0.3, -1.7, 0.4, 12.0, 150.0], dtype=d),)),),
        id="digamma_negative",
    ),
    *polygamma_rows(),
    OpTest("logit", flambeau.logit, logit_ref, logit_samples, dtypes=FLOAT_ALL),
    # Rounding.
    OpTest("floor", flambeau.floor, np.floor, rounding_samples, dtypes=FLOAT_ALL + INT_ALL),
    OpTest("ceil", flambeau.ceil, np.ceil, rounding_samples, dtypes=FLOAT_ALL + INT_ALL),
    OpTest("trunc", flambeau.trunc, np.trunc, rounding_samples, dtypes=FLOAT_ALL + INT_ALL),
    OpTest("fix", flambeau.fix, np.trunc, rounding_samples, dtypes=FLOATS),
    OpTest("frac", flambeau.frac, lambda a: a - np.trunc(a), rounding_samples, dtypes=FLOAT_ALL),
    OpTest("round", flambeau.round, np.round, rounding_samples, dtypes=FLOAT_ALL + INT_ALL),
    OpTest(
        "round",
        lambda a: flambeau.round(a, decimals=2),
        lambda a: np.round(a, 2),
        lambda d, rng: unary_samples(d, rng, -50, 50),
        dtypes=FLOATS,
        id="round_decimals",
    ),
    OpTest(
        "round",
        lambda a: flambeau.round(a, decimals=-1),
        lambda a: np.round(a, -1),
        lambda d, rng: unary_samples(d, rng, -500, 500),
        dtypes=FLOATS,
        id="round_neg_decimals",
    ),
    OpTest(
        "relu",
        flambeau.relu,
        lambda a: np.maximum(a, 0).astype(a.dtype),
        nan_samples,
        dtypes=FLOAT_ALL + INT_ALL,
    ),
    # Clamping and the min/max family.
    OpTest("clamp", flambeau.clamp, clamp_ref, clamp_samples, dtypes=FLOAT_ALL + SIGNED_INTS),
    OpTest(
        "clamp",
        lambda a, lo, hi: flambeau.clamp(a, min=lo, max=hi),
        clamp_ref,
        clamp_samples,
        dtypes=FLOATS,
        id="clamp_kwargs",
    ),
    OpTest("clip", flambeau.clip, clamp_ref, clamp_samples, dtypes=FLOATS + ("int32",)),
    OpTest(
        "clamp_min",
        flambeau.clamp_min,
        np.maximum,
        nan_binary_samples,
        dtypes=FLOAT_ALL + INT_ALL + ("bool",),
    ),
    OpTest(
        "clamp_max",
        flambeau.clamp_max,
        np.minimum,
        nan_binary_samples,
        dtypes=FLOAT_ALL + INT_ALL + ("bool",),
    ),
    OpTest(
        "maximum",
        flambeau.maximum,
        np.maximum,
        nan_binary_samples,
        dtypes=FLOAT_ALL + INT_ALL + ("bool",),
    ),
    OpTest(
        "minimum",
        flambeau.minimum,
        np.minimum,
        nan_binary_samples,
        dtypes=FLOAT_ALL + INT_ALL + ("bool",),
    ),
    OpTest("fmax", flambeau.fmax, np.fmax, nan_binary_samples, dtypes=FLOAT_ALL + INT_ALL),
    OpTest("fmin", flambeau.fmin, np.fmin, nan_binary_samples, dtypes=FLOAT_ALL + INT_ALL),
    # Fused arithmetic.
    OpTest(
        "lerp",
        flambeau.lerp,
        lambda a, b, w: a + w * (b - a),
        lerp_samples,
        dtypes=FLOAT_ALL + COMPLEX,
    ),
    OpTest(
        "addcmul",
        flambeau.addcmul,
        lambda x, a, b, value=1: x + value * a * b,
        addc_samples,
        dtypes=FLOAT_ALL + SIGNED_INTS + COMPLEX,
    ),
    OpTest(
        "addcdiv",
        flambeau.addcdiv,
        lambda x, a, b, value=1: x + value * (a / b),
        lambda d, rng: addc_samples(d, rng, nonzero=True),
        dtypes=FLOAT_ALL + COMPLEX,
    ),
    # Float binary functions.
    OpTest(
        "hypot",
        flambeau.hypot,
        np.hypot,
        lambda d, rng: binary_samples(d, rng, scalar=2.0),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "atan2",
        flambeau.atan2,
        np.arctan2,
        lambda d, rng: binary_samples(d, rng, scalar=-1.0),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "atan2",
        flambeau.atan2,
        f32(np.arctan2),
        binary_samples,
        dtypes=("int32",),
        id="atan2_int",
        **F32_TOL,
    ),
    OpTest("arctan2", flambeau.arctan2, np.arctan2, binary_samples, dtypes=FLOATS),
    OpTest(
        "logaddexp",
        flambeau.logaddexp,
        np.logaddexp,
        lambda d, rng: binary_samples(d, rng, -20, 20, scalar=1.0),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "logaddexp",
        flambeau.logaddexp,
        logaddexp_complex_ref,
        lambda d, rng: binary_samples(d, rng, -3, 3),
        dtypes=COMPLEX,
        id="logaddexp_complex",
    ),
    OpTest(
        "logaddexp2",
        flambeau.logaddexp2,
        np.logaddexp2,
        lambda d, rng: binary_samples(d, rng, -20, 20, scalar=1.0),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "copysign",
        flambeau.copysign,
        np.copysign,
        lambda d, rng: binary_samples(d, rng, scalar=-1.0),
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "copysign",
        flambeau.copysign,
        f32(np.copysign),
        binary_samples,
        dtypes=("int32",),
        id="copysign_int",
        **F32_TOL,
    ),
    OpTest(
        "nan_to_num",
        flambeau.nan_to_num,
        nan_to_num_ref,
        nan_to_num_samples,
        dtypes=("float16", "float32", "float64") + INT_ALL,
    ),
    OpTest(
        "nan_to_num",
        flambeau.nan_to_num,
        lambda a, **kw: nan_to_num_ref(a, dtype="bfloat16", **kw),
        nan_to_num_samples,
        dtypes=("bfloat16",),
        id="nan_to_num_bfloat16",
    ),
]
