"""Rows for sorting, searching and counting. References use NumPy's stable sorts
(flambeau breaks ties by index, so indices must match exactly) with NaN last."""

import numpy as np

import flambeau

from . import ALL_REAL, FLOATS, OpTest, Sample, make

HALF = ("float16", "bfloat16")
REAL = ALL_REAL
REAL_BOOL = REAL + ("bool",)
FLOAT = FLOATS + HALF


def _floating(a):
    return np.issubdtype(a.dtype, np.floating)


def _m(dtype, rng, shape, *, ties=False, nan=False, noncontig=False):
    """An input; ties gives few distinct values, nan puts NaNs in float inputs. float64
    inputs stay tie- and NaN-free: autograd's gradcheck runs the float64 rows."""
    if dtype == "float64":
        ties = nan = False
    lo, hi = (-2, 2) if ties else (-50, 50)
    if dtype in ("uint8", "bool"):
        lo = 0
    a = make(shape, dtype, rng, low=lo, high=hi, noncontig=noncontig)
    if shape == ():  # make's 16-bit rounding turns 0-dim into shape (1,)
        a = np.asarray(a).reshape(())
    if ties and _floating(a):
        a = np.round(a)
    if nan and _floating(a) and a.size > 3:
        a = np.array(a)
        a.flat[1] = np.nan
        a.flat[a.size - 2] = np.nan
    return a


def dim_samples(dtype, rng, *, empty_dim=True, extra=None):
    """Inputs along a dim: 0-dim, 1-d, strided, transposed, ties, NaN, empty, large."""
    m = lambda shape, **kw: _m(dtype, rng, shape, **kw)  # noqa: E731
    extra = extra or {}
    yield Sample((m(()),), {"dim": 0, **extra}, note="0-dim")
    yield Sample((m((7,)),), {"dim": -1, **extra})
    yield Sample((m((9,), ties=True),), {"dim": 0, **extra}, note="ties")
    yield Sample((m((3, 5), noncontig=True),), {"dim": 1, **extra}, note="strided")
    yield Sample((m((4, 6), ties=True).T,), {"dim": 0, **extra}, note="transposed ties")
    yield Sample((m((2, 3, 11), nan=True),), {"dim": 1, **extra}, note="nan middle dim")
    yield Sample((m((3, 8), nan=True, ties=True),), {"dim": -1, **extra}, note="nan ties")
    yield Sample((m((0, 3)),), {"dim": 1, **extra}, note="zero-size, other dim")
    if empty_dim:
        yield Sample((m((3, 0)),), {"dim": 1, **extra}, note="zero-size dim")
    yield Sample((m((40, 1200), ties=True),), {"dim": 1, **extra}, note="over the grain")


