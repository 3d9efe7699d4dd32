"""Rows for ops/pointwise_numeric.yaml (gcd, lcm, heaviside, nextafter, signbit, ldexp,
frexp, float_power, deg2rad, rad2deg), against NumPy."""

import numpy as np

import flambeau

from . import ALL_REAL, COMPLEX, FLOATS, OpTest, Sample, binary_samples, make, unary_samples
from .pointwise import F32_TOL, FLOAT_ALL, INT_ALL, f32

F32 = ("float32",)


def storage(d):
    """The NumPy type a row's arrays have for dtype d (bfloat16 lives in float32)."""
    return np.float32 if d == "bfloat16" else np.dtype(d)


def inplace(samples):
    """The samples an in-place call takes: those whose first argument has the
    broadcast shape."""

    def run(d, rng):
        for s in samples(d, rng):
            arrays = [np.shape(a) for a in s.args if isinstance(a, np.ndarray)]
            a = s.args[0]
            if isinstance(a, np.ndarray) and a.shape == np.broadcast_shapes(*arrays):
                yield s

    return run


def int_binary_samples(d, rng):
    low = 0 if d == "uint8" else -20
    yield from binary_samples(d, rng, low, 20, scalar=6)


def heaviside_ref(x, values):
    # As PyTorch: values where x == 0, 0 below (NaN included), 1 above.
    one = np.ones_like(x)
    return np.where(x == 0, values, np.where(x > 0, one, 0 * one)).astype(x.dtype)


def heaviside_samples(d, rng):
    if d == "bool":
        yield Sample((make((6,), d, rng), make((6,), d, rng)))
        yield Sample((make((2, 3), d, rng), make((3,), d, rng)), note="broadcast")
        return
    low = 0 if d == "uint8" else -2
    for s in binary_samples(d, rng, low, 2):
        a, b = s.args
        if isinstance(a, np.ndarray) and a.size and d not in INT_ALL:
            a = a.copy()
            a.flat[::2] = 0  # exact zeros, where values is taken
        yield Sample((a, b), note=s.note)
    if d in FLOAT_ALL:  # NaN gives 0, as PyTorch (NumPy's heaviside gives NaN)
        x = np.array([np.nan, -0.0, 0.0, -np.inf, np.inf, 1e-30], dtype=storage(d))
        yield Sample((x, np.full_like(x, 0.5)), note="special values")


def bfloat16_bits(a):
    return (np.asarray(a, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def nextafter_ref(dtype):
    """np.nextafter, or for bfloat16 (which NumPy lacks) one step of its bit pattern."""

    def run(a, b):
        if dtype != "bfloat16":
            return np.nextafter(a, b)
        a, b = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
        bits = bfloat16_bits(a).astype(np.int64)
        away = (b > a) == (a > 0)
        step = np.where(a == 0, 0, np.where(away, bits + 1, bits - 1))
        tiny = np.where(np.signbit(b), 0x8001, 0x0001)
        bits = np.where(a == 0, tiny, step).astype(np.uint32) << 16
        r = bits.view(np.float32)
        r = np.where(a == b, b, r)
        return np.where(np.isnan(a) | np.isnan(b), np.nan, r).astype(np.float32)

    return run


def nextafter_rows():
    rows = []
    for d in FLOAT_ALL:
        special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.0, 0.0], storage(d))
        toward = np.array([-1.0, 1.0, 2.0, -2.0, 0.0, 0.0, 1.0, np.nan, -0.0], storage(d))

        def samples(dt, rng, special=special, toward=toward):
            yield from binary_samples(dt, rng)
            if dt != "float64":  # float64 rows are gradchecked
                yield Sample((special, toward), note="special values")

        rows.append(
            OpTest(
                "nextafter",
                flambeau.nextafter,
                nextafter_ref(d),
                samples,
                dtypes=(d,),
                rtol=0,
                atol=0,
                id=f"nextafter_{d}",
            )
        )
    return rows


