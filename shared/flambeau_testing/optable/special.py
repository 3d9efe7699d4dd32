"""Rows for the special functions (ops/special.yaml), against scipy.special.

Each function gets rows over every float type on a range where it is smooth and
representable in 16 bits, integer inputs (computed in float32), and its edge
values (0, negative, large, inf, NaN) in float32. float64 edge values, where
finite differences are no judge, are in tests/test_special.py.
"""

import numpy as np

import flambeau

from . import FLOATS, OpTest, Sample, binary_samples, make, scipy_special, unary_samples
from .pointwise import F32_TOL, FLOAT_ALL, f32
from .pointwise_numeric import inplace


def scipy_fn(name, *fixed):
    """scipy.special.<name>(*fixed, *args), imported when a row runs."""

    def run(*args):
        special = scipy_special()
        return getattr(special, name)(*fixed, *args)

    return run


def airy_ai_ref(x):
    return scipy_fn("airy")(x)[0]


def spherical_j0_ref(x):
    return scipy_fn("spherical_jn")(0, x)


def mvlgamma_ref(p):
    def run(x):
        gammaln = scipy_fn("gammaln")
        return sum(gammaln(x - i / 2) for i in range(p)) + p * (p - 1) / 4 * np.log(np.pi)

    return run


def edge_samples(values):
    def samples(d, rng):
        yield Sample((np.array(values, dtype=np.float32),), note="edge values")

    return samples


EDGES = [-np.inf, -30.0, -2.5, -1e-30, -0.0, 0.0, 1e-30, 0.5, 1.0, 7.5, 50.0, np.inf, np.nan]

# (operator, function, reference, range of the smooth rows, edge values or None)
UNARY = [
    ("special_airy_ai", flambeau.special.airy_ai, airy_ai_ref, (-10, 5), EDGES),
    ("special_bessel_j0", flambeau.special.bessel_j0, scipy_fn("j0"), (-30, 30), EDGES),
    ("special_bessel_j1", flambeau.special.bessel_j1, scipy_fn("j1"), (-30, 30), EDGES),
    ("special_bessel_y0", flambeau.special.bessel_y0, scipy_fn("y0"), (0.1, 30), EDGES),
    ("special_bessel_y1", flambeau.special.bessel_y1, scipy_fn("y1"), (0.1, 30), EDGES),
    ("special_modified_bessel_i0", flambeau.special.modified_bessel_i0, scipy_fn("i0"), (-10, 10),
     EDGES),
    ("special_modified_bessel_i1", flambeau.special.modified_bessel_i1, scipy_fn("i1"), (-10, 10),
     EDGES),
    ("special_modified_bessel_k0", flambeau.special.modified_bessel_k0, scipy_fn("k0"), (0.1, 10),
     EDGES),
    ("special_modified_bessel_k1", flambeau.special.modified_bessel_k1, scipy_fn("k1"), (0.1, 10),
     EDGES),
    ("special_scaled_modified_bessel_k0", flambeau.special.scaled_modified_bessel_k0,
     scipy_fn("k0e"), (0.1, 60), EDGES + [700.0, 1e30]),
    ("special_scaled_modified_bessel_k1", flambeau.special.scaled_modified_bessel_k1,
     scipy_fn("k1e"), (0.1, 60), EDGES + [700.0, 1e30]),
    ("special_spherical_bessel_j0", flambeau.special.spherical_bessel_j0, spherical_j0_ref,
     (-20, 20), EDGES),
    ("i0", flambeau.i0, scipy_fn("i0"), (-10, 10), EDGES),
    ("special_i0e", flambeau.special.i0e, scipy_fn("i0e"), (-60, 60), EDGES + [700.0, 1e30]),
    ("special_i1", flambeau.special.i1, scipy_fn("i1"), (-10, 10), EDGES),
    ("special_i1e", flambeau.special.i1e, scipy_fn("i1e"), (-60, 60), EDGES + [-700.0, 1e30]),
    ("special_entr", flambeau.special.entr, scipy_fn("entr"), (0.05, 5), EDGES),
    ("special_erfcx", flambeau.special.erfcx, scipy_fn("erfcx"), (-3, 30), EDGES + [-9.0, 1e30]),
    ("special_ndtr", flambeau.special.ndtr, scipy_fn("ndtr"), (-8, 8), EDGES),
    ("special_ndtri", flambeau.special.ndtri, scipy_fn("ndtri"), (0.01, 0.99),
     [0.0, 1.0, -0.5, 1.5, 1e-30, 1e-10, 0.5, 1 - 1e-7, np.inf, np.nan]),
    ("special_log_ndtr", flambeau.special.log_ndtr, scipy_fn("log_ndtr"), (-20, 8),
     EDGES + [-1e10]),
]  # fmt: skip


