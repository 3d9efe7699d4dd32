"""Rows for the indexing operators (gather/scatter, index_*, masked_*, take, nonzero).

References are NumPy fancy indexing or plain loops over np.ndindex (the samples
are small), so every accumulate row checks the same sums in index order."""

import numpy as np

import flambeau

from . import OpTest, Sample, make

# Data movement: every dtype.
ALL = (
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
)
# Arithmetic (accumulate, reductions): no bool.
NUMERIC = tuple(d for d in ALL if d != "bool")
ORDERED = tuple(d for d in NUMERIC if not d.startswith("complex"))
FLOATS = ("float16", "bfloat16", "float32", "float64")


def arr(shape, dtype, rng, layout="", low=-3, high=3):
    """An array of `shape`: contiguous, "strided" (every other column) or "T" (transposed)."""
    if layout == "T":
        return make(tuple(reversed(shape)), dtype, rng, low=low, high=high).T
    a = make(shape, dtype, rng, noncontig=layout == "strided", low=low, high=high)
    return a.reshape(shape) if a.ndim != len(shape) else a


def idx(values):
    return np.asarray(values, dtype=np.int64)


def randidx(rng, shape, size):
    return rng.integers(0, size, size=shape).astype(np.int64)


def call(name, **fixed):
    return lambda *a, **kw: getattr(flambeau, name)(*a, **kw, **fixed)


def method(name, **fixed):
    return lambda x, *a, **kw: getattr(x, name)(*a, **kw, **fixed)


def inplace(name):
    """x.clone().name_(...): the in-place variant, on a copy."""
    return lambda x, *a, **kw: getattr(x.clone(), name + "_")(*a, **kw)


def with_out(name, dtype=None):
    """name(..., out=out) into a fresh empty tensor of the result's dtype (resized)."""

    def run(x, *a, **kw):
        out = flambeau.empty(0, dtype=dtype or x.dtype, device=x.device)
        r = getattr(flambeau, name)(x, *a, **kw, out=out)
        assert r is out
        return out

    return run


# ---- index / index_put: `layout` says where the index arrays go (1) and where None does (0).


def _place(layout, idxs, none):
    it = iter(idxs)
    return [next(it) if k else none for k in layout]


def index_fn(a, *idxs, layout):
    return flambeau.index(a, _place(layout, idxs, None))


def index_ref(a, *idxs, layout):
    return a[tuple(_place(layout, idxs, slice(None)))]


def index_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((5, 4)), idx([0, 4, -1, 2])), {"layout": (1,)}, note="1-d, negative")
    yield Sample(
        (m((3, 4, 5), "strided"), idx([[0, 2, 1], [1, 1, 0]]), idx([4, 0, 3])),
        {"layout": (1, 0, 1)},
        note="separated: index dims first",
    )
    yield Sample(
        (m((3, 4, 5)), idx([[1], [3]]), idx([4, 0, -5])),
        {"layout": (0, 1, 1)},
        note="adjacent, broadcast",
    )
    yield Sample((m((3, 4, 2)), rng.random((3, 4)) > 0.5), {"layout": (1,)}, note="bool mask")
    yield Sample((m((3, 4)), rng.random((3, 4)) > 0.5), {"layout": (1,)}, note="full mask")
    yield Sample((m((4, 3), "T"), rng.random(3) > 0.3), {"layout": (0, 1)}, note="mask on dim 1")
    yield Sample((m(()),), {"layout": ()}, note="0-dim, no index")
    yield Sample((m((0, 3)), idx([])), {"layout": (1,)}, note="empty")
    yield Sample((m((3, 4)), idx([]).reshape(0, 1)), {"layout": (0, 1)}, note="empty index")
    yield Sample((m((3, 4)), np.asarray([2, 0], dtype=np.int32)), {"layout": (1,)}, note="int32")


def index_put_fn(a, v, *idxs, layout, accumulate=False):
    return flambeau.index_put(a, _place(layout, idxs, None), v, accumulate=accumulate)


def index_put_inplace_fn(a, v, *idxs, layout, accumulate=False):
    return a.clone().index_put_(tuple(_place(layout, idxs, None)), v, accumulate=accumulate)