def signbit_samples(d, rng):
    yield from unary_samples(d, rng)
    if d in FLOAT_ALL:
        x = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, np.nan, -1e-30], dtype=storage(d))
        if d != "bfloat16":  # bfloat16 conversion drops a NaN's sign (PyTorch's does too)
            x[5] = np.copysign(np.nan, -1.0)
        yield Sample((x,), note="signed zeros and NaN")


def signbit_ref(a):
    return np.signbit(a.astype(np.float64) if a.dtype == np.bool_ else a)


def ldexp_ref(x, e):
    """x * 2^e in float64 (complex128), rounded to x's type."""
    x = np.asarray(x)
    with np.errstate(over="ignore"):
        return (x * np.exp2(np.asarray(e, dtype=np.float64))).astype(x.dtype)


def ldexp_samples(d, rng):
    m = lambda s, **kw: make(s, d, rng, **kw)  # noqa: E731
    e = lambda s: rng.integers(-4, 5, size=s).astype(np.int32)  # noqa: E731
    yield Sample((m((6,)), e((6,))))
    yield Sample((m((3, 4), noncontig=True), e((4,))), note="broadcast strided")
    yield Sample((m(()), e((3,))), note="0-dim")
    yield Sample((m((0, 3)), e((3,))), note="empty")
    yield Sample((m((4, 3)).T, e((3, 4))), note="transposed")
    if d in FLOATS:
        yield Sample((m((5,)), m((5,))), note="float exponent")


def ldexp_edges(d, rng):
    x = np.array([1e-40, 1.5, 2.0, -0.0, np.inf, np.nan, 3.0], dtype=np.float32)
    e = np.array([200, -160, 128, 3, -2, 1, -149], dtype=np.int32)
    yield Sample((x, e), note="beyond 2 ** e's range")


def frexp_ref(a):
    m, e = np.frexp(a)
    return m, e.astype(np.int32)


def frexp_samples(d, rng):
    yield from unary_samples(d, rng, -100, 100)
    if d != "float64":  # float64 rows are gradchecked
        x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -3.5, 2.0**-130], storage(d))
        yield Sample((x,), note="special values")


def float_power_samples(d, rng):
    if d in INT_ALL:
        yield from binary_samples(d, rng, 0, 3, scalar=2)
        return
    base = lambda s, **kw: make(s, d, rng, low=0.2, high=3, **kw)  # noqa: E731
    exp = lambda s, **kw: make(s, d, rng, low=-2, high=2, **kw)  # noqa: E731
    yield Sample((base((5,)), exp((5,))))
    yield Sample((base((3, 4), noncontig=True), exp((4,))), note="broadcast strided")
    yield Sample((base(()), exp((3,))), note="0-dim")
    yield Sample((base((0, 3)), exp((3,))), note="empty")
    yield Sample((base((2, 3)), 2), note="python int exponent")
    yield Sample((2.5, exp((2, 3))), note="python float base")


def float_power_ref(a, b):
    return np.float_power(a, b)


def angle_rows(name, ref):
    fn = getattr(flambeau, name)
    return [
        OpTest(name, fn, ref, lambda d, rng: unary_samples(d, rng, -400, 400), dtypes=FLOAT_ALL),
        OpTest(name, fn, f32(ref), lambda d, rng: unary_samples(d, rng, -100, 100),
               dtypes=("int8", "int32", "int64"), id=f"{name}_int", **F32_TOL),
        OpTest(name, lambda a: getattr(a.clone(), f"{name}_")(), ref,
               lambda d, rng: unary_samples(d, rng), dtypes=FLOAT_ALL, id=f"{name}_inplace"),
    ]  # fmt: skip


