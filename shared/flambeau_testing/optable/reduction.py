"""Rows for reductions and scans. References compute in float64 (or int64) and
the comparison casts, so 16-bit rows check the kernel, not NumPy's float16 sums."""

import numpy as np

import flambeau

from . import ALL_REAL, COMPLEX, FLOATS, OpTest, Sample, binary_samples, make

# The 16-bit rows need Tensor.to (the table's make rounds through it).
HALF = ("float16", "bfloat16") if hasattr(flambeau.Tensor, "to") else ()
REAL = tuple(d for d in ALL_REAL if d in HALF or d not in ("float16", "bfloat16"))
REAL_BOOL = REAL + ("bool",)
FLOAT = FLOATS + HALF


def axis_kw(kw):
    """flambeau keyword arguments -> NumPy's (dim -> axis, keepdim -> keepdims)."""
    out = {}
    if kw.get("dim") is not None:
        d = kw["dim"]
        out["axis"] = tuple(d) if isinstance(d, (list, tuple)) else d
    if "keepdim" in kw:
        out["keepdims"] = kw["keepdim"]
    return out


def wide(a):
    """a in float64 / complex128 / int64 for reference arithmetic."""
    if np.issubdtype(a.dtype, np.complexfloating):
        return a.astype(np.complex128)
    if np.issubdtype(a.dtype, np.floating):
        return a.astype(np.float64)
    return a.astype(np.int64)


def reduce_samples(dtype, rng, *, empty_dims=True, large=True, nan=False, low=-3.0, high=3.0):
    """Inputs with dim/keepdim options: 0-dim, strided, transposed, tuple dims, empty and
    (when large) sizes over the threading grain, reducing inner, outer and all dims."""

    def m(shape, **kw):
        a = make(shape, dtype, rng, low=low, high=high, **kw)
        if nan and a.size > 2 and np.issubdtype(a.dtype, np.floating):
            a = np.array(a)
            a.flat[1] = np.nan
        return a

    yield Sample((m(()),), note="0-dim")
    yield Sample((m(()),), {"dim": 0, "keepdim": True}, note="0-dim dim")
    yield Sample((m((7,)),))
    yield Sample((m((3, 5), noncontig=True),), {"dim": 1}, note="strided")
    yield Sample((m((4, 3)).T,), {"dim": 0, "keepdim": True}, note="transposed")
    yield Sample((m((2, 3, 40)),), {"dim": (0, 2)}, note="tuple dims")
    yield Sample((m((2, 3, 40)),), {"dim": -1, "keepdim": False})
    yield Sample((m((0, 3)),), {"dim": 1}, note="empty input, non-empty dim")
    if empty_dims:
        yield Sample((m((0, 3)),), {"dim": 0}, note="empty reduced dim")
        yield Sample((m((0,)),), note="empty, all dims")
    if large:
        big = m((70, 600))
        yield Sample((big,), note="large all")
        yield Sample((big,), {"dim": 1}, note="large rows")
        yield Sample((big,), {"dim": 0}, note="large cols")
        yield Sample((m((300, 200)).T,), {"dim": 1}, note="large transposed")


def ref(fn, cast=None):
    """NumPy reference fn(wide(a), **axis kwargs), cast back to `cast(a)`'s dtype."""

    def run(a, **kw):
        kw = {k: v for k, v in kw.items() if a.ndim or k != "dim"}  # 0-dim: dim 0 is a no-op
        r = fn(wide(a), **axis_kw(kw))
        return np.asarray(r) if cast is None else np.asarray(r).astype(cast(a))

    return run


def same(a):
    return a.dtype


def acc_of(a):
    return a.dtype if np.issubdtype(a.dtype, np.inexact) else np.int64


def real_of(a):
    return np.abs(np.zeros(1, a.dtype)).dtype


def call(name, **fixed):
    return lambda *a, **kw: getattr(flambeau, name)(*a, **kw, **fixed)


def vector_norm(p):
    def f(a, axis=None, keepdims=False):
        x = np.abs(a)
        if p == np.inf:
            return np.max(x, axis=axis, keepdims=keepdims)
        if p == -np.inf:
            return np.min(x, axis=axis, keepdims=keepdims)
        if p == 0:
            return np.sum(x != 0, axis=axis, keepdims=keepdims).astype(np.float64)
        return np.sum(x**p, axis=axis, keepdims=keepdims) ** (1.0 / p)

    return f