def index_put_ref(a, v, *idxs, layout, accumulate=False):
    r = np.array(a, copy=True)
    key = tuple(_place(layout, idxs, slice(None)))
    if accumulate:
        np.add.at(r, key, v)
    else:
        r[key] = v
    return r


def index_put_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((5, 4)), m((3, 4)), idx([0, 4, -2])), {"layout": (1,)})
    yield Sample(
        (m((3, 4, 5), "strided"), m((4,)), idx([[0], [2]]), idx([4, 0, 3])),
        {"layout": (1, 0, 1)},
        note="separated, broadcast value",
    )
    yield Sample((m((3, 4, 5)), m((1,)), idx([1, 3]), idx([4, 0])), {"layout": (0, 1, 1)})
    yield Sample((m((3, 4)), m(()), rng.random((3, 4)) > 0.5), {"layout": (1,)}, note="mask")
    yield Sample((m((0, 3)), m((3,)), idx([])), {"layout": (1,)}, note="empty")
    if dtype != "bool":
        yield Sample(
            (m((5, 3)), m((4, 3)), idx([0, 4, 0, -5])),
            {"layout": (1,), "accumulate": True},
            note="accumulate duplicates",
        )
        yield Sample(
            (m((2, 3), "T"), m((2,)), idx([1, 1]), idx([0, 0])),
            {"layout": (1, 1), "accumulate": True},
            note="accumulate 2 indices",
        )


# ---- dim-wise operators


def _loop_scatter(a, dim, index, src, combine):
    """r = a.copy(); r[pos with dim = index[pos]] = combine(old, src[pos]) for pos in index."""
    r = np.array(a, copy=True)
    if r.ndim == 0:
        r = r.reshape(1)
        index, src = index.reshape(-1), np.reshape(src, -1) if np.ndim(src) else src
    for pos in np.ndindex(*index.shape):
        tgt = list(pos)
        tgt[dim] = index[pos]
        v = src[pos] if np.ndim(src) else src
        r[tuple(tgt)] = combine(r[tuple(tgt)], v)
    return r.reshape(np.shape(a))


def gather_ref(a, dim, index, sparse_grad=False):
    if a.ndim == 0:
        return a.reshape(1)[index.reshape(-1)].reshape(index.shape)
    sub = a[
        tuple(slice(0, s) if d != dim % a.ndim else slice(None) for d, s in enumerate(index.shape))
    ]
    return np.take_along_axis(sub, index, axis=dim)


def gather_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((4, 3)), 0, randidx(rng, (5, 3), 4)))
    yield Sample((m((4, 6), "strided"), 1, randidx(rng, (2, 4), 6)), note="strided, smaller")
    yield Sample((m((3, 4, 5), "T"), -1, randidx(rng, (3, 4, 2), 3)), note="transposed")
    yield Sample((m(()), 0, idx(0)), note="0-dim")
    yield Sample((m((3, 0)), 0, randidx(rng, (2, 0), 3)), note="empty")
    yield Sample((m((300, 200)), 0, randidx(rng, (300, 200), 300)), note="large (parallel)")
    yield Sample((m((4, 3)), 1, randidx(rng, (4, 2), 3)), {"sparse_grad": True}, note="sparse")


def scatter_ref(a, dim, index, src=None, value=None, reduce=None):
    src = value if src is None else src
    combine = {
        None: lambda old, v: v,
        "add": lambda old, v: old + v,
        "multiply": lambda old, v: old * v,
    }[reduce]
    return _loop_scatter(a, dim % max(a.ndim, 1), index, src, combine)


def unique_index(rng, shape, size, dim):
    """An index whose entries along dim are distinct (assignment order cannot matter)."""
    out = np.empty(shape, dtype=np.int64)
    for pos in np.ndindex(*[s for d, s in enumerate(shape) if d != dim]):
        perm = rng.permutation(size)[: shape[dim]]
        key = list(pos)
        key.insert(dim, slice(None))
        out[tuple(key)] = perm
    return out


