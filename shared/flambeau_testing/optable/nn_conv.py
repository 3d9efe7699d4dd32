"""Rows for convolutions (ops/nn_conv.yaml) against direct NumPy references:
windows from sliding_window_view contracted with np.einsum (forward), and the
scatter of every kernel tap (transposed); gradients by the adjoint identity."""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import flambeau

from . import FLOATS, OpTest, Sample, make

SP, KS = "xyz", "ijl"  # einsum letters of output positions and kernel taps


def tup(v, k):
    return (int(v),) * k if np.isscalar(v) else tuple(int(x) for x in v)


def conv_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    k = w.ndim - 2
    unbatched = x.ndim == k + 1
    x = (x[None] if unbatched else x).astype(np.float64)
    st, dl = tup(stride, k), tup(dilation, k)
    if isinstance(padding, str):
        total = (
            [d * (w.shape[2 + i] - 1) for i, d in enumerate(dl)] if padding == "same" else [0] * k
        )
        pads = [(t // 2, t - t // 2) for t in total]
    else:
        pads = [(p, p) for p in tup(padding, k)]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    spans = [d * (w.shape[2 + i] - 1) + 1 for i, d in enumerate(dl)]
    win = sliding_window_view(xp, spans, axis=tuple(range(2, 2 + k)))
    win = win[
        (slice(None), slice(None))
        + tuple(slice(None, None, s) for s in st)
        + tuple(slice(None, None, d) for d in dl)
    ]
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    o, kk = SP[:k], KS[:k]
    parts = [
        np.einsum(
            f"nc{o}{kk},mc{kk}->nm{o}",
            win[:, g * cg : (g + 1) * cg],
            w[g * og : (g + 1) * og].astype(np.float64),
        )
        for g in range(groups)
    ]
    out = (
        np.concatenate(parts, axis=1) if parts else np.zeros((x.shape[0], 0) + win.shape[2 : 2 + k])
    )
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * k)
    return out[0] if unbatched else out


def conv_transpose_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    k = w.ndim - 2
    unbatched = x.ndim == k + 1
    x = (x[None] if unbatched else x).astype(np.float64)
    st, pd, op, dl = (tup(v, k) for v in (stride, padding, output_padding, dilation))
    n, cin = x.shape[:2]
    cg, og = cin // groups, w.shape[1]
    sp = x.shape[2:]
    size = [
        (sp[i] - 1) * st[i] - 2 * pd[i] + dl[i] * (w.shape[2 + i] - 1) + op[i] + 1 for i in range(k)
    ]
    full = np.zeros((n, og * groups) + tuple(s + 2 * p for s, p in zip(size, pd)))
    o = SP[:k]
    for g in range(groups):
        xg, wg = x[:, g * cg : (g + 1) * cg], w[g * cg : (g + 1) * cg].astype(np.float64)
        for tap in itertools.product(*(range(s) for s in w.shape[2:])):
            contrib = np.einsum(f"nc{o},cm->nm{o}", xg, wg[(Ellipsis,) + tap])
            idx = tuple(
                slice(t * d, t * d + s * (m - 1) + 1, s) for t, d, s, m in zip(tap, dl, st, sp)
            )
            full[(slice(None), slice(g * og, (g + 1) * og)) + idx] += contrib
    out = full[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(pd, size))]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * k)
    return out[0] if unbatched else out


def adjoint(fwd, x_shape, g):
    """A^T g for a linear NumPy function fwd, one basis vector at a time."""
    out = np.zeros(int(np.prod(x_shape)))
    for i in range(out.size):
        e = np.zeros(out.size)
        e[i] = 1.0
        out[i] = np.sum(fwd(e.reshape(x_shape)) * g)
    return out.reshape(x_shape)


def conv_samples(k):
    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, low=-1, high=1, **kw)  # noqa: E731
        sp = lambda n: (n,) * k  # noqa: E731
        ks = lambda n: (n,) * k  # noqa: E731
        yield Sample((m((1, 2) + sp(3)), m((2, 2) + ks(2))), note="small")
        yield Sample((m((1, 2) + sp(3)), m((2, 2) + ks(2)), m((2,))), note="bias")
        yield Sample((m((2, 3) + sp(5)), m((4, 3) + ks(3)), m((4,))), dict(stride=2, padding=1))
        yield Sample((m((1, 4) + sp(6)), m((4, 2) + ks(2))), dict(groups=2, dilation=2))
        yield Sample(
            (m((1, 4) + sp(5)), m((8, 1) + ks(3))), dict(groups=4, padding=2), note="depthwise"
        )
        yield Sample((m((2,) + sp(4)), m((3, 2) + ks(3))), dict(padding=1), note="unbatched")
        yield Sample((m((1, 3) + sp(4), noncontig=True), m((2, 3) + ks(1))), note="strided 1x1")
        yield Sample((m((0, 3) + sp(4)), m((2, 3) + ks(3))), note="empty batch")
        yield Sample((m((1, 2) + sp(5)), m((2, 2) + ks(3))), dict(padding="same"), note="same")
        yield Sample((m((1, 2) + sp(5)), m((2, 2) + ks(2))), dict(padding="same", dilation=1))
        yield Sample((m((1, 2) + sp(6)), m((2, 2) + ks(2))), dict(padding="valid"))
        if k == 3:
            yield Sample((m((1, 1, 3, 3, 3)), m((2, 1, 2, 2, 2)), m((2,))), note="tiny")
        if k == 2:
            yield Sample(
                (m((1, 2, 5, 7)), m((2, 2, 3, 2))),
                dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
            )
            yield Sample((m((2, 8, 9, 9)), m((16, 8, 3, 3)), m((16,))), dict(padding=1))

    return samples


