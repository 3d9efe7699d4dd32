"""Rows for the normalisation operators (ops/nn_norm.yaml), against NumPy
references that compute the statistics in float64."""

import numpy as np

import flambeau

from . import FLOATS, OpTest, Sample, make

FLOAT_ALL = ("float16", "bfloat16", "float32", "float64")
LOW_TOL = {"float16": 2e-2, "bfloat16": 5e-2}


def f64(a):
    return None if a is None else np.asarray(a, dtype=np.float64)


def layer_norm_ref(x, shape, w=None, b=None, eps=1e-5):
    x64 = f64(x)
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mean = x64.mean(axis=axes, keepdims=True)
    var = x64.var(axis=axes, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    y = (x64 - mean) * rstd
    if w is not None:
        y = y * f64(w)
    if b is not None:
        y = y + f64(b)
    return y.astype(x.dtype), mean.astype(x.dtype), rstd.astype(x.dtype)


def layer_norm_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    yield Sample((m((4, 6)), [6], m((6,)), m((6,)), 1e-5))
    yield Sample((m((2, 3, 5), noncontig=True), [3, 5], m((3, 5)), None, 1e-3), note="strided")
    yield Sample((m((5, 4)).T, [5], None, m((5,)), 1e-5), note="transposed")
    yield Sample((m((7,)), [7], None, None, 1e-5), note="1-d")
    yield Sample((m((0, 3)), [3], m((3,)), m((3,)), 1e-5), note="empty")
    yield Sample((m((3, 300)) * 50 + 100, [300], None, None, 1e-5), note="large mean")


def layer_norm_backward_ref(go, x, shape, mean, rstd, w, b, mask):
    x64, g64 = f64(x), f64(go)
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    lead = tuple(range(x.ndim - len(shape)))
    xhat = (x64 - f64(mean)) * f64(rstd)
    dxh = g64 * f64(w) if w is not None else g64
    gi = f64(rstd) * (
        dxh
        - dxh.mean(axis=axes, keepdims=True)
        - xhat * (dxh * xhat).mean(axis=axes, keepdims=True)
    )
    gw = (g64 * xhat).sum(axis=lead)
    gb = g64.sum(axis=lead)
    dt = x.dtype
    return (
        gi.astype(dt) if mask[0] else None,
        gw.astype(dt) if mask[1] else None,
        gb.astype(dt) if mask[2] else None,
    )


def layer_norm_backward_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    for shape, ns, noncontig in (((4, 6), [6], False), ((2, 3, 5), [3, 5], True), ((5,), [5], 0)):
        x = m(shape)
        _, mean, rstd = layer_norm_ref(x, ns)
        w = m(tuple(ns))
        yield Sample(
            (m(shape, noncontig=noncontig), x, ns, mean, rstd, w, m(tuple(ns)), [True, True, True])
        )
    x = m((3, 4))
    _, mean, rstd = layer_norm_ref(x, [4])
    yield Sample(
        (m((3, 4)), x, [4], mean, rstd, None, None, [True, False, False]), note="input only"
    )


def batch_norm_ref(x, w, b, rm, rv, training, momentum, eps):
    x64 = f64(x)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1] * x.ndim
    shape[1] = x.shape[1]
    if training:
        mean = x64.mean(axis=axes)
        var = x64.var(axis=axes)
        save_mean, save_invstd = mean, 1 / np.sqrt(var + eps)
    else:
        mean, var = f64(rm), f64(rv)
        save_mean = save_invstd = np.zeros((0,))
    y = (x64 - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    if w is not None:
        y = y * f64(w).reshape(shape)
    if b is not None:
        y = y + f64(b).reshape(shape)
    return y.astype(x.dtype), save_mean.astype(x.dtype), save_invstd.astype(x.dtype)


def batch_norm_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    pos = lambda shape: make(shape, d, rng, low=0.5, high=2.0)  # noqa: E731
    for training in (True, False):
        yield Sample((m((4, 3)), m((3,)), m((3,)), m((3,)), pos((3,)), training, 0.1, 1e-5))
        yield Sample(
            (m((2, 3, 5), noncontig=True), None, m((3,)), m((3,)), pos((3,)), training, 0.2, 1e-3),
            note="strided 3-d",
        )
        yield Sample(
            (m((2, 2, 3, 3)), m((2,)), None, m((2,)), pos((2,)), training, 0.1, 1e-5), note="4-d"
        )
    yield Sample((m((5, 2)), None, None, None, None, True, 0.1, 1e-5), note="no running stats")


def batch_norm_backward_ref(go, x, w, rm, rv, save_mean, save_invstd, train, eps, mask):
    x64, g64 = f64(x), f64(go)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    shape = [1] * x.ndim
    shape[1] = x.shape[1]
    mean = f64(save_mean) if train else f64(rm)
    invstd = f64(save_invstd) if train else 1 / np.sqrt(f64(rv) + eps)
    xhat = (x64 - mean.reshape(shape)) * invstd.reshape(shape)
    n = x.size / x.shape[1]
    k = invstd * (f64(w) if w is not None else 1.0)
    sdy = g64.sum(axis=axes)
    sdx = (g64 * xhat).sum(axis=axes)
    if train:
        gi = (g64 - sdy.reshape(shape) / n - xhat * sdx.reshape(shape) / n) * k.reshape(shape)
    else:
        gi = g64 * k.reshape(shape)
    dt = x.dtype
    return (
        gi.astype(dt) if mask[0] else None,
        sdx.astype(dt) if mask[1] else None,
        sdy.astype(dt) if mask[2] else None,
    )


def batch_norm_backward_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    pos = lambda shape: make(shape, d, rng, low=0.5, high=2.0)  # noqa: E731
    for train in (True, False):
        x = m((4, 3, 2))
        _, sm, si = batch_norm_ref(x, None, None, None, None, True, 0.1, 1e-5)
        yield Sample(
            (m((4, 3, 2)), x, m((3,)), m((3,)), pos((3,)), sm, si, train, 1e-5, [True, True, True])
        )
    x = m((5, 2))
    _, sm, si = batch_norm_ref(x, None, None, None, None, True, 0.1, 1e-5)
    yield Sample(
        (m((5, 2), noncontig=True), x, None, None, None, sm, si, True, 1e-5, [True, False, True]),
        note="no weight",
    )


def group_norm_ref(x, w, b, n, c, hxw, group, eps):
    x64 = f64(x).reshape(n, group, -1)
    mean = x64.mean(axis=2, keepdims=True)
    var = x64.var(axis=2, keepdims=True)
    rstd = 1 / np.sqrt(var + eps)
    y = ((x64 - mean) * rstd).reshape(n, c, -1)
    if w is not None:
        y = y * f64(w).reshape(1, c, 1)
    if b is not None:
        y = y + f64(b).reshape(1, c, 1)
    dt = x.dtype
    return (
        y.reshape(x.shape).astype(dt),
        mean.reshape(n, group).astype(dt),
        rstd.reshape(n, group).astype(dt),
    )


def group_norm_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    yield Sample((m((2, 4, 3)), m((4,)), m((4,)), 2, 4, 3, 2, 1e-5))
    yield Sample(
        (m((3, 6, 2, 2), noncontig=True), None, m((6,)), 3, 6, 4, 3, 1e-5), note="strided 4-d"
    )
    yield Sample((m((2, 4)), m((4,)), None, 2, 4, 1, 4, 1e-3), note="2-d, instance-like")
    yield Sample((m((2, 4, 5)), None, None, 2, 4, 5, 1, 1e-5), note="one group")


def group_norm_backward_ref(go, x, mean, rstd, w, n, c, hxw, group, mask):
    x64, g64 = f64(x).reshape(n, group, -1), f64(go).reshape(n, c, -1)
    xhat = (x64 - f64(mean).reshape(n, group, 1)) * f64(rstd).reshape(n, group, 1)
    dxh = (g64 * (f64(w).reshape(1, c, 1) if w is not None else 1.0)).reshape(n, group, -1)
    r = f64(rstd).reshape(n, group, 1)
    gi = r * (
        dxh - dxh.mean(axis=2, keepdims=True) - xhat * (dxh * xhat).mean(axis=2, keepdims=True)
    )
    gw = (g64 * xhat.reshape(n, c, -1)).sum(axis=(0, 2))
    gb = g64.sum(axis=(0, 2))
    dt = x.dtype
    return (
        gi.reshape(x.shape).astype(dt) if mask[0] else None,
        gw.astype(dt) if mask[1] else None,
        gb.astype(dt) if mask[2] else None,
    )


def group_norm_backward_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    x = m((2, 4, 3))
    _, mean, rstd = group_norm_ref(x, None, None, 2, 4, 3, 2, 1e-5)
    yield Sample((m((2, 4, 3)), x, mean, rstd, m((4,)), 2, 4, 3, 2, [True, True, True]))
    yield Sample(
        (m((2, 4, 3), noncontig=True), x, mean, rstd, None, 2, 4, 3, 2, [True, False, True]),
        note="no weight",
    )


def instance_norm_ref(x, w, b, rm, rv, use_input_stats, momentum, eps, cudnn_enabled=False):
    n, c = x.shape[:2]
    if use_input_stats:
        y = group_norm_ref(x, w, b, n, c, x.size // (n * c), c, eps)[0]
        return y
    shape = [1] * x.ndim
    shape[1] = c
    y = (f64(x) - f64(rm).reshape(shape)) / np.sqrt(f64(rv).reshape(shape) + eps)
    if w is not None:
        y = y * f64(w).reshape(shape)
    if b is not None:
        y = y + f64(b).reshape(shape)
    return y.astype(x.dtype)


def instance_norm_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    pos = lambda shape: make(shape, d, rng, low=0.5, high=2.0)  # noqa: E731
    yield Sample((m((2, 3, 4)), m((3,)), m((3,)), None, None, True, 0.1, 1e-5, False))
    yield Sample(
        (m((2, 3, 2, 2), noncontig=True), None, None, m((3,)), pos((3,)), True, 0.1, 1e-5, False),
        note="running stats",
    )
    yield Sample(
        (m((2, 3, 4)), m((3,)), None, m((3,)), pos((3,)), False, 0.1, 1e-5, False), note="eval"
    )


def affine_samples(d, rng):
    """Small samples whose normalized_shape is the weight's shape (no list argument, so the
    autograd gradcheck runs them)."""
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    yield Sample((m((3, 4)), m((4,)), m((4,))))
    yield Sample((m((2, 3, 2), noncontig=True), m((3, 2)), m((3, 2))), note="strided")


def affine_backward_samples(d, rng):
    m = lambda shape, **kw: make(shape, d, rng, **kw)  # noqa: E731
    for shape, ns in (((3, 4), (4,)), ((2, 3, 2), (3, 2))):
        x = m(shape)
        _, mean, rstd = layer_norm_ref(x, list(ns))
        yield Sample((m(shape), x, mean, rstd, m(ns), m(ns)))


def drop_none(f):
    """Backward kernels return None for gradients their output_mask leaves out."""

    def run(*a):
        return tuple(r for r in f(*a) if r is not None)

    return run


TESTS = [
    OpTest(
        "native_layer_norm",
        lambda x, w, b: flambeau.native_layer_norm(x, list(w.shape), w, b, 1e-5),
        lambda x, w, b: layer_norm_ref(x, list(w.shape), w, b),
        affine_samples,
        dtypes=FLOATS,
        id="native_layer_norm_affine",
    ),
    OpTest(
        "layer_norm",
        lambda x, w, b: flambeau.layer_norm(x, list(w.shape), w, b),
        lambda x, w, b: layer_norm_ref(x, list(w.shape), w, b)[0],
        affine_samples,
        dtypes=FLOATS,
        id="layer_norm_affine",
    ),
    OpTest(
        "native_layer_norm_backward",
        lambda go, x, mean, rstd, w, b: flambeau.native_layer_norm_backward(
            go, x, list(w.shape), mean, rstd, w, b, [True, True, True]
        ),
        lambda go, x, mean, rstd, w, b: layer_norm_backward_ref(
            go, x, list(w.shape), mean, rstd, w, b, [True, True, True]
        ),
        affine_backward_samples,
        dtypes=FLOATS,
        id="native_layer_norm_backward_affine",
    ),
    OpTest(
        "native_layer_norm",
        flambeau.native_layer_norm,
        layer_norm_ref,
        layer_norm_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "layer_norm",
        flambeau.layer_norm,
        lambda *a: layer_norm_ref(*a)[0],
        layer_norm_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "native_layer_norm_backward",
        drop_none(flambeau.native_layer_norm_backward),
        drop_none(layer_norm_backward_ref),
        layer_norm_backward_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "native_batch_norm",
        flambeau.native_batch_norm,
        batch_norm_ref,
        batch_norm_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "batch_norm",
        lambda *a: flambeau.batch_norm(*a, False),
        lambda *a: batch_norm_ref(*a)[0],
        batch_norm_samples,
        dtypes=FLOATS,
    ),
    OpTest(
        "native_batch_norm_backward",
        drop_none(flambeau.native_batch_norm_backward),
        drop_none(batch_norm_backward_ref),
        batch_norm_backward_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "native_group_norm",
        flambeau.native_group_norm,
        group_norm_ref,
        group_norm_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "group_norm",
        lambda x, w, b, n, c, hxw, g, eps: flambeau.group_norm(x, g, w, b, eps),
        lambda *a: group_norm_ref(*a)[0],
        group_norm_samples,
        dtypes=FLOATS,
    ),
    OpTest(
        "native_group_norm_backward",
        drop_none(flambeau.native_group_norm_backward),
        drop_none(group_norm_backward_ref),
        group_norm_backward_samples,
        dtypes=FLOAT_ALL,
    ),
    OpTest(
        "instance_norm",
        flambeau.instance_norm,
        instance_norm_ref,
        instance_norm_samples,
        dtypes=FLOATS,
    ),
]