def scatter_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((4, 3)), 0, unique_index(rng, (2, 3), 4, 0), m((2, 3))))
    yield Sample(
        (m((4, 6), "strided"), 1, unique_index(rng, (3, 4), 6, 1), m((5, 4))),
        note="strided, src larger",
    )
    yield Sample((m((3, 4, 5), "T"), -1, unique_index(rng, (3, 4, 2), 5, 2), m((3, 4, 2))))
    yield Sample((m(()), 0, idx(0), m(())), note="0-dim")
    yield Sample((m((3, 0)), 0, randidx(rng, (2, 0), 3), m((2, 0))), note="empty")
    yield Sample((m((4, 3)), 1, unique_index(rng, (4, 2), 3, 1)), {"value": 2}, note="value")
    if dtype != "bool":
        yield Sample((m((4, 3)), 0, randidx(rng, (5, 3), 4), m((5, 3))), {"reduce": "add"})
        yield Sample((m((4, 3)), 0, randidx(rng, (3, 3), 4), m((3, 3))), {"reduce": "multiply"})


def scatter_fn(name):
    """scatter's src/value overloads: value= as a keyword, src positionally."""
    f = getattr(flambeau, name) if name != "scatter_" else None

    def run(a, dim, index, *src, **kw):
        if name == "scatter_":
            return a.clone().scatter_(dim, index, *src, **kw)
        return f(a, dim, index, *src, **kw)

    return run


def scatter_add_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((4, 3)), 0, randidx(rng, (6, 3), 4), m((6, 3))), note="duplicates")
    yield Sample((m((4, 6), "strided"), 1, randidx(rng, (3, 8), 6), m((5, 8))), note="strided")
    yield Sample((m(()), 0, idx(0), m(())), note="0-dim")
    yield Sample((m((3, 0)), 0, randidx(rng, (2, 0), 3), m((2, 0))), note="empty")


def scatter_add_ref(a, dim, index, src):
    return scatter_ref(a, dim, index, src, reduce="add")


REDUCE = {
    "sum": (np.add, 0),
    "prod": (np.multiply, 1),
    "amax": (np.maximum, None),
    "amin": (np.minimum, None),
}


def scatter_reduce_ref(a, dim, index, src, reduce, include_self=True):
    d = dim % max(a.ndim, 1)
    a1, i1, s1 = (
        (a.reshape(1), index.reshape(-1), src.reshape(-1)) if a.ndim == 0 else (a, index, src)
    )
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    groups = {}
    for pos in np.ndindex(*i1.shape):
        tgt = list(pos)
        tgt[d] = i1[pos]
        groups.setdefault(tuple(tgt), []).append(wide(s1[pos]))
    r = np.array(a1, dtype=wide, copy=True)
    for tgt, vals in groups.items():
        vals = ([wide(a1[tgt])] if include_self else []) + vals
        if reduce == "mean":
            s = np.sum(vals)
            v = s / len(vals) if a.dtype.kind in "fc" else np.floor(s / len(vals))
        else:
            v = REDUCE[reduce][0].reduce(np.asarray(vals))
        r[tgt] = v
    return r.astype(a.dtype).reshape(a.shape)


def scatter_reduce_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        if reduce in ("amax", "amin") and dtype.startswith("complex"):
            continue
        for include_self in (True, False):
            yield Sample(
                (m((4, 3)), 0, randidx(rng, (5, 3), 4), m((5, 3)), reduce),
                {"include_self": include_self},
                note=reduce,
            )
        yield Sample(
            (m((3, 6), "strided"), 1, randidx(rng, (3, 4), 6), m((3, 5)), reduce),
            note=f"{reduce} strided",
        )
    yield Sample((m(()), 0, idx(0), m(()), "sum"), note="0-dim")
    yield Sample(
        (m((3, 0)), 0, randidx(rng, (2, 0), 3), m((2, 0)), "amin" if dtype[0] != "c" else "sum"),
        note="empty",
    )


def index_select_ref(a, dim, index):
    if a.ndim == 0:
        return np.array(a, copy=True)
    return np.take(a, index.reshape(-1), axis=dim)