def conv_t_samples(k):
    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, low=-1, high=1, **kw)  # noqa: E731
        sp = lambda n: (n,) * k  # noqa: E731
        yield Sample((m((1, 2) + sp(3)), m((2, 2) + sp(2))), note="small")
        yield Sample((m((1, 2) + sp(3)), m((2, 1) + sp(2)), m((1,))), dict(stride=2), note="bias")
        yield Sample(
            (m((2, 4) + sp(3)), m((4, 1) + sp(3)), m((2,))),
            dict(stride=2, padding=1, output_padding=1, groups=2),
        )
        yield Sample(
            (m((1, 2) + sp(3)), m((2, 3) + sp(2))), dict(dilation=2, stride=3, output_padding=2)
        )
        yield Sample((m((2,) + sp(3)), m((2, 2) + sp(3))), dict(padding=1), note="unbatched")
        yield Sample((m((1, 2) + sp(4), noncontig=True), m((2, 2) + sp(1))), note="strided")
        yield Sample((m((0, 2) + sp(3)), m((2, 2) + sp(2))), note="empty batch")
        yield Sample((m((1, 1) + sp(2)), m((1, 2) + sp(2))), dict(stride=2), note="tiny")

    return samples


def conv_call(k):
    def fn(x, w, b=None, **kw):
        return getattr(flambeau, f"conv{k}d")(x, w, b, **kw)

    return fn


def conv_t_call(k):
    def fn(x, w, b=None, **kw):
        return getattr(flambeau, f"conv_transpose{k}d")(x, w, b, **kw)

    return fn


def convolution_samples(dtype, rng):
    m = lambda s: make(s, dtype, rng, low=-1, high=1)  # noqa: E731

    def kw(k, stride=1, padding=0, dilation=1, transposed=False, output_padding=0, groups=1):
        return dict(
            stride=[stride] * k,
            padding=[padding] * k,
            dilation=[dilation] * k,
            transposed=transposed,
            output_padding=[output_padding] * k,
            groups=groups,
        )

    yield Sample((m((1, 2, 4, 4)), m((2, 2, 2, 2)), m((2,))), kw(2, padding=1))
    yield Sample((m((1, 2, 3)), m((2, 2, 2)), None), kw(1, 2, transposed=True, output_padding=1))
    yield Sample((m((1, 4, 3, 3, 3)), m((2, 2, 2, 2, 2)), None), kw(3, padding=1, groups=2))


def convolution_ref(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    if transposed:
        return conv_transpose_ref(x, w, b, stride, padding, output_padding, groups, dilation)
    return conv_ref(x, w, b, stride, padding, dilation, groups)


def backward_samples(dtype, rng):
    m = lambda s: make(s, dtype, rng, low=-1, high=1)  # noqa: E731

    def kw(k, bias, stride=1, padding=0, transposed=False, groups=1, **extra):
        return dict(
            bias_sizes=bias,
            stride=[stride] * k,
            padding=[padding] * k,
            dilation=[1] * k,
            transposed=transposed,
            output_padding=[0] * k,
            groups=groups,
            **extra,
        )

    yield Sample((m((1, 2, 2, 2)), m((1, 2, 3, 3)), m((2, 2, 2, 2))), kw(2, [2]))
    yield Sample((m((2, 2, 3)), m((2, 2, 5)), m((2, 1, 3))), kw(1, [2], 2, 1, groups=2))
    yield Sample((m((1, 2, 6)), m((1, 2, 3)), m((2, 1, 2))), kw(1, None, 2, 0, True, 2))
    yield Sample(
        (m((1, 2, 2, 2)), m((1, 2, 3, 3)), m((2, 2, 2, 2))), kw(2, [2], output_mask=[0, 1, 1])
    )


def backward_ref(
    go,
    x,
    w,
    bias_sizes,
    stride,
    padding,
    dilation,
    transposed,
    output_padding,
    groups,
    output_mask=(1, 1, 1),
):
    def fwd(xx, ww):
        return convolution_ref(
            xx, ww, None, stride, padding, dilation, transposed, output_padding, groups
        )

    gi = adjoint(lambda e: fwd(e, w), x.shape, go) if output_mask[0] else None
    gw = adjoint(lambda e: fwd(x, e), w.shape, go) if output_mask[1] else None
    k = w.ndim - 2
    gb = (
        go.sum(axis=(0,) + tuple(range(2, 2 + k)))
        if output_mask[2] and bias_sizes is not None
        else None
    )
    return tuple(v for v in (gi, gw, gb) if v is not None)


def backward_call(*args, **kw):
    return tuple(v for v in flambeau.convolution_backward(*args, **kw) if v is not None)


TOL = dict(rtol=1e-4, atol=1e-4)
TESTS = []
for _k in (1, 2, 3):
    TESTS.append(OpTest(f"conv{_k}d", conv_call(_k), conv_ref, conv_samples(_k), FLOATS, **TOL))
    TESTS.append(
        OpTest(
            f"conv_transpose{_k}d",
            conv_t_call(_k),
            conv_transpose_ref,
            conv_t_samples(_k),
            FLOATS,
            **TOL,
        )
    )
TESTS += [
    OpTest(
        "convolution", flambeau.convolution, convolution_ref, convolution_samples, FLOATS, **TOL
    ),
    OpTest("convolution_backward", backward_call, backward_ref, backward_samples, FLOATS, **TOL),
]