def _order(x, axis, descending=False):
    """Stable argsort along axis, NaN largest; descending keeps ties in index order."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    rev = np.flip(x, axis)
    return n - 1 - np.flip(np.argsort(rev, axis=axis, kind="stable"), axis)


def _sort_ref(x, dim=-1, descending=False, stable=False):
    if x.ndim == 0:
        return x.copy(), np.array(0)
    idx = _order(x, dim, descending)
    return np.take_along_axis(x, idx, dim), idx


def _sort_samples(dtype, rng):
    for s in dim_samples(dtype, rng):
        yield s
        yield Sample(s.args, {**s.kwargs, "descending": True}, note=s.note + " descending")
    yield Sample((_m(dtype, rng, (5, 4), ties=True),), {"stable": True, "dim": 0})


def _topk_ref(x, k, dim=-1, largest=True, sorted=True):
    if x.ndim == 0:
        return x.copy(), np.array(0)
    idx = np.take(_order(x, dim, largest), np.arange(k), axis=dim)
    return np.take_along_axis(x, idx, dim), idx


def _topk_samples(dtype, rng):
    for s in dim_samples(dtype, rng):
        x = s.args[0]
        n = x.shape[s.kwargs["dim"]] if x.ndim else 1
        for k, largest in ((min(3, n), True), (n, False), (0, True)):
            if k == 0 and x.ndim == 0:
                continue
            yield Sample((x, k), {**s.kwargs, "largest": largest}, note=s.note)


def _kth_ref(x, k, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.array(0)
    idx = np.take(_order(x, dim), [k - 1], axis=dim)
    v = np.take_along_axis(x, idx, dim)
    return (v, idx) if keepdim else (v.squeeze(dim), idx.squeeze(dim))


def _kth_samples(dtype, rng):
    for s in dim_samples(dtype, rng, empty_dim=False):
        x = s.args[0]
        n = x.shape[s.kwargs["dim"]] if x.ndim else 1
        yield Sample((x, 1), s.kwargs, note=s.note)
        yield Sample((x, n), {**s.kwargs, "keepdim": True}, note=s.note + " keepdim")
        yield Sample((x, (n + 1) // 2), s.kwargs, note=s.note + " middle")


def _median_row(row, nan_skip):
    """(value, index) of the lower median of a 1-d row."""
    nans = np.isnan(row) if _floating(row) else np.zeros(row.shape, bool)
    if nans.any() and (not nan_skip or nans.all()):
        i = int(np.argmax(nans))
        return row[i], i
    order = np.argsort(row, kind="stable")
    c = int((~nans).sum())
    i = int(order[(c - 1) // 2])
    return row[i], i


def _median_dim_ref(nan_skip):
    def ref(x, dim, keepdim=False):
        if x.ndim == 0:
            return x.copy(), np.array(0)
        moved = np.moveaxis(x, dim, -1)
        flat = moved.reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1])
        vals = np.array([_median_row(r, nan_skip)[0] for r in flat], dtype=x.dtype)
        idx = np.array([_median_row(r, nan_skip)[1] for r in flat], dtype=np.int64)
        shape = moved.shape[:-1]
        vals, idx = vals.reshape(shape), idx.reshape(shape)
        if keepdim:
            vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
        return vals, idx

    return ref


def _median_all_ref(nan_skip):
    def ref(x):
        if x.size == 0:
            return np.array(np.nan, dtype=x.dtype)
        if not nan_skip and x.size % 2 == 1 and not _floating(x):
            return np.asarray(np.median(x)).astype(x.dtype)  # NumPy agrees for odd counts
        return np.asarray(_median_row(x.reshape(-1), nan_skip)[0])

    return ref


def _median_all_samples(dtype, rng):
    m = lambda shape, **kw: _m(dtype, rng, shape, **kw)  # noqa: E731
    yield Sample((m(()),), note="0-dim")
    yield Sample((m((7,)),), note="odd")
    yield Sample((m((4, 6), ties=True).T,), note="even, transposed")
    yield Sample((m((3, 5), nan=True, noncontig=True),), note="nan strided")
    if dtype in FLOAT:
        yield Sample((m((0, 3)),), note="empty")
        yield Sample((np.full((4,), np.nan, dtype=m(()).dtype),), note="all nan")


def _median_dim_samples(dtype, rng):
    for s in dim_samples(dtype, rng, empty_dim=False):
        yield s
        yield Sample(s.args, {**s.kwargs, "keepdim": True}, note=s.note + " keepdim")
    if dtype in FLOAT:
        x = _m(dtype, rng, (3, 4))
        x[1] = np.nan
        yield Sample((x,), {"dim": 1}, note="a row of nan")


def _mode_ref(x, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x.copy(), np.array(0)
    moved = np.moveaxis(x, dim, -1)
    flat = moved.reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1])
    vals, idx = [], []
    for row in flat:
        u, c = np.unique(row, return_counts=True)
        v = u[np.argmax(c)]  # the first (smallest) of the most frequent
        vals.append(v)
        idx.append(int(np.nonzero(row == v)[0][-1]))
    vals = np.array(vals, dtype=x.dtype).reshape(moved.shape[:-1])
    idx = np.array(idx, dtype=np.int64).reshape(moved.shape[:-1])
    if keepdim:
        vals, idx = np.expand_dims(vals, dim), np.expand_dims(idx, dim)
    return vals, idx


def _mode_samples(dtype, rng):
    for s in dim_samples(dtype, rng, empty_dim=False):
        x = s.args[0]
        if _floating(x) and np.isnan(x).any():
            continue
        yield Sample((x,), {**s.kwargs, "keepdim": s.note == "ties"}, note=s.note)


def _cum_ref(is_max):
    acc = np.maximum.accumulate if is_max else np.minimum.accumulate

    def ref(x, dim):
        if x.ndim == 0:
            return x.copy(), np.array(0)
        moved = np.moveaxis(x, dim, -1)
        flat = moved.reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1])
        idx = np.zeros(flat.shape, np.int64)
        for r, row in enumerate(flat):
            best, at = None, 0
            for j, v in enumerate(row):
                nan_v = _floating(row) and np.isnan(v)
                nan_b = best is not None and _floating(row) and np.isnan(best)
                if best is None or nan_v or (not nan_b and (v >= best if is_max else v <= best)):
                    best, at = v, j
                idx[r, j] = at
        idx = np.moveaxis(idx.reshape(moved.shape), -1, dim)
        return acc(x, axis=dim), idx

    return ref


def _cum_samples(dtype, rng):
    for s in dim_samples(dtype, rng):
        if s.note != "over the grain":
            yield s


def _lcse_ref(x, dim):
    if x.ndim == 0:
        return x.copy()
    w = x.astype(np.float64)
    return np.logaddexp.accumulate(w, axis=dim)


def _lcse_samples(dtype, rng):
    yield from dim_samples(dtype, rng)
    big = np.array([1000.0, -1000.0, 0.0, np.inf, -np.inf], dtype=_m(dtype, rng, ()).dtype)
    yield Sample((big[:3],), {"dim": 0}, note="large magnitudes")
    if dtype != "float64":
        yield Sample((big[3:],), {"dim": 0}, note="infinities")


def _diff_ref(x, n=1, dim=-1, prepend=None, append=None):
    kw = {}
    if prepend is not None:
        kw["prepend"] = prepend
    if append is not None:
        kw["append"] = append
    r = np.diff(x, n=n, axis=dim, **kw)
    return r.astype(x.dtype) if x.dtype != np.bool_ else r


def _diff_samples(dtype, rng):
    m = lambda shape, **kw: _m(dtype, rng, shape, **kw)  # noqa: E731
    yield Sample((m((7,)),))
    yield Sample((m((3, 5), noncontig=True),), {"dim": 0}, note="strided")
    yield Sample((m((4, 6)).T,), {"n": 2}, note="transposed n=2")
    yield Sample((m((2, 3, 4)),), {"dim": 1, "n": 3}, note="n reaches the length")
    yield Sample((m((3,)),), {"n": 5}, note="n beyond the length")
    yield Sample((m((0, 3)),), {"dim": 0}, note="zero-size")
    yield Sample((m((2, 4)),), {"n": 0}, note="n=0")
    yield Sample((m((2, 4)), 1, -1, m((2, 1)), m((2, 3))), note="prepend and append")
    yield Sample((m((3, 2)), 2, 0, None, m((1, 2))), note="append only")
    yield Sample((m((40, 1200)),), {"dim": 0}, note="large")


def _unique_ref(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    u, inv, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    inv = inv.reshape(x.shape if dim is None else (x.shape[dim],))
    out = (u,) + ((inv,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out if len(out) > 1 else u


def _unique_samples(dtype, rng):
    m = lambda shape, **kw: _m(dtype, rng, shape, **kw)  # noqa: E731
    yield Sample((m(()),), {"return_inverse": True}, note="0-dim")
    yield Sample((m((0,)),), {"return_inverse": True, "return_counts": True}, note="empty")
    yield Sample((m((9,), ties=True),))
    yield Sample((m((4, 6), ties=True).T,), {"return_inverse": True}, note="transposed")
    yield Sample((m((3, 5), ties=True, noncontig=True),), {"return_counts": True})
    yield Sample((m((30, 50), ties=True),), {"return_inverse": True, "return_counts": True})


def _unique_dim_samples(dtype, rng):
    m = lambda shape, **kw: _m(dtype, rng, shape, **kw)  # noqa: E731
    x = m((6, 3), ties=True)
    x[3] = x[1]
    x[5] = x[0]
    flags = {"return_inverse": True, "return_counts": True}
    yield Sample((x,), {"dim": 0, **flags}, note="repeated rows")
    yield Sample((np.ascontiguousarray(x.T),), {"dim": 1, **flags}, note="repeated columns")
    yield Sample((x[:, ::2],), {"dim": 0}, note="strided")
    yield Sample((m((0, 3)),), {"dim": 0, **flags}, note="zero rows")
    yield Sample((m((2, 3, 4), ties=True),), {"dim": -1, "return_counts": True}, note="3-d")


def _unique_dim_ref(x, dim, sorted=True, return_inverse=False, return_counts=False):
    u, inv, counts = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    return (
        (u,) + ((inv.reshape(-1),) if return_inverse else ()) + ((counts,) if return_counts else ())
    )


def _unique_dim_fn(x, dim, **kw):
    """The core operator returns all three; compare what was asked for."""
    out, inv, counts = flambeau.unique_dim(x, dim, **kw)
    return (
        (out,)
        + ((inv,) if kw.get("return_inverse") else ())
        + ((counts,) if kw.get("return_counts") else ())
    )


def _consecutive_ref(x, return_inverse=False, return_counts=False, dim=None):
    if dim is None:
        flat = x.reshape(-1)
        slices = [flat[i] for i in range(flat.size)]
    else:
        moved = np.moveaxis(x, dim, 0)
        slices = [moved[i] for i in range(moved.shape[0])]
    keep, inv, counts = [], [], []
    for i, s in enumerate(slices):
        if i == 0 or not np.array_equal(s, slices[i - 1]):
            keep.append(i)
            counts.append(0)
        inv.append(len(keep) - 1)
        counts[-1] += 1
    if dim is None:
        u = flat[keep] if keep else flat[:0]
        inv = np.array(inv, np.int64).reshape(x.shape)
    else:
        u = np.moveaxis(moved[keep] if keep else moved[:0], 0, dim)
        inv = np.array(inv, np.int64)
    out = (
        (u,)
        + ((inv,) if return_inverse else ())
        + ((np.array(counts, np.int64),) if return_counts else ())
    )
    return out if len(out) > 1 else u


def _consecutive_samples(dtype, rng):
    m = lambda shape, **kw: _m(dtype, rng, shape, **kw)  # noqa: E731
    runs = np.repeat(m((6,), ties=True), [1, 3, 2, 1, 4, 2])
    yield Sample((runs,), {"return_inverse": True, "return_counts": True}, note="runs")
    yield Sample((m(()),), {"return_counts": True}, note="0-dim")
    yield Sample((m((0,)),), {"return_inverse": True}, note="empty")
    yield Sample((np.repeat(m((3, 4), ties=True), 2, axis=0).T,), note="transposed")
    x = np.repeat(m((3, 2), ties=True), [2, 1, 3], axis=0)
    yield Sample((x,), {"dim": 0, "return_inverse": True, "return_counts": True}, note="dim")


def _searchsorted_ref(seq, values, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    dt = np.int32 if out_int32 else np.int64
    if not isinstance(values, np.ndarray):
        return np.asarray(np.searchsorted(seq, values, side=side, sorter=sorter), dtype=dt)
    if seq.ndim == 1:
        return np.searchsorted(seq, values, side=side, sorter=sorter).astype(dt)
    s2 = seq.reshape(-1, seq.shape[-1])
    v2 = values.reshape(-1, values.shape[-1])
    p2 = None if sorter is None else sorter.reshape(s2.shape)
    rows = [
        np.searchsorted(s2[i], v2[i], side=side, sorter=None if p2 is None else p2[i])
        for i in range(s2.shape[0])
    ]
    return np.array(rows, dtype=dt).reshape(values.shape)


def _searchsorted_fn(seq, values, sorter=None, **kw):
    """sorter arrives as a NumPy array (keyword arguments are not converted)."""
    if sorter is not None:
        sorter = flambeau.from_numpy(sorter).to(seq.device)
    return flambeau.searchsorted(seq, values, sorter=sorter, **kw)


def _searchsorted_samples(dtype, rng):
    m = lambda shape, **kw: _m(dtype, rng, shape, **kw)  # noqa: E731
    seq = np.sort(m((10,), ties=True))
    yield Sample((seq, m((3, 4), ties=True)))
    yield Sample((seq, m((3, 4), ties=True)), {"right": True}, note="right")
    yield Sample((seq, m((5,), ties=True)), {"side": "right", "out_int32": True}, note="side")
    yield Sample((seq, m(())), note="0-dim values")
    yield Sample((seq, 1), note="python scalar")
    yield Sample((seq[:0], m((4,))), note="empty sequence")
    yield Sample((seq, m((0, 2))), note="zero-size values")
    rows = np.sort(m((3, 8), ties=True), axis=1)
    yield Sample((rows, m((3, 5), ties=True)), note="a sequence per row")
    yield Sample((rows[:, ::2], m((3, 4), noncontig=True)), {"right": True}, note="strided")
    unsorted = m((7,))
    yield Sample(
        (unsorted, m((6,))), {"sorter": np.argsort(unsorted, kind="stable")}, note="sorter"
    )
    if dtype in FLOAT:
        seq_nan = np.concatenate([seq, np.array([np.nan], dtype=seq.dtype)])
        yield Sample((seq_nan, m((4,), nan=True)), note="nan")
    yield Sample((seq, m((100, 700))), note="large")


def _bucketize_ref(x, boundaries, out_int32=False, right=False):
    dt = np.int32 if out_int32 else np.int64
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    return np.asarray(np.digitize(x, boundaries, right=not right)).astype(dt)


def _bucketize_samples(dtype, rng):
    m = lambda shape, **kw: _m(dtype, rng, shape, **kw)  # noqa: E731
    b = np.unique(m((8,), ties=True))
    yield Sample((m((3, 4), ties=True), b))
    yield Sample((m((3, 4), ties=True, noncontig=True), b), {"right": True}, note="strided right")
    yield Sample((m(()), b), {"out_int32": True}, note="0-dim")
    yield Sample((m((0,)), b), note="zero-size")
    yield Sample((2, b), note="python scalar")


def _bincount_ref(x, weights=None, minlength=0):
    r = np.bincount(x.reshape(-1), weights=weights, minlength=minlength)
    if weights is None:
        return r.astype(np.int64)
    return r.astype(np.float32 if weights.dtype == np.float32 else np.float64)


def _bincount_samples(dtype, rng):
    x = rng.integers(0, 9, size=20).astype(dtype)
    yield Sample((x,))
    yield Sample((x[::2],), {"minlength": 15}, note="strided, minlength")
    yield Sample((x[:0],), note="empty")
    yield Sample((x[:0],), {"minlength": 3}, note="empty, minlength")
    yield Sample((x, rng.uniform(-1, 1, 20).astype(np.float32)), note="float32 weights")
    yield Sample((x, rng.uniform(-1, 1, 20)), note="float64 weights")
    yield Sample((x, rng.integers(0, 5, 20)), note="int weights")


def _histc_ref(x, bins=100, min=0, max=0):
    w = x.astype(np.float64)
    lo, hi = float(min), float(max)
    if lo == hi and w.size:
        lo, hi = float(np.nanmin(w)), float(np.nanmax(w))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    w = w[~np.isnan(w)]
    return np.histogram(w, bins=bins, range=(lo, hi))[0].astype(x.dtype)


def _histc_samples(dtype, rng):
    m = lambda shape, **kw: _m(dtype, rng, shape, **kw)  # noqa: E731
    yield Sample((m((50,)),), {"bins": 7, "min": -20, "max": 20})
    yield Sample((m((4, 30), noncontig=True),), {"bins": 5}, note="data range, strided")
    yield Sample((m((30,), nan=True),), {"bins": 4, "min": -60, "max": 60}, note="nan ignored")
    yield Sample((m(()),), {"bins": 3}, note="0-dim")
    yield Sample((m((0,)),), {"bins": 3}, note="zero-size")
    yield Sample((m((40, 1200)),), note="default bins, large")


def _vsrb_ref(grad, dim, indices, sizes, keepdim):
    out = np.zeros(sizes, dtype=np.float64)
    g, idx = grad.astype(np.float64), indices
    if not keepdim and len(sizes):
        g, idx = np.expand_dims(g, dim), np.expand_dims(idx, dim)
    if not len(sizes):
        return np.asarray(g, dtype=grad.dtype)
    moved_out = np.moveaxis(out, dim, -1)
    mg, mi = np.moveaxis(g, dim, -1), np.moveaxis(idx, dim, -1)
    for pos in np.ndindex(mg.shape[:-1]):
        np.add.at(moved_out[pos], mi[pos], mg[pos])
    return out.astype(grad.dtype)


def _vsrb_samples(dtype, rng):
    g = make((3, 4), dtype, rng)
    yield Sample((g, 1, rng.integers(0, 5, (3, 4)), (3, 5), True), note="repeated indices")
    yield Sample((make((4,), dtype, rng), 1, rng.integers(0, 6, (4,)), (4, 6), False), note="drop")
    yield Sample((g.T, 0, rng.integers(0, 2, (4, 3)), (2, 3), True), note="transposed")
    yield Sample((_m(dtype, rng, ()), 0, np.array(0), (), False), note="0-dim")
    yield Sample((make((0, 2), dtype, rng), 1, np.zeros((0, 2), np.int64), (0, 3), True))


TESTS = [
    OpTest("sort", flambeau.sort, _sort_ref, _sort_samples, dtypes=REAL_BOOL),
    OpTest(
        "argsort",
        flambeau.argsort,
        lambda x, **kw: _sort_ref(x, **kw)[1],
        _sort_samples,
        dtypes=REAL_BOOL,
    ),
    OpTest(
        "msort",
        flambeau.msort,
        lambda x: np.sort(x, axis=0, kind="stable") if x.ndim else x,
        lambda d, rng: (Sample(s.args) for s in dim_samples(d, rng)),
        dtypes=REAL_BOOL,
    ),
    OpTest("topk", flambeau.topk, _topk_ref, _topk_samples, dtypes=REAL),
    OpTest("kthvalue", flambeau.kthvalue, _kth_ref, _kth_samples, dtypes=REAL),
    OpTest("median", flambeau.median, _median_all_ref(False), _median_all_samples, dtypes=REAL),
    OpTest(
        "median",
        flambeau.median,
        _median_dim_ref(False),
        _median_dim_samples,
        dtypes=REAL,
        id="median_dim",
    ),
    OpTest(
        "nanmedian", flambeau.nanmedian, _median_all_ref(True), _median_all_samples, dtypes=REAL
    ),
    OpTest(
        "nanmedian",
        flambeau.nanmedian,
        _median_dim_ref(True),
        _median_dim_samples,
        dtypes=REAL,
        id="nanmedian_dim",
    ),
    OpTest("mode", flambeau.mode, _mode_ref, _mode_samples, dtypes=REAL_BOOL),
    OpTest("_unique2", flambeau.unique, _unique_ref, _unique_samples, dtypes=REAL_BOOL),
    OpTest("unique_dim", _unique_dim_fn, _unique_dim_ref, _unique_dim_samples, dtypes=REAL_BOOL),
    OpTest(
        "unique_consecutive",
        flambeau.unique_consecutive,
        _consecutive_ref,
        _consecutive_samples,
        dtypes=REAL_BOOL,
    ),
    OpTest("searchsorted", _searchsorted_fn, _searchsorted_ref, _searchsorted_samples, dtypes=REAL),
    OpTest("bucketize", flambeau.bucketize, _bucketize_ref, _bucketize_samples, dtypes=REAL),
    OpTest(
        "bincount",
        flambeau.bincount,
        _bincount_ref,
        _bincount_samples,
        dtypes=("uint8", "int8", "int16", "int32", "int64"),
        rtol=1e-5,
        atol=1e-6,
    ),
    OpTest("histc", flambeau.histc, _histc_ref, _histc_samples, dtypes=FLOAT),
    OpTest("cummax", flambeau.cummax, _cum_ref(True), _cum_samples, dtypes=REAL_BOOL),
    OpTest("cummin", flambeau.cummin, _cum_ref(False), _cum_samples, dtypes=REAL_BOOL),
    OpTest(
        "logcumsumexp",
        flambeau.logcumsumexp,
        _lcse_ref,
        _lcse_samples,
        dtypes=FLOAT,
    ),
    OpTest("diff", flambeau.diff, _diff_ref, _diff_samples, dtypes=REAL_BOOL),
    OpTest(
        "value_selecting_reduction_backward",
        flambeau.value_selecting_reduction_backward,
        _vsrb_ref,
        _vsrb_samples,
        dtypes=FLOAT,
    ),
]