def index_select_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((4, 3)), 0, idx([3, 0, 0, 2, 1])))
    yield Sample((m((4, 6), "strided"), 1, idx([5, 1])), note="strided")
    yield Sample((m((3, 4, 5), "T"), -1, idx(2)), note="transposed, 0-dim index")
    yield Sample((m(()), 0, idx([0])), note="0-dim")
    yield Sample((m((3, 0)), 0, idx([2, 1])), note="empty")
    yield Sample((m((3, 4)), 1, idx([])), note="empty index")
    yield Sample((m((3, 4)), 1, np.asarray([3, 0], dtype=np.int32)), note="int32 index")
    yield Sample((m((400, 100)), 0, randidx(rng, (500,), 400)), note="large (parallel)")


def _moved(a, dim, index, f):
    """Applies f(r_moved, i, k) for each position k of index along dim (moved to the front)."""
    r = np.array(a, copy=True)
    r1 = r.reshape(1) if r.ndim == 0 else r
    rm = np.moveaxis(r1, dim, 0)
    for k, i in enumerate(np.reshape(index, -1)):
        f(rm, int(i), k)
    return r


def index_add_ref(a, dim, index, source, alpha=1):
    s = np.moveaxis(source.reshape(1) if source.ndim == 0 else source, dim, 0)
    wide = np.complex128 if a.dtype.kind == "c" else np.float64

    def f(rm, i, k):
        rm[i] = (wide(alpha) * s[k].astype(wide) + rm[i].astype(wide)).astype(a.dtype)

    return _moved(a, dim, index, f)


def index_copy_ref(a, dim, index, source):
    s = np.moveaxis(source.reshape(1) if source.ndim == 0 else source, dim, 0)

    def f(rm, i, k):
        rm[i] = s[k]

    return _moved(a, dim, index, f)


def index_fill_ref(a, dim, index, value):
    def f(rm, i, k):
        rm[i] = value

    return _moved(a, dim, index, f)


def index_copy_samples(dtype, rng, duplicates=False):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    i4 = idx([3, 0, 3, 1]) if duplicates else idx([3, 0, 2])
    yield Sample((m((5, 3)), 0, i4, m((len(i4), 3))))
    yield Sample((m((3, 6), "strided"), 1, idx([5, 1]), m((3, 2), "T")), note="strided")
    yield Sample((m(()), 0, idx([0]), m(())), note="0-dim")
    yield Sample((m((3, 0)), 0, idx([2, 1]), m((2, 0))), note="empty")
    yield Sample((m((3, 4)), -1, np.asarray([1], dtype=np.int32), m((3, 1))), note="int32")


def index_add_samples(dtype, rng):
    yield from index_copy_samples(dtype, rng, duplicates=True)
    m = lambda s: arr(s, dtype, rng)  # noqa: E731
    alpha = 2 if dtype in ("uint8", "int8", "int16", "int32", "int64") else 0.5
    yield Sample((m((4, 3)), 1, idx([2, 2]), m((4, 2))), {"alpha": alpha}, note="alpha")


def index_fill_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    v = True if dtype == "bool" else 2
    yield Sample((m((5, 3)), 0, idx([3, 0, -1]), v))
    yield Sample((m((3, 6), "strided"), 1, idx([5, 1]), v), note="strided")
    yield Sample((m(()), 0, idx([0]), v), note="0-dim")
    yield Sample((m((3, 0)), 0, idx([2, 1]), v), note="empty")
    yield Sample((m((4, 3)), 1, idx([2, 2]), m(())), note="0-dim tensor value, duplicates")


def tensor_value(fn):
    """fn with its last argument given as a 0-dim tensor."""

    def run(*a, **kw):
        v = (
            a[-1]
            if isinstance(a[-1], flambeau.Tensor)
            else flambeau.tensor(a[-1], dtype=a[0].dtype, device=a[0].device)
        )
        return fn(*a[:-1], v, **kw)

    return run


def masked_fill_ref(a, mask, value):
    return np.where(mask, np.asarray(value).astype(a.dtype), a).astype(a.dtype)


