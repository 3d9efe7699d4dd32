"""Rows for pooling (ops/nn_pool.yaml) against NumPy references built from
np.pad + sliding_window_view windows; backward operators against np.add.at
scatters and the adjoint of the (linear) forward references."""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import flambeau

from . import FLOATS, OpTest, Sample, make
from .nn_conv import adjoint, tup


def out_size(n, k, s, p, d, ceil):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def windows(x, k, ks, st, pd, dl, ceil, fill):
    """(..., *out, *ks) windows of the last k dims, padded with fill."""
    sp = x.shape[-k:]
    outs = [out_size(sp[i], ks[i], st[i], pd[i], dl[i], ceil) for i in range(k)]
    extra = [
        max(0, (o - 1) * s + d * (kk - 1) + 1 - (n + 2 * p))
        for o, s, d, kk, n, p in zip(outs, st, dl, ks, sp, pd)
    ]
    xp = np.pad(
        x, [(0, 0)] * (x.ndim - k) + [(p, p + e) for p, e in zip(pd, extra)], constant_values=fill
    )
    spans = [d * (kk - 1) + 1 for d, kk in zip(dl, ks)]
    w = sliding_window_view(xp, spans, axis=tuple(range(x.ndim - k, x.ndim)))
    lead = (slice(None),) * (x.ndim - k)
    w = w[
        lead
        + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(outs, st))
        + tuple(slice(None, None, d) for d in dl)
    ]
    return w


def max_pool_ref(k, indices=False):
    def ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        ks = tup(kernel_size, k)
        st = tup(stride, k) if stride not in (None, []) else ks
        pd, dl = tup(padding, k), tup(dilation, k)
        w = windows(x.astype(np.float64), k, ks, st, pd, dl, ceil_mode, -np.inf)
        flat = w.reshape(w.shape[: x.ndim] + (math.prod(w.shape[x.ndim :]),))
        vals = flat.max(-1)
        if not indices:
            return vals
        pos = np.broadcast_to(
            np.arange(math.prod(x.shape[-k:])).reshape(x.shape[-k:]), x.shape
        ).astype(np.float64)
        pw = windows(pos, k, ks, st, pd, dl, ceil_mode, -1.0)
        pflat = pw.reshape(pw.shape[: x.ndim] + (math.prod(pw.shape[x.ndim :]),))
        idx = np.take_along_axis(pflat, flat.argmax(-1)[..., None], -1)[..., 0].astype(np.int64)
        return vals, idx

    return ref