def unary_rows():
    rows = []
    for name, fn, ref, (low, high), edges in UNARY:
        rows.append(
            OpTest(
                name,
                fn,
                ref,
                lambda d, rng, low=low, high=high: unary_samples(d, rng, low, high),
                dtypes=FLOAT_ALL,
                id=name,
            )
        )
        lo_i, hi_i = int(np.ceil(low)), int(np.floor(high))
        if lo_i < hi_i:
            rows.append(
                OpTest(
                    name,
                    fn,
                    f32(ref),
                    lambda d, rng, lo=lo_i, hi=hi_i: unary_samples(d, rng, lo, hi),
                    dtypes=("uint8", "int32", "int64") if lo_i >= 0 else ("int8", "int32"),
                    id=f"{name}_int",
                    **F32_TOL,
                )
            )
        rows.append(
            OpTest(name, fn, ref, edge_samples(edges), dtypes=("float32",), id=f"{name}_edges")
        )
    return rows


def positive_binary_samples(low_a, high_a, low_b, high_b, scalar=None):
    """binary_samples with each side on its own range."""

    def samples(d, rng):
        for s in binary_samples(d, rng, 0.0, 1.0, scalar=scalar):
            a, b = s.args
            # np.asarray: arithmetic on a 0-dim array gives a NumPy scalar.
            a = np.asarray(low_a + (high_a - low_a) * a) if isinstance(a, np.ndarray) else a
            b = np.asarray(low_b + (high_b - low_b) * b) if isinstance(b, np.ndarray) else b
            cast = np.float32 if d == "bfloat16" else d
            a = a.astype(cast) if isinstance(a, np.ndarray) else a
            b = b.astype(cast) if isinstance(b, np.ndarray) else b
            if d in ("float16", "bfloat16"):
                a = make_exact(a, d)
                b = make_exact(b, d)
            yield Sample((a, b), note=s.note)

    return samples


def make_exact(a, d):
    """a rounded to the 16-bit type d (kept as a NumPy array of its storage type)."""
    if not isinstance(a, np.ndarray):
        return a
    t = flambeau.from_numpy(np.array(a, dtype=np.float32)).to(getattr(flambeau, d))
    r = t.to(flambeau.float32).numpy()
    return r if d == "bfloat16" else r.astype(np.float16)


def pair_samples(a, b):
    def samples(d, rng):
        yield Sample((np.array(a, dtype=np.float32), np.array(b, dtype=np.float32)), note="edges")

    return samples


NAN, INF = np.nan, np.inf
F32 = ("float32",)


def xlog_rows(name, fn, ref_name):
    zeros = pair_samples(
        [0.0, 0.0, 0.0, 1.0, 2.0, NAN, 0.0, -1.0, 3.0],
        [0.0, -1.0, NAN, 0.0, INF, 1.0, -2.0, -0.5, 1e-30],
    )
    return [
        OpTest(name, fn, scipy_fn(ref_name), positive_binary_samples(-3, 3, 0.1, 5, 2.5),
               dtypes=FLOAT_ALL, id=name),
        OpTest(name, fn, f32(scipy_fn(ref_name)), lambda d, rng: binary_samples(d, rng, 1, 5),
               dtypes=("int32", "int64"), id=f"{name}_int", **F32_TOL),
        OpTest(name, fn, scipy_fn(ref_name), zeros, dtypes=("float32",), id=f"{name}_edges"),
    ]  # fmt: skip