def masked_fill_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    v = True if dtype == "bool" else -2
    yield Sample((m((4, 3)), rng.random((4, 3)) > 0.5, v))
    yield Sample((m((3, 6), "strided"), rng.random(6) > 0.5, v), note="strided, broadcast mask")
    yield Sample((m((3, 1)), rng.random((2, 3, 4)) > 0.5, v), note="broadcast both")
    yield Sample((m(()), np.asarray(True), v), note="0-dim")
    yield Sample((m((0, 3)), rng.random(3) > 0.5, v), note="empty")
    yield Sample((m((300, 200)), rng.random((300, 200)) > 0.5, v), note="large")
    yield Sample((m((3, 4)), rng.random(4) > 0.5, m(())), note="0-dim tensor value")


def masked_fill_inplace_samples(dtype, rng):
    for s in masked_fill_samples(dtype, rng):
        if s.note != "broadcast both":
            yield s


def masked_select_ref(a, mask):
    a, mask = np.broadcast_arrays(a, mask)
    return a[mask]


def masked_select_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((4, 3)), rng.random((4, 3)) > 0.5))
    yield Sample((m((3, 6), "strided"), rng.random(6) > 0.5), note="strided, broadcast mask")
    yield Sample((m((4, 3), "T"), rng.random((2, 1, 3)) > 0.5), note="transposed, broadcast")
    yield Sample((m(()), np.asarray(True)), note="0-dim")
    yield Sample((m((0, 3)), rng.random(3) > 0.5), note="empty")
    yield Sample((m((700, 300)), rng.random((700, 300)) > 0.5), note="large (parallel)")


def masked_scatter_ref(a, mask, source):
    r = np.array(np.broadcast_to(a, np.broadcast_shapes(a.shape, mask.shape)), copy=True)
    mask = np.broadcast_to(mask, r.shape)
    r[mask] = source.reshape(-1)[: int(mask.sum())]
    return r


def masked_scatter_samples(dtype, rng, broadcast_input=True):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((4, 3)), rng.random((4, 3)) > 0.5, m((4, 3))))
    yield Sample((m((3, 6), "strided"), rng.random(6) > 0.5, m((5, 5))), note="strided")
    yield Sample((m((4, 3), "T"), rng.random((3,)) > 0.5, m((12,))), note="transposed")
    if broadcast_input:
        yield Sample((m((3, 1)), rng.random((2, 3, 4)) > 0.5, m((24,))), note="broadcast")
    yield Sample((m(()), np.asarray(True), m((2,))), note="0-dim")
    yield Sample((m((0, 3)), rng.random(3) > 0.5, m((1,))), note="empty")


def take_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((4, 3)), idx([[0, 11], [-1, 5]])), note="negative")
    yield Sample((m((3, 6), "strided"), idx([17, 0, 3])), note="strided")
    yield Sample((m((3, 4), "T"), idx(7)), note="transposed, 0-dim index")
    yield Sample((m(()), idx([0, -1, 0])), note="0-dim")
    yield Sample((m((3, 0)), idx([])), note="empty")
    yield Sample((m((500, 300)), randidx(rng, (1000, 100), 150000)), note="large (parallel)")


def take_along_dim_ref(a, indices, dim=None):
    if dim is None:
        return a.reshape(-1)[indices.reshape(-1)]
    if a.ndim == 0:
        return a.reshape(1)[indices.reshape(-1)].reshape(indices.shape)
    return np.take_along_axis(a, indices, axis=dim)


def take_along_dim_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout)  # noqa: E731
    yield Sample((m((4, 3)), randidx(rng, (2, 3), 4)), {"dim": 0})
    yield Sample((m((4, 6), "strided"), randidx(rng, (1, 5), 6)), {"dim": 1}, note="broadcast")
    yield Sample((m((1, 3, 5), "T"), randidx(rng, (2, 1, 5), 1)), {"dim": 0}, note="transposed")
    yield Sample((m((4, 3)), randidx(rng, (5,), 12)), note="flat")
    yield Sample((m(()), idx(0)), {"dim": 0}, note="0-dim")
    yield Sample((m((3, 0)), randidx(rng, (2, 0), 3)), {"dim": 0}, note="empty")