def gcd_lcm_rows(name, ref):
    fn = getattr(flambeau, name)
    return [
        OpTest(name, fn, ref, int_binary_samples, dtypes=INT_ALL),
        OpTest(name, lambda a, b: getattr(a.clone(), f"{name}_")(b), ref,
               inplace(lambda d, rng: binary_samples(d, rng, -20, 20)), dtypes=("int32", "int64"),
               id=f"{name}_inplace"),
        OpTest(name, fn, ref,
               lambda d, rng: (Sample((np.array([0, 0, 7, -7, 12, -12, 1], d),
                                       np.array([0, 5, 0, 0, -18, -18, -1], d))),),
               dtypes=("int16", "int64"), id=f"{name}_zeros_and_signs"),
    ]  # fmt: skip


def out_of(fn, dtype=None):
    """fn(*a, out=...) into an empty tensor on the device of its first tensor argument."""

    def run(*a):
        first = next(x for x in a if isinstance(x, flambeau.Tensor))
        return fn(*a, out=flambeau.empty(0, dtype=dtype or first.dtype, device=first.device))

    return run


TESTS = [
    *gcd_lcm_rows("gcd", np.gcd),
    *gcd_lcm_rows("lcm", np.lcm),
    OpTest("heaviside", flambeau.heaviside, heaviside_ref, heaviside_samples,
           dtypes=(*ALL_REAL, "bool")),
    OpTest("heaviside", lambda a, b: a.clone().heaviside_(b), heaviside_ref,
           inplace(heaviside_samples),
           dtypes=("float32", "int64"), id="heaviside_inplace"),
    *nextafter_rows(),
    OpTest("nextafter", lambda a, b: a.clone().nextafter_(b), np.nextafter,
           inplace(binary_samples), dtypes=FLOATS, id="nextafter_inplace"),
    OpTest("signbit", flambeau.signbit, signbit_ref, signbit_samples, dtypes=(*ALL_REAL, "bool")),
    OpTest("signbit", out_of(flambeau.signbit, flambeau.bool), signbit_ref, signbit_samples,
           dtypes=F32, id="signbit_out"),
    OpTest("ldexp", flambeau.ldexp, ldexp_ref, ldexp_samples, dtypes=FLOAT_ALL),
    OpTest("ldexp", flambeau.ldexp, f32(ldexp_ref), lambda d, rng: binary_samples(d, rng, -3, 3),
           dtypes=("int32", "int64"), id="ldexp_int", **F32_TOL),
    OpTest("ldexp", flambeau.ldexp, ldexp_ref, ldexp_samples, dtypes=COMPLEX, id="ldexp_complex"),
    OpTest("ldexp", flambeau.ldexp, ldexp_ref, ldexp_edges, dtypes=F32, id="ldexp_edges"),
    OpTest("ldexp", lambda a, b: a.clone().ldexp_(b), ldexp_ref, inplace(ldexp_samples),
           dtypes=FLOATS,
           id="ldexp_inplace"),
    OpTest("frexp", flambeau.frexp, frexp_ref, frexp_samples, dtypes=FLOAT_ALL),
    OpTest("frexp", lambda a: a.frexp(), frexp_ref, frexp_samples, dtypes=FLOATS,
           id="frexp_method"),
    OpTest("frexp",
           lambda a: flambeau.frexp(a, out=(flambeau.empty(0, dtype=a.dtype, device=a.device),
                                           flambeau.empty(0, dtype=flambeau.int32,
                                                          device=a.device))),
           frexp_ref, frexp_samples, dtypes=F32, id="frexp_out"),
    OpTest("float_power", flambeau.float_power, float_power_ref, float_power_samples,
           dtypes=(*FLOAT_ALL, "int32", "int64")),
    OpTest("float_power", flambeau.float_power, float_power_ref, float_power_samples,
           dtypes=COMPLEX, id="float_power_complex"),
    OpTest("float_power", lambda a, b: a.clone().float_power_(b), float_power_ref,
           inplace(float_power_samples), dtypes=("float64",), id="float_power_inplace"),
    OpTest("float_power", out_of(flambeau.float_power, flambeau.float64), float_power_ref,
           float_power_samples, dtypes=F32, id="float_power_out"),
    *angle_rows("deg2rad", np.deg2rad),
    *angle_rows("rad2deg", np.rad2deg),
]  # fmt: skip