def gamma_rows(name, fn, ref_name):
    edges = pair_samples(
        [0.0, 0.0, 1.0, 1.0, INF, 1.0, -1.0, 2.0, INF, 0.0, NAN, 1.0, INF, 1e-20, 30.0],
        [0.0, 1.0, 0.0, INF, 1.0, -1.0, 1.0, INF, INF, INF, 1.0, NAN, 0.0, 1e-20, 1e-10],
    )

    def large(d, rng):
        a = 10 ** rng.uniform(3, 6, size=(12,))
        x = a + rng.normal(0, 3, size=(12,)) * np.sqrt(a)
        yield Sample((a, x), note="large a near x = a")

    return [
        OpTest(name, fn, scipy_fn(ref_name), positive_binary_samples(0.1, 10, 0.01, 15, 3.0),
               dtypes=FLOAT_ALL, id=name),
        OpTest(name, fn, scipy_fn(ref_name), edges, dtypes=("float32",), id=f"{name}_edges"),
        # SciPy's own error reaches 1e-11 there.
        OpTest(name, fn, scipy_fn(ref_name), large, dtypes=("float64",), rtol=1e-9,
               id=f"{name}_large"),
    ]  # fmt: skip


def zeta_rows():
    fn = flambeau.special.zeta
    ref = scipy_fn("zeta")
    edges = pair_samples(
        [2.0, 1.0, 0.5, 2.0, 2.0, 2.0, 2.5, 3.0, NAN, 2.0, 1.5, 4.0, 3.0, 60.0],
        [1.0, 1.0, 1.0, 0.0, -1.0, -1.5, -1.5, INF, 1.0, NAN, -INF, -70.25, 1e-3, 0.5],
    )
    return [
        OpTest("special_zeta", fn, ref, positive_binary_samples(1.1, 6, 0.1, 5, 2.0),
               dtypes=FLOAT_ALL, id="special_zeta"),
        OpTest("special_zeta", fn, f32(ref), lambda d, rng: binary_samples(d, rng, 2, 5),
               dtypes=("int32", "int64"), id="special_zeta_int", **F32_TOL),
        OpTest("special_zeta", fn, ref, edges, dtypes=("float32",), id="special_zeta_edges"),
    ]  # fmt: skip


def chebyshev_vw_ref(third):
    """V_n (third) or W_n from their recurrence p_{k+1} = 2x p_k - p_{k-1},
    p_0 = 1, p_1 = 2x -+ 1, in float64."""

    def run(x, n):
        x = np.asarray(x, dtype=np.float64)
        n = np.broadcast_to(np.asarray(n), np.broadcast_shapes(np.shape(x), np.shape(n)))
        x = np.broadcast_to(x, n.shape)
        prev, cur = np.ones_like(x), 2 * x - 1 if third else 2 * x + 1
        out = np.where(n <= 0, np.where(n == 0, 1.0, 0.0), cur)
        for k in range(1, int(n.max(initial=0))):
            prev, cur = cur, 2 * x * cur - prev
            out = np.where(n == k + 1, cur, out)
        return out

    return run


def shifted(ref):
    return lambda x, n: ref(2 * np.asarray(x, dtype=np.float64) - 1, n)


def scipy_poly(name):
    """scipy.special.eval_<name>(n, x) called as (x, n); negative degrees give 0."""

    def run(x, n):
        special = scipy_special()
        n = np.asarray(n)
        r = getattr(special, f"eval_{name}")(np.maximum(n, 0), x)
        return np.where(n < 0, 0.0, r)

    return run


# (name, reference, range of x, sign of the leading coefficient)
POLYNOMIALS = [
    ("chebyshev_polynomial_t", scipy_poly("chebyt"), (-1.2, 1.2), 1.0),
    ("chebyshev_polynomial_u", scipy_poly("chebyu"), (-1.2, 1.2), 1.0),
    ("chebyshev_polynomial_v", chebyshev_vw_ref(True), (-1.2, 1.2), 1.0),
    ("chebyshev_polynomial_w", chebyshev_vw_ref(False), (-1.2, 1.2), 1.0),
    ("shifted_chebyshev_polynomial_t", scipy_poly("sh_chebyt"), (-0.1, 1.1), 1.0),
    ("shifted_chebyshev_polynomial_u", scipy_poly("sh_chebyu"), (-0.1, 1.1), 1.0),
    ("shifted_chebyshev_polynomial_v", shifted(chebyshev_vw_ref(True)), (-0.1, 1.1), 1.0),
    ("shifted_chebyshev_polynomial_w", shifted(chebyshev_vw_ref(False)), (-0.1, 1.1), 1.0),
    ("hermite_polynomial_h", scipy_poly("hermite"), (-2, 2), 1.0),
    ("hermite_polynomial_he", scipy_poly("hermitenorm"), (-2, 2), 1.0),
    # Laguerre's leading term is (-x)^n / n!.
    ("laguerre_polynomial_l", scipy_poly("laguerre"), (-2, 6), -1.0),
    ("legendre_polynomial_p", scipy_poly("legendre"), (-1.2, 1.2), 1.0),
]