def nonzero_samples(dtype, rng):
    m = lambda s, layout="": arr(s, dtype, rng, layout, low=-1, high=1)  # noqa: E731
    yield Sample((m((4, 3)),))
    yield Sample((m((3, 6), "strided"),), note="strided")
    yield Sample((m((2, 3, 4), "T"),), note="transposed 3-d")
    yield Sample((m(()),), note="0-dim")
    yield Sample((np.zeros((), dtype=m(()).dtype),), note="0-dim zero")
    yield Sample((m((3, 0)),), note="empty")
    yield Sample((m((500, 300)),), note="large (parallel)")


def nonzero_tuple_ref(a, as_tuple):
    if not as_tuple:
        return np.argwhere(a)
    if a.ndim == 0:
        return (np.zeros(1 if a != 0 else 0, dtype=np.int64),)
    return tuple(np.nonzero(a))


TESTS = [
    OpTest("index", index_fn, index_ref, index_samples, dtypes=ALL),
    OpTest("index_put", index_put_fn, index_put_ref, index_put_samples, dtypes=ALL),
    OpTest(
        "index_put",
        index_put_inplace_fn,
        index_put_ref,
        index_put_samples,
        dtypes=ALL,
        id="index_put_",
    ),
    OpTest(
        "index_select", flambeau.index_select, index_select_ref, index_select_samples, dtypes=ALL
    ),
    OpTest(
        "index_select",
        with_out("index_select"),
        index_select_ref,
        index_select_samples,
        dtypes=("float32", "int64"),
        id="index_select_out",
    ),
    OpTest("gather", flambeau.gather, gather_ref, gather_samples, dtypes=ALL),
    OpTest(
        "gather",
        method("gather"),
        gather_ref,
        gather_samples,
        dtypes=("float64",),
        id="gather_method",
    ),
    OpTest(
        "gather",
        with_out("gather"),
        gather_ref,
        gather_samples,
        dtypes=("float32",),
        id="gather_out",
    ),
    OpTest("scatter", scatter_fn("scatter"), scatter_ref, scatter_samples, dtypes=ALL),
    OpTest(
        "scatter", scatter_fn("scatter_"), scatter_ref, scatter_samples, dtypes=ALL, id="scatter_"
    ),
    OpTest(
        "scatter",
        with_out("scatter"),
        scatter_ref,
        scatter_samples,
        dtypes=("float32",),
        id="scatter_out",
    ),
    OpTest(
        "scatter_add", flambeau.scatter_add, scatter_add_ref, scatter_add_samples, dtypes=NUMERIC
    ),
    OpTest(
        "scatter_add",
        inplace("scatter_add"),
        scatter_add_ref,
        scatter_add_samples,
        dtypes=("float64", "int32"),
        id="scatter_add_",
    ),
    OpTest(
        "scatter_add",
        with_out("scatter_add"),
        scatter_add_ref,
        scatter_add_samples,
        dtypes=("float32",),
        id="scatter_add_out",
    ),
    OpTest(
        "scatter_reduce",
        flambeau.scatter_reduce,
        scatter_reduce_ref,
        scatter_reduce_samples,
        dtypes=NUMERIC,
    ),
    OpTest(
        "scatter_reduce",
        inplace("scatter_reduce"),
        scatter_reduce_ref,
        scatter_reduce_samples,
        dtypes=("float64", "int64"),
        id="scatter_reduce_",
    ),
    OpTest(
        "scatter_reduce",
        with_out("scatter_reduce"),
        scatter_reduce_ref,
        scatter_reduce_samples,
        dtypes=("float32",),
        id="scatter_reduce_out",
    ),
    OpTest("index_add", flambeau.index_add, index_add_ref, index_add_samples, dtypes=NUMERIC),
    OpTest(
        "index_add",
        inplace("index_add"),
        index_add_ref,
        index_add_samples,
        dtypes=("float64", "int16"),
        id="index_add_",
    ),
    OpTest(
        "index_add",
        with_out("index_add"),
        index_add_ref,
        index_add_samples,
        dtypes=("float32",),
        id="index_add_out",
    ),
    OpTest("index_copy", flambeau.index_copy, index_copy_ref, index_copy_samples, dtypes=ALL),
    OpTest(
        "index_copy",
        inplace("index_copy"),
        index_copy_ref,
        index_copy_samples,
        dtypes=("float64", "bool"),
        id="index_copy_",
    ),
    OpTest(
        "index_copy",
        with_out("index_copy"),
        index_copy_ref,
        index_copy_samples,
        dtypes=("float32",),
        id="index_copy_out",
    ),
    OpTest("index_fill", flambeau.index_fill, index_fill_ref, index_fill_samples, dtypes=ALL),
    OpTest(
        "index_fill",
        inplace("index_fill"),
        index_fill_ref,
        index_fill_samples,
        dtypes=("float64", "uint8"),
        id="index_fill_",
    ),
    OpTest(
        "index_fill",
        tensor_value(flambeau.index_fill),
        index_fill_ref,
        index_fill_samples,
        dtypes=("float64", "int64"),
        id="index_fill_tensor_value",
    ),
    OpTest("masked_fill", flambeau.masked_fill, masked_fill_ref, masked_fill_samples, dtypes=ALL),
    OpTest(
        "masked_fill",
        inplace("masked_fill"),
        masked_fill_ref,
        masked_fill_inplace_samples,
        dtypes=("float64", "bool", "complex64"),
        id="masked_fill_",
    ),
    OpTest(
        "masked_fill",
        tensor_value(flambeau.masked_fill),
        masked_fill_ref,
        masked_fill_samples,
        dtypes=("float64", "int32"),
        id="masked_fill_tensor_value",
    ),
    OpTest(
        "masked_select",
        flambeau.masked_select,
        masked_select_ref,
        masked_select_samples,
        dtypes=ALL,
    ),
    OpTest(
        "masked_select",
        with_out("masked_select"),
        masked_select_ref,
        masked_select_samples,
        dtypes=("float32",),
        id="masked_select_out",
    ),
    OpTest(
        "masked_scatter",
        flambeau.masked_scatter,
        masked_scatter_ref,
        masked_scatter_samples,
        dtypes=ALL,
    ),
    OpTest(
        "masked_scatter",
        inplace("masked_scatter"),
        masked_scatter_ref,
        lambda d, r: masked_scatter_samples(d, r, broadcast_input=False),
        dtypes=("float64", "int8"),
        id="masked_scatter_",
    ),
    OpTest("take", flambeau.take, lambda a, i: np.take(a, i), take_samples, dtypes=ALL),
    OpTest(
        "take",
        with_out("take"),
        lambda a, i: np.take(a, i),
        take_samples,
        dtypes=("float32",),
        id="take_out",
    ),
    OpTest(
        "take_along_dim",
        flambeau.take_along_dim,
        take_along_dim_ref,
        take_along_dim_samples,
        dtypes=ALL,
    ),
    OpTest(
        "take_along_dim",
        with_out("take_along_dim"),
        take_along_dim_ref,
        take_along_dim_samples,
        dtypes=("float32",),
        id="take_along_dim_out",
    ),
    OpTest("nonzero", flambeau.nonzero, np.argwhere, nonzero_samples, dtypes=ALL),
    OpTest(
        "nonzero",
        method("nonzero"),
        np.argwhere,
        nonzero_samples,
        dtypes=("float32",),
        id="nonzero_method",
    ),
    OpTest(
        "nonzero",
        lambda a: flambeau.nonzero(a, as_tuple=True),
        lambda a: nonzero_tuple_ref(a, True),
        nonzero_samples,
        dtypes=("float32", "bool"),
        id="nonzero_as_tuple",
    ),
    OpTest(
        "nonzero",
        lambda a: flambeau.nonzero(a, as_tuple=False),
        lambda a: nonzero_tuple_ref(a, False),
        nonzero_samples,
        dtypes=("int64",),
        id="nonzero_as_tuple_false",
    ),
    OpTest(
        "nonzero",
        with_out("nonzero", flambeau.int64),
        np.argwhere,
        nonzero_samples,
        dtypes=("float32",),
        id="nonzero_out",
    ),
    OpTest("argwhere", flambeau.argwhere, np.argwhere, nonzero_samples, dtypes=ALL),
]
