"""Rows for comparisons, value tests and where."""

import numpy as np

import flambeau

from . import ALL_REAL, COMPLEX, FLOATS, OpTest, Sample, binary_samples, make, unary_samples

FLOAT_ALL = ("float16", "bfloat16", "float32", "float64")
ORDERED = ALL_REAL + ("bool",)


def compare_samples(d, rng):
    """Binary samples with rounded values, so that equal elements occur."""
    for s in binary_samples(d, rng, scalar=1):
        yield Sample(
            tuple(np.asarray(np.round(a)) if isinstance(a, np.ndarray) else a for a in s.args),
            s.kwargs,
            s.note,
        )
    if d in FLOAT_ALL:
        dt = np.float32 if d == "bfloat16" else d
        a = np.array([np.nan, 1.0, np.inf, -np.inf, 0.0], dtype=dt)
        b = np.array([np.nan, np.nan, np.inf, 1.0, -0.0], dtype=dt)
        yield Sample((a, b), note="special values")


def special_samples(d, rng):
    yield from unary_samples(d, rng)
    if d in FLOAT_ALL:
        dt = np.float32 if d == "bfloat16" else d
        yield Sample((np.array([np.nan, np.inf, -np.inf, 0.0, -1.0], dtype=dt),), note="special")
    if d in COMPLEX:
        x = np.array([complex(np.nan, 0), complex(0, np.inf), complex(-np.inf, 1), 1 + 0j, 2j])
        yield Sample((x.astype(d),), note="special")


def isclose_samples(d, rng):
    for s in compare_samples(d, rng):
        a, b = s.args
        if not isinstance(b, np.ndarray) or a.dtype != b.dtype:
            continue
        yield s
        if d in FLOAT_ALL:
            yield Sample((a, (b * (1 + 1e-6)).astype(b.dtype)), note="nearly equal")
            yield Sample((a, b), {"equal_nan": True, "rtol": 1e-3, "atol": 0.1}, note="options")


def isclose_ref(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def where_samples(d, rng):
    def c(s, **kw):
        return make(s, "bool", rng, **kw)

    def m(s, **kw):
        return make(s, d, rng, **kw)

    yield Sample((c((6,)), m((6,)), m((6,))))
    yield Sample((c((3, 1)), m((3, 4), noncontig=True), m((4,))), note="broadcast strided")
    yield Sample((c(()), m((3,)), m(())), note="0-dim")
    yield Sample((c((0, 2)), m((2,)), m((0, 2))), note="empty")
    yield Sample((c((4, 3)).T, m((3, 4)), m((4, 3)).T), note="transposed")
    yield Sample((c((2, 3)), m((2, 3)), 0), note="python scalar")


def where_ref(c, a, b):
    r = np.where(c, a, b)
    return r.astype(a.dtype) if not isinstance(b, np.ndarray) else r


def compare_rows(name, ref, dtypes):
    return OpTest(name, getattr(flambeau, name), ref, compare_samples, dtypes=dtypes)


TESTS = [
    compare_rows("eq", np.equal, ORDERED + COMPLEX),
    compare_rows("ne", np.not_equal, ORDERED + COMPLEX),
    compare_rows("lt", np.less, ORDERED),
    compare_rows("le", np.less_equal, ORDERED),
    compare_rows("gt", np.greater, ORDERED),
    compare_rows("ge", np.greater_equal, ORDERED),
    compare_rows("not_equal", np.not_equal, FLOATS + ("int32",)),
    compare_rows("less", np.less, FLOATS + ("int32",)),
    compare_rows("less_equal", np.less_equal, FLOATS + ("int32",)),
    compare_rows("greater", np.greater, FLOATS + ("int32",)),
    compare_rows("greater_equal", np.greater_equal, FLOATS + ("int32",)),
    OpTest(
        "isclose",
        flambeau.isclose,
        isclose_ref,
        isclose_samples,
        dtypes=FLOAT_ALL + ("int32", "int64", "bool") + COMPLEX,
    ),
    OpTest(
        "allclose",
        flambeau.allclose,
        lambda a, b, **kw: bool(np.all(isclose_ref(a, b, **kw))),
        isclose_samples,
        dtypes=FLOATS + ("int32",),
    ),
    OpTest(
        "allclose",
        flambeau.allclose,
        lambda a, b: True,
        lambda d, rng: (Sample((x, x.copy())) for x in [make((3, 4), d, rng)]),
        dtypes=FLOATS,
        id="allclose_true",
    ),
    OpTest(
        "equal",
        flambeau.equal,
        lambda a, b: a.shape == b.shape and bool(np.all(a == b)),
        lambda d, rng: (
            Sample((x, y))
            for x in [np.asarray(np.round(make((3, 4), d, rng)))]
            for y in [x.copy(), x[:2], np.where(x > 0, x + 1, x).astype(x.dtype), x.T.copy().T]
        ),
        dtypes=FLOATS + ("int32", "bool"),
    ),
    OpTest("isnan", flambeau.isnan, np.isnan, special_samples, dtypes=FLOAT_ALL + COMPLEX),
    OpTest(
        "isnan",
        flambeau.isnan,
        np.isnan,
        unary_samples,
        dtypes=("int32", "uint8", "bool"),
        id="isnan_int",
    ),
    OpTest(
        "isinf", flambeau.isinf, np.isinf, special_samples, dtypes=FLOAT_ALL + COMPLEX + ("int32",)
    ),
    OpTest(
        "isposinf", flambeau.isposinf, np.isposinf, special_samples, dtypes=FLOAT_ALL + ("int32",)
    ),
    OpTest(
        "isneginf", flambeau.isneginf, np.isneginf, special_samples, dtypes=FLOAT_ALL + ("int32",)
    ),
    OpTest(
        "isfinite",
        flambeau.isfinite,
        np.isfinite,
        special_samples,
        dtypes=FLOAT_ALL + COMPLEX + ("int64", "bool"),
    ),
    OpTest(
        "isreal", flambeau.isreal, np.isreal, special_samples, dtypes=FLOATS + COMPLEX + ("int32",)
    ),
    OpTest(
        "where",
        flambeau.where,
        where_ref,
        where_samples,
        dtypes=FLOAT_ALL + ("int32", "int64", "uint8", "bool") + COMPLEX,
    ),
    OpTest(
        "where",
        lambda c: flambeau.where(c),
        lambda c: tuple(np.nonzero(c)),
        lambda d, rng: (Sample((a,)) for a in next(where_samples(d, rng)).args[:2]),
        dtypes=("bool", "float32", "int64"),
        id="where_condition_only",
    ),
]