def polynomial_rows():
    rows = []
    for short, ref, (low, high), lead_sign in POLYNOMIALS:
        name = f"special_{short}"
        fn = getattr(flambeau.special, short)

        def samples(d, rng, low=low, high=high):
            m = lambda s, **kw: make(s, d, rng, low=low, high=high, **kw)  # noqa: E731
            deg = lambda s: rng.integers(-1, 7, size=s).astype(np.int64)  # noqa: E731
            yield Sample((m((7,)), deg((7,))))
            yield Sample((m((3, 4), noncontig=True), deg((4,))), note="broadcast strided")
            yield Sample((m((2, 1, 3)), deg((4, 1))), note="broadcast both")
            yield Sample((m(()), deg((5,))), note="0-dim x")
            yield Sample((m((0, 3)), deg((3,))), note="empty")
            yield Sample((m((5,)), 3), note="python int degree")
            if d in FLOATS:
                hi = np.array([0, 1, 2, 7, 12, 30, 64, 65, 100])
                yield Sample((m((9,)), hi), note="high degrees")
                yield Sample((m((9,)), hi.astype(d) + 0.75), note="fractional degrees")

        def frac_ref(x, n, ref=ref):
            # Degrees truncated; the result rounded to x's type (so it overflows as ours).
            n = np.asarray(n)
            r = ref(x, np.trunc(n).astype(np.int64) if n.dtype.kind == "f" else n)
            x_type = np.asarray(x).dtype
            with np.errstate(over="ignore"):
                return r.astype(x_type if x_type.kind == "f" else np.float64)

        rows.append(OpTest(name, fn, frac_ref, samples, dtypes=FLOAT_ALL, id=name))
        rows.append(
            OpTest(
                name,
                fn,
                f32(frac_ref),
                lambda d, rng: (Sample((np.array([0, 1, 2, 3], dtype=d), np.array([3, 2, 1, 0]))),),
                dtypes=("int32", "int64"),
                id=f"{name}_int",
                **F32_TOL,
            )
        )

        def at_infinity(x, n, lead=lead_sign):
            # +-inf with the leading term's sign; 1 at degree 0, 0 below; NaN stays NaN.
            x, n = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(n))
            odd = np.mod(n, 2) == 1
            sign = lead ** n.astype(np.float64) * np.where((x < 0) & odd, -1.0, 1.0)
            r = np.where(n > 0, sign * np.inf, np.where(n == 0, 1.0, 0.0))
            return np.where(np.isnan(x), np.nan, r)

        rows.append(
            OpTest(
                name,
                fn,
                at_infinity,
                lambda d, rng: (
                    Sample(
                        (
                            np.array([np.inf, -np.inf, np.inf, -np.inf, -np.inf, np.nan, np.inf]),
                            np.array([0, 1, 3, 3, 4, 2, -1]),
                        )
                    ),
                ),
                dtypes=("float64",),
                id=f"{name}_infinite_x",
            )
        )
    return rows


def mvlgamma_rows():
    rows = []
    for p in (1, 2, 3):
        rows.append(
            OpTest(
                "mvlgamma",
                lambda x, p=p: flambeau.mvlgamma(x, p),
                mvlgamma_ref(p),
                lambda d, rng: unary_samples(d, rng, 1.5, 6.0),
                dtypes=FLOAT_ALL,
                id=f"mvlgamma_{p}",
            )
        )
    rows.append(
        OpTest(
            "mvlgamma",
            lambda x: flambeau.mvlgamma(x, 2),
            f32(mvlgamma_ref(2)),
            lambda d, rng: unary_samples(d, rng, 1, 6),
            dtypes=("int32", "int64"),
            id="mvlgamma_int",
            **F32_TOL,
        )
    )
    rows.append(
        OpTest(
            "mvlgamma",
            lambda x: x.mvlgamma(3),
            mvlgamma_ref(3),
            lambda d, rng: unary_samples(d, rng, 1.5, 6.0),
            dtypes=FLOATS,
            id="mvlgamma_method",
        )
    )
    return rows