def logsumexp_ref(a, axis=None, keepdims=False):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isinf(m), 0, m)
    r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


def arg_ref(fn):
    def run(a, dim=None, keepdim=False):
        if dim is not None and a.ndim == 0:
            return np.asarray(0)
        return np.asarray(fn(a, axis=dim, keepdims=keepdim))

    return run


def dim_pair_ref(vf, af):
    def run(a, dim, keepdim=False):
        if a.ndim == 0:
            return (a, np.asarray(0))
        v = vf(a, axis=dim, keepdims=keepdim)
        i = af(a, axis=dim, keepdims=keepdim)
        return (v, i)

    return run


def dim_samples(dtype, rng, nan=False):
    """max/min/argmax along one dim (no empty reduced dims)."""
    for s in reduce_samples(dtype, rng, empty_dims=False, nan=nan, low=-2, high=2):
        d = s.kwargs.get("dim")
        if isinstance(d, tuple):
            continue
        if d is None and s.args[0].ndim:
            s.kwargs["dim"] = 0
        s.kwargs.setdefault("dim", 0)
        yield s


def flat_samples(dtype, rng, nan=False):
    for s in reduce_samples(dtype, rng, empty_dims=False, nan=nan, low=-2, high=2):
        if s.args[0].size and not isinstance(s.kwargs.get("dim"), tuple):
            yield s


def all_samples(dtype, rng, nan=False):
    """Non-empty inputs, reduced over every dim (no keyword arguments)."""
    for s in flat_samples(dtype, rng, nan):
        if not s.kwargs:
            yield s


def moment_samples(dtype, rng):
    yield from reduce_samples(dtype, rng, empty_dims=False)
    a = make((4, 6), dtype, rng)
    yield Sample((a,), {"dim": 1, "correction": 0}, note="correction=0")
    yield Sample((a,), {"dim": (0, 1), "correction": 2, "keepdim": True}, note="correction=2")
    if dtype not in ("float16", "bfloat16"):  # 1000 + x is not representable in 16 bits
        yield Sample((a + 1000,), {"dim": 0}, note="large offset")


def logsumexp_big_samples(dtype, rng):
    yield Sample((make((3, 50), dtype, rng),))
    # Rows near +3000 and -3000 (after the row's * 1000) spread over a few units: exp
    # overflows (or underflows) but the softmax weights, the gradient, are far from one-hot.
    near = np.array([[3.0], [-3.0]]) + rng.uniform(-3, 3, (2, 3)) / 1000
    yield Sample((near.astype(dtype),), note="small, near +-3000")


def moment_ref(kind, with_mean=False):
    def run(a, dim=None, keepdim=False, correction=1):
        x = wide(a)
        axis = (tuple(dim) if isinstance(dim, (list, tuple)) else dim) if a.ndim else None
        n = x.size if axis is None else np.prod([x.shape[d] for d in np.atleast_1d(axis)])
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.sum(
                np.abs(x - np.mean(x, axis=axis, keepdims=True)) ** 2,
                axis=axis,
                keepdims=keepdim,
            ) / max(0, n - correction)
        v = np.sqrt(v) if kind == "std" else v
        v = v.astype(real_of(a))
        if with_mean:
            return (v, np.mean(x, axis=axis, keepdims=keepdim).astype(a.dtype))
        return v

    return run


def scan_samples(dtype, rng):
    def m(shape, **kw):
        return make(shape, dtype, rng, low=-2, high=2, **kw)

    yield Sample((m(()), 0), note="0-dim")
    yield Sample((m((0, 3)), 1), note="empty")
    yield Sample((m((7,)), 0))
    yield Sample((m((3, 5), noncontig=True), 1), note="strided")
    yield Sample((m((4, 3)).T, 0), note="transposed")
    yield Sample((m((2, 3, 40)), -1))
    yield Sample((m((2, 3, 40)), 1))
    yield Sample((m((300, 200)), 0), note="large outer")


def scan_ref(fn):
    def run(a, dim, dtype=None):
        x = wide(a) if a.dtype != np.bool_ else a.astype(np.int64)
        if a.ndim == 0:
            r = x
        else:
            r = fn(x, axis=dim)
        return r.astype(a.dtype) if np.issubdtype(a.dtype, np.inexact) else r

    return run


def sum_dtype_ref(a, **kw):
    return np.sum(a.astype(np.float64), **axis_kw(kw))