def avg_pool_ref(k):
    def ref(
        x,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        ks = tup(kernel_size, k)
        st = tup(stride, k) if stride not in (None, []) else ks
        pd, dl = tup(padding, k), (1,) * k
        w = windows(x.astype(np.float64), k, ks, st, pd, dl, ceil_mode, 0.0)
        sums = w.reshape(w.shape[: x.ndim] + (math.prod(w.shape[x.ndim :]),)).sum(-1)
        if divisor_override:
            return sums / divisor_override
        ones = np.ones(x.shape[-k:])
        if count_include_pad:  # the padding counts, the ceil_mode overhang does not
            ones = np.pad(ones, [(p, p) for p in pd], constant_values=1.0)
            cw = windows(ones, k, ks, st, (0,) * k, dl, ceil_mode, 0.0)
        else:
            cw = windows(ones, k, ks, st, pd, dl, ceil_mode, 0.0)
        counts = cw.reshape(cw.shape[:k] + (-1,)).sum(-1)
        return sums / counts[tuple(slice(0, s) for s in sums.shape[-k:])]

    return ref


def adaptive_ref(k, reduce):
    def ref(x, output_size):
        osz = tup(output_size, k)
        sp = x.shape[-k:]
        out = np.zeros(x.shape[:-k] + osz)
        idx = np.zeros(x.shape[:-k] + osz, dtype=np.int64)
        for o in np.ndindex(*osz):
            sl = tuple(
                slice((o[i] * sp[i]) // osz[i], -((-(o[i] + 1) * sp[i]) // osz[i]))
                for i in range(k)
            )
            win = x[(Ellipsis,) + sl].astype(np.float64)
            flat = win.reshape(win.shape[: x.ndim - k] + (math.prod(win.shape[x.ndim - k :]),))
            if reduce == "avg":
                out[(Ellipsis,) + o] = flat.mean(-1)
            else:
                am = flat.argmax(-1)
                out[(Ellipsis,) + o] = flat.max(-1)
                local = np.unravel_index(am, win.shape[-k:])
                glob = [local[i] + sl[i].start for i in range(k)]
                idx[(Ellipsis,) + o] = np.ravel_multi_index(glob, sp)
        return out if reduce == "avg" else (out, idx)

    return ref


def scatter_ref(shape, g, idx, k, accumulate=True):
    planes = math.prod(shape[:-k])
    out = np.zeros((planes, math.prod(shape[-k:])))
    n = math.prod(idx.shape[-k:])
    gf, ix = g.reshape(planes, n).astype(np.float64), idx.reshape(planes, n)
    for p in range(planes):
        if accumulate:
            np.add.at(out[p], ix[p], gf[p])
        else:
            out[p, ix[p]] = gf[p]
    return out.reshape(shape)


def pool_samples(k, is_max):
    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        sp = lambda n: (n,) * k  # noqa: E731
        yield Sample((m((1, 2) + sp(4)), 2), note="small")
        yield Sample((m((1, 1) + sp(3)), 2), dict(stride=1), note="tiny")
        yield Sample((m((1, 1) + sp(2)), 2), note="one window")
        yield Sample((m((2, 3) + sp(5)), 3), dict(stride=2, padding=1))
        yield Sample((m((2,) + sp(5)), 2), dict(stride=1), note="unbatched")
        yield Sample((m((1, 2) + sp(5)), 2), dict(ceil_mode=True, stride=2))
        yield Sample(
            (m((1, 2) + sp(6), noncontig=True), 3), dict(stride=2, padding=1, ceil_mode=True)
        )
        yield Sample((m((0, 2) + sp(4)), 2), note="empty batch")
        if is_max:
            yield Sample((m((1, 2) + sp(7)), 2), dict(dilation=2, stride=2, padding=1))
        else:
            yield Sample((m((1, 2) + sp(5)), 3), dict(padding=1, count_include_pad=False))
            yield Sample(
                (m((1, 2) + sp(5)), 2), dict(padding=1, ceil_mode=True, count_include_pad=False)
            )
            if k > 1:
                yield Sample((m((1, 2) + sp(4)), 2), dict(divisor_override=3))
        if k == 2:
            yield Sample((m((1, 2, 5, 8)), (2, 3)), dict(stride=(1, 2), padding=(1, 0)))

    return samples


def unique_samples(k):  # distinct values, so the arg max is unambiguous after 16-bit rounding
    def samples(dtype, rng):
        for s in pool_samples(k, True)(dtype, rng):
            x = s.args[0]
            perm = rng.permutation(x.size).reshape(x.shape).astype(x.dtype) / 4
            yield Sample((perm,) + s.args[1:], s.kwargs, s.note)

    return samples


def with_indices_backward_samples(k):
    def samples(dtype, rng):
        for s in unique_samples(k)(dtype, rng):
            x = s.args[0]
            _, idx = max_pool_ref(k, True)(*s.args, **s.kwargs)
            g = make(idx.shape, dtype, rng)
            kw = {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, **s.kwargs}
            yield Sample(
                (g, x, s.args[1], kw["stride"], kw["padding"], kw["dilation"], kw["ceil_mode"], idx)
            )

    return samples


def unpool_samples(k):
    def samples(dtype, rng):
        for s in unique_samples(k)(dtype, rng):
            x = s.args[0]
            kw = s.kwargs
            overlapping = kw.get("stride") is not None or kw.get("dilation", 1) != 1
            if kw.get("padding") or kw.get("ceil_mode") or overlapping:
                continue  # repeated indices: the last write wins, the gradient is ambiguous
            vals, idx = max_pool_ref(k, True)(*s.args, **s.kwargs)
            yield Sample((vals.astype(x.dtype), idx), dict(output_size=list(x.shape[-k:])))

    return samples


def avg_backward_samples(k):
    def samples(dtype, rng):
        for s in pool_samples(k, False)(dtype, rng):
            x = s.args[0]
            if x.size > 200:
                continue
            kw = {
                "stride": None,
                "padding": 0,
                "ceil_mode": False,
                "count_include_pad": True,
                "divisor_override": None,
            }
            kw.update(s.kwargs)
            g = make(avg_pool_ref(k)(*s.args, **s.kwargs).shape, dtype, rng)
            yield Sample(
                (
                    g,
                    x,
                    s.args[1],
                    kw["stride"],
                    kw["padding"],
                    kw["ceil_mode"],
                    kw["count_include_pad"],
                    kw["divisor_override"],
                )
            )

    return samples


def avg_backward_ref(k):
    def ref(g, x, ks, stride, padding, ceil_mode, count_include_pad, divisor_override):
        def fwd(e):
            return avg_pool_ref(k)(
                e, ks, stride, padding, ceil_mode, count_include_pad, divisor_override
            )

        return adjoint(fwd, x.shape, g)

    return ref


def adaptive_samples(k):
    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        sp = lambda n: (n,) * k  # noqa: E731
        yield Sample((m((1, 2) + sp(4)),), dict(output_size=[2] * k), note="small")
        yield Sample((m((1, 1) + sp(3)),), dict(output_size=[2] * k), note="tiny")
        yield Sample((m((2, 3) + sp(5)),), dict(output_size=[3] * k), note="overlapping")
        yield Sample((m((2,) + sp(3)),), dict(output_size=[5] * k), note="unbatched, larger")
        yield Sample((m((1, 2) + sp(6), noncontig=True),), dict(output_size=[4] * k))
        yield Sample((m((0, 2) + sp(4)),), dict(output_size=[2] * k), note="empty batch")

    return samples


def adaptive_max_samples(k):
    def samples(dtype, rng):
        for s in adaptive_samples(k)(dtype, rng):
            x = s.args[0]
            perm = rng.permutation(x.size).reshape(x.shape).astype(x.dtype) / 4
            yield Sample((perm,) + s.args[1:], s.kwargs, s.note)

    return samples


def adaptive_backward_samples(k, is_max):
    def samples(dtype, rng):
        src = adaptive_max_samples(k) if is_max else adaptive_samples(k)
        for s in src(dtype, rng):
            x = s.args[0]
            if is_max:
                _, idx = adaptive_ref(k, "max")(*s.args, **s.kwargs)
                yield Sample((make(idx.shape, dtype, rng), x, idx))
            else:
                yield Sample(
                    (make(adaptive_ref(k, "avg")(*s.args, **s.kwargs).shape, dtype, rng), x)
                )

    return samples


def adaptive_avg_backward_ref(k):
    def ref(g, x):
        return adjoint(lambda e: adaptive_ref(k, "avg")(e, list(g.shape[-k:])), x.shape, g)

    return ref


def fn(name):
    return lambda *a, **kw: getattr(flambeau, name)(*a, **kw)


EXACT = ("float32", "float64", "bfloat16")
TESTS = []
for _k in (1, 2, 3):
    TESTS += [
        OpTest(
            f"max_pool{_k}d", fn(f"max_pool{_k}d"), max_pool_ref(_k), pool_samples(_k, True), EXACT
        ),
        OpTest(
            f"max_pool{_k}d_with_indices",
            fn(f"max_pool{_k}d_with_indices"),
            max_pool_ref(_k, True),
            unique_samples(_k),
            FLOATS,
        ),
        OpTest(
            f"max_unpool{_k}d",
            fn(f"max_unpool{_k}d"),
            lambda x, idx, output_size, _k=_k: scatter_ref(
                x.shape[:-_k] + tuple(output_size), x, idx, _k, False
            ),
            unpool_samples(_k),
            FLOATS,
        ),
        OpTest(
            f"avg_pool{_k}d",
            fn(f"avg_pool{_k}d"),
            avg_pool_ref(_k),
            pool_samples(_k, False),
            FLOATS,
        ),
        OpTest(
            f"adaptive_avg_pool{_k}d",
            fn(f"adaptive_avg_pool{_k}d"),
            adaptive_ref(_k, "avg"),
            adaptive_samples(_k),
            FLOATS,
        ),
        OpTest(
            f"adaptive_max_pool{_k}d",
            fn(f"adaptive_max_pool{_k}d"),
            adaptive_ref(_k, "max"),
            adaptive_max_samples(_k),
            FLOATS,
        ),
    ]
for _k in (2, 3):
    TESTS += [
        OpTest(
            f"max_pool{_k}d_with_indices_backward",
            fn(f"max_pool{_k}d_with_indices_backward"),
            lambda g, x, *a, _k=_k: scatter_ref(x.shape, g, a[-1], _k),
            with_indices_backward_samples(_k),
            FLOATS,
        ),
        OpTest(
            f"avg_pool{_k}d_backward",
            fn(f"avg_pool{_k}d_backward"),
            avg_backward_ref(_k),
            avg_backward_samples(_k),
            FLOATS,
        ),
        OpTest(
            f"adaptive_avg_pool{_k}d_backward",
            fn(f"adaptive_avg_pool{_k}d_backward"),
            adaptive_avg_backward_ref(_k),
            adaptive_backward_samples(_k, False),
            FLOATS,
        ),
        OpTest(
            f"adaptive_max_pool{_k}d_backward",
            fn(f"adaptive_max_pool{_k}d_backward"),
            lambda g, x, idx, _k=_k: scatter_ref(x.shape, g, idx, _k),
            adaptive_backward_samples(_k, True),
            FLOATS,
        ),
    ]