def variant_rows():
    """The method, in-place and out= forms of the top-level special functions (out= rows in
    float32 only: autograd refuses out=, and float64 rows are gradchecked)."""

    def out(fn):
        return lambda *a: fn(*a, out=flambeau.empty(0, dtype=a[0].dtype, device=a[0].device))

    positive = positive_binary_samples(0.5, 4, 0.5, 4)
    positive_inplace = inplace(positive)
    unary = lambda d, rng: unary_samples(d, rng, 0.5, 4)  # noqa: E731
    gammainc, xlogy, i0 = scipy_fn("gammainc"), scipy_fn("xlogy"), scipy_fn("i0")
    sinc = np.sinc
    return [
        OpTest("i0", lambda a: a.i0(), i0, unary, dtypes=FLOATS, id="i0_method"),
        OpTest("i0", lambda a: a.clone().i0_(), i0, unary, dtypes=FLOAT_ALL, id="i0_inplace"),
        OpTest("i0", out(flambeau.i0), i0, unary, dtypes=F32, id="i0_out"),
        OpTest("igamma", lambda a, b: a.igamma(b), gammainc, positive, dtypes=FLOATS,
               id="igamma_method"),
        OpTest("igamma", lambda a, b: a.clone().igamma_(b), gammainc, positive_inplace,
               dtypes=FLOATS,
               id="igamma_inplace"),
        OpTest("igammac", lambda a, b: a.clone().igammac_(b), scipy_fn("gammaincc"),
               positive_inplace,
               dtypes=FLOATS, id="igammac_inplace"),
        OpTest("xlogy", lambda a, b: a.xlogy(b), xlogy, positive, dtypes=FLOATS,
               id="xlogy_method"),
        OpTest("xlogy", lambda a, b: a.clone().xlogy_(b), xlogy, positive_inplace, dtypes=FLOATS,
               id="xlogy_inplace"),
        OpTest("xlogy", out(flambeau.xlogy), xlogy, positive, dtypes=F32, id="xlogy_out"),
        OpTest("special_zeta", out(flambeau.special.zeta), scipy_fn("zeta"),
               positive_binary_samples(1.5, 4, 0.5, 4), dtypes=F32, id="special_zeta_out"),
        OpTest("sinc", lambda a: a.sinc(), sinc, unary, dtypes=FLOATS, id="sinc_method"),
        OpTest("sinc", lambda a: a.clone().sinc_(), sinc, unary, dtypes=FLOAT_ALL,
               id="sinc_inplace"),
        OpTest("mvlgamma", lambda a: a.clone().mvlgamma_(2), mvlgamma_ref(2),
               lambda d, rng: unary_samples(d, rng, 1.5, 5), dtypes=FLOATS,
               id="mvlgamma_inplace"),
        OpTest("special_bessel_j0", out(flambeau.special.bessel_j0), scipy_fn("j0"), unary,
               dtypes=F32, id="special_bessel_j0_out"),
    ]  # fmt: skip


def sinc_ref(x):
    with np.errstate(invalid="ignore"):  # sinc(inf) is NaN
        return np.sinc(x)


def sinc_rows():
    fn, ref = flambeau.sinc, sinc_ref
    return [
        OpTest("sinc", fn, ref, lambda d, rng: unary_samples(d, rng), dtypes=FLOAT_ALL),
        OpTest("sinc", fn, f32(ref), lambda d, rng: unary_samples(d, rng, -3, 3),
               dtypes=("int8", "int32"), id="sinc_int", **F32_TOL),
        OpTest("sinc", fn, ref, lambda d, rng: unary_samples(d, rng, -2, 2),
               dtypes=("complex64", "complex128"), id="sinc_complex"),
        OpTest("sinc", fn, ref, edge_samples([0.0, -0.0, 1.0, -2.0, 1e-30, np.inf, np.nan]),
               dtypes=("float32",), id="sinc_edges"),
    ]  # fmt: skip


TESTS = [
    *unary_rows(),
    *xlog_rows("xlogy", flambeau.xlogy, "xlogy"),
    *xlog_rows("special_xlog1py", flambeau.special.xlog1py, "xlog1py"),
    *gamma_rows("igamma", flambeau.igamma, "gammainc"),
    *gamma_rows("igammac", flambeau.igammac, "gammaincc"),
    *zeta_rows(),
    *polynomial_rows(),
    *mvlgamma_rows(),
    *sinc_rows(),
    *variant_rows(),
]