def prod_samples(dtype, rng):
    def m(shape, **kw):
        return make(shape, dtype, rng, low=-2, high=2, **kw)

    yield Sample((m(()),))
    yield Sample((m((0, 3)),), {"dim": 0})
    yield Sample((m((3, 5), noncontig=True),), {"dim": 1})
    yield Sample((m((4, 3)).T,), {"dim": 0, "keepdim": True})
    yield Sample((m((2, 3, 10)),), {"dim": -1})
    yield Sample((m((2, 3, 4)),))


def norm_samples(p):
    def gen(dtype, rng):
        for s in reduce_samples(dtype, rng, empty_dims=p not in (np.inf, -np.inf)):
            s.kwargs["p"] = p
            yield s

    return gen


def norm_ref(p):
    def run(a, p=2, dim=None, keepdim=False):
        kw = axis_kw({"dim": dim, "keepdim": keepdim})
        r = vector_norm(p if p != "fro" else 2)(wide(a), **kw)
        return np.asarray(r).astype(real_of(a))

    return run


def nan_samples(dtype, rng):
    return reduce_samples(dtype, rng, nan=True)


TESTS = [
    OpTest(
        "sum",
        flambeau.sum,
        ref(np.sum, acc_of),
        reduce_samples,
        dtypes=REAL_BOOL + COMPLEX,
    ),
    OpTest(
        "sum",
        call("sum", dtype=flambeau.float64),
        sum_dtype_ref,
        reduce_samples,
        dtypes=("int32", "float32"),
        id="sum_dtype",
    ),
    OpTest("nansum", flambeau.nansum, ref(np.nansum, acc_of), nan_samples, dtypes=REAL),
    OpTest(
        "mean",
        flambeau.mean,
        ref(np.mean, same),
        reduce_samples,
        dtypes=FLOAT + COMPLEX,
    ),
    OpTest(
        "mean",
        call("mean", dtype=flambeau.float64),
        ref(np.mean, lambda a: np.float64),
        reduce_samples,
        dtypes=("int64",),
        id="mean_dtype",
    ),
    OpTest("nanmean", flambeau.nanmean, ref(np.nanmean, same), nan_samples, dtypes=FLOAT),
    OpTest(
        "prod",
        flambeau.prod,
        ref(np.prod, acc_of),
        prod_samples,
        dtypes=REAL_BOOL + COMPLEX,
    ),
    OpTest(
        "max",
        flambeau.max,
        ref(np.max, same),
        lambda d, rng: all_samples(d, rng, True),
        dtypes=REAL_BOOL,
    ),
    OpTest(
        "max",
        lambda a, **kw: flambeau.max(a, kw["dim"], kw.get("keepdim", False)),
        dim_pair_ref(np.max, np.argmax),
        lambda d, rng: dim_samples(d, rng, nan=True),
        dtypes=REAL_BOOL,
        id="max_dim",
    ),
    OpTest(
        "max",
        flambeau.max,
        np.maximum,
        lambda d, rng: binary_samples(d, rng),
        dtypes=REAL_BOOL,
        id="max_other",
    ),
    OpTest(
        "min",
        flambeau.min,
        ref(np.min, same),
        lambda d, rng: all_samples(d, rng, True),
        dtypes=REAL_BOOL,
    ),
    OpTest(
        "min",
        lambda a, **kw: flambeau.min(a, kw["dim"], kw.get("keepdim", False)),
        dim_pair_ref(np.min, np.argmin),
        dim_samples,
        dtypes=REAL_BOOL,
        id="min_dim",
    ),
    OpTest(
        "min",
        flambeau.min,
        np.minimum,
        lambda d, rng: binary_samples(d, rng),
        dtypes=REAL_BOOL,
        id="min_other",
    ),
    OpTest(
        "amax",
        flambeau.amax,
        ref(np.max, same),
        lambda d, rng: (
            s
            for s in reduce_samples(d, rng, empty_dims=False, nan=True)
            if s.args[0].size or s.kwargs.get("dim")
        ),
        dtypes=REAL_BOOL,
    ),
    OpTest(
        "amin",
        flambeau.amin,
        ref(np.min, same),
        lambda d, rng: (
            s
            for s in reduce_samples(d, rng, empty_dims=False)
            if s.args[0].size or s.kwargs.get("dim")
        ),
        dtypes=REAL_BOOL,
    ),
    OpTest(
        "aminmax",
        flambeau.aminmax,
        lambda a, dim=None, keepdim=False: (
            np.min(a, axis=dim, keepdims=keepdim),
            np.max(a, axis=dim, keepdims=keepdim),
        ),
        lambda d, rng: (s for s in dim_samples(d, rng) if s.args[0].ndim),
        dtypes=REAL,
    ),
    OpTest(
        "argmax",
        flambeau.argmax,
        arg_ref(np.argmax),
        lambda d, rng: flat_samples(d, rng, nan=True),
        dtypes=REAL_BOOL,
    ),
    OpTest("argmin", flambeau.argmin, arg_ref(np.argmin), flat_samples, dtypes=REAL_BOOL),
    OpTest("var", flambeau.var, moment_ref("var"), moment_samples, dtypes=FLOAT + COMPLEX),
    OpTest("std", flambeau.std, moment_ref("std"), moment_samples, dtypes=FLOAT + COMPLEX),
    OpTest(
        "var_mean",
        flambeau.var_mean,
        moment_ref("var", True),
        moment_samples,
        dtypes=FLOAT + COMPLEX,
    ),
    OpTest(
        "std_mean",
        flambeau.std_mean,
        moment_ref("std", True),
        moment_samples,
        dtypes=FLOAT + COMPLEX,
    ),
    OpTest(
        "logsumexp",
        lambda a, dim=(), keepdim=False: flambeau.logsumexp(a, dim, keepdim),
        ref(logsumexp_ref, lambda a: a.dtype if a.dtype.kind == "f" else np.float32),
        lambda d, rng: reduce_samples(d, rng, empty_dims=False),
        dtypes=FLOAT + ("int32",),
    ),
    OpTest(
        "logsumexp",
        lambda a, **kw: flambeau.logsumexp(a * 1000, 1),
        lambda a, **kw: logsumexp_ref(a.astype(np.float64) * 1000, axis=1),
        logsumexp_big_samples,
        dtypes=FLOATS,
        id="logsumexp_big",
    ),
    OpTest(
        "all",
        flambeau.all,
        ref(np.all),
        lambda d, rng: reduce_samples(d, rng, low=0, high=1),
        dtypes=REAL_BOOL,
    ),
    OpTest(
        "any",
        flambeau.any,
        ref(np.any),
        lambda d, rng: reduce_samples(d, rng, low=0, high=1),
        dtypes=REAL_BOOL + COMPLEX,
    ),
    OpTest(
        "count_nonzero",
        flambeau.count_nonzero,
        lambda a, dim=None, keepdim=False: np.asarray(
            np.count_nonzero(a, axis=tuple(dim) if isinstance(dim, tuple) else dim)
        ),
        lambda d, rng: (
            Sample(s.args, {k: v for k, v in s.kwargs.items() if k == "dim"})
            for s in reduce_samples(d, rng, low=-1, high=1)
            if s.args[0].ndim
        ),
        dtypes=REAL_BOOL,
    ),
    OpTest("norm", flambeau.norm, norm_ref(2), norm_samples(2), dtypes=FLOAT + COMPLEX),
    OpTest("norm", flambeau.norm, norm_ref(1), norm_samples(1), dtypes=FLOATS, id="norm_1"),
    OpTest(
        "norm",
        flambeau.norm,
        norm_ref(3.5),
        norm_samples(3.5),
        dtypes=FLOATS + COMPLEX,
        id="norm_3.5",
    ),
    OpTest("norm", flambeau.norm, norm_ref(0), norm_samples(0), dtypes=FLOATS, id="norm_0"),
    OpTest(
        "norm",
        flambeau.norm,
        norm_ref(np.inf),
        norm_samples(np.inf),
        dtypes=FLOAT,
        id="norm_inf",
    ),
    OpTest(
        "norm",
        flambeau.norm,
        norm_ref(-np.inf),
        norm_samples(-np.inf),
        dtypes=FLOATS,
        id="norm_-inf",
    ),
    OpTest(
        "norm",
        flambeau.norm,
        norm_ref(2),
        norm_samples("fro"),
        dtypes=FLOATS,
        id="norm_fro",
    ),
    OpTest(
        "cumsum",
        flambeau.cumsum,
        scan_ref(np.cumsum),
        scan_samples,
        dtypes=REAL_BOOL + COMPLEX,
    ),
    OpTest(
        "cumprod",
        flambeau.cumprod,
        scan_ref(np.cumprod),
        scan_samples,
        dtypes=REAL_BOOL + COMPLEX,
    ),
]
