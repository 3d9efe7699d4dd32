"""Rows for padding and interpolation (ops/nn_resize.yaml) against np.pad and
separable NumPy resamplers; backward operators against the adjoint of the
(linear) forward references."""

from __future__ import annotations

import numpy as np

import flambeau

from . import FLOATS, OpTest, Sample, make
from .nn_conv import adjoint

NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def pad_ref(x, pad, mode="constant", value=None):
    k = len(pad) // 2
    pairs = [(0, 0)] * (x.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    if not pairs:
        return x.copy()
    if mode == "constant":
        pos = [(max(a, 0), max(b, 0)) for a, b in pairs]
        out = np.pad(x, pos, constant_values=value if value is not None else 0)
        crop = tuple(slice(max(-a, 0), out.shape[i] - max(-b, 0)) for i, (a, b) in enumerate(pairs))
        return out[crop]
    return np.pad(x, pairs, mode=NP_MODE[mode])


def pad_samples(k, mode, key="padding"):
    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        sp = (3, 4, 5)[3 - k :]
        yield Sample((m((1, 2) + sp),), {key: [1, 2] * k}, note="batched")
        yield Sample((m((1, 1) + (2, 3, 3)[3 - k :]),), {key: [1, 1] * k}, note="tiny")
        yield Sample((m((2,) + sp),), {key: [2, 1] * k}, note="unbatched")
        yield Sample((m((2, 2) + sp, noncontig=True),), {key: [0, 2] * k}, note="strided")
        yield Sample((m((0, 2) + sp),), {key: [1, 1] * k}, note="empty batch")
        if mode == "circular":
            yield Sample((m((1, 1) + sp),), {key: [3, 0] * k}, note="whole period")
        else:
            yield Sample((m((1, 1) + sp),), {key: [2, 2] * k})

    return samples


def pad_backward_samples(k, mode, key="padding"):
    def samples(dtype, rng):
        for s in pad_samples(k, mode, key)(dtype, rng):
            (x,), pad = s.args, s.kwargs[key]
            yield Sample((make(pad_ref(x, pad, mode).shape, dtype, rng), x), {key: pad})
        if k == 3:  # a grad_output small enough for finite differences
            x = make((1, 1, 2, 2, 2), dtype, rng)
            pad = [1, 0, 0, 1, 1, 0]
            yield Sample((make(pad_ref(x, pad, mode).shape, dtype, rng), x), {key: pad})

    return samples


def pad_backward_ref(mode, key="padding"):
    def ref(g, x, **kw):
        return adjoint(lambda e: pad_ref(e, kw[key], mode), x.shape, g)

    return ref


def constant_samples(dtype, rng):
    m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
    yield Sample((m((3, 4)),), dict(pad=[1, 2]))
    value = dict(value=1.5) if "float" in dtype else {}
    yield Sample((m((2, 3, 4)),), dict(pad=[1, 0, 2, 1], **value))
    yield Sample((m((2, 3, 4), noncontig=True),), dict(pad=[-1, 2, 0, -2]), note="negative crops")
    yield Sample((m((2, 3)),), dict(pad=[1, 1, 1, 1]), note="all dims")
    yield Sample((m((0, 3)),), dict(pad=[2, 2]), note="empty")
    yield Sample((m(()),), dict(pad=[]), note="0-dim, no padding")


def generic_pad_samples(dtype, rng):
    m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
    yield Sample((m((2, 3, 4)),), dict(pad=[1, 2]), note="constant")
    yield Sample((m((2, 3, 4)),), dict(pad=[1, 2, 0, 1], value=2.0))
    yield Sample((m((1, 2, 3, 4)),), dict(pad=[1, 2, 2, 1], mode="reflect"))
    yield Sample((m((2, 3, 4)),), dict(pad=[1, 2], mode="replicate"))
    yield Sample((m((1, 2, 3, 4, 5)),), dict(pad=[1, 1, 2, 0, 0, 2], mode="circular"))
    yield Sample((m((3, 4), noncontig=True),), dict(pad=[2, 1], mode="reflect"), note="1-D")


def generic_pad_ref(x, pad, mode="constant", value=None):
    return pad_ref(x, pad, mode, value)


# --- interpolation ----------------------------------------------------------------------------


def nearest_index(n_in, n_out, scale=None):
    s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    o = np.arange(n_out)
    if n_out == n_in:
        return o
    if n_out == 2 * n_in:
        return o >> 1
    return np.minimum(np.floor(o.astype(np.float32) * s).astype(np.int64), n_in - 1)


def linear_matrix(n_in, n_out, align_corners, scale=None):
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        if align_corners:
            src = o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            r = 1.0 / scale if scale else n_in / n_out
            src = max(r * (o + 0.5) - 0.5, 0.0)
        i0 = min(int(src), n_in - 1)
        i1 = i0 + (1 if i0 < n_in - 1 else 0)
        lam = src - i0
        m[o, i0] += 1 - lam
        m[o, i1] += lam
    return m


SCALES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}


def resize_ref(k, linear):
    def ref(x, output_size, align_corners=None, **kw):
        scales = [kw.get(n) for n in SCALES[k]]
        out = x.astype(np.float64)
        for i in range(k):
            axis = x.ndim - k + i
            n_in, n_out = x.shape[axis], output_size[i]
            if linear:
                mat = linear_matrix(n_in, n_out, align_corners, scales[i])
                out = np.moveaxis(np.tensordot(mat, np.moveaxis(out, axis, 0), 1), 0, axis)
            else:
                out = np.take(out, nearest_index(n_in, n_out, scales[i]), axis=axis)
        return out

    return ref


def resize_samples(k, linear):
    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        for align in (False, True) if linear else (None,):
            a = {} if align is None else {"align_corners": align}
            scales = {n: 1.7 for n in SCALES[k]}
            yield Sample((m((1, 2) + (3,) * k),), dict(output_size=[6] * k, **a), note="x2")
            yield Sample((m((1, 1) + (2,) * k),), dict(output_size=[3] * k, **a), note="tiny")
            yield Sample((m((2, 1) + (4,) * k),), dict(output_size=[3] * k, **a), note="shrink")
            yield Sample(
                (m((1, 2) + (3,) * k, noncontig=True),),
                dict(output_size=[5] * k, **a),
                note="strided",
            )
            yield Sample((m((0, 2) + (3,) * k),), dict(output_size=[4] * k, **a), note="empty")
            yield Sample((m((1, 1) + (2,) * k),), dict(output_size=[3] * k, **a, **scales))
            yield Sample((m((1, 1) + (1,) * k),), dict(output_size=[3] * k, **a), note="from one")

    return samples


def resize_backward_samples(name, k, linear):
    def samples(dtype, rng):
        for s in resize_samples(k, linear)(dtype, rng):
            (x,) = s.args
            g = make(resize_ref(k, linear)(x, **s.kwargs).shape, dtype, rng)
            yield Sample((g,), dict(s.kwargs, input_size=list(x.shape)))

    return samples


def resize_backward_ref(k, linear):
    def ref(g, output_size, input_size, **kw):
        fwd = resize_ref(k, linear)
        return adjoint(lambda e: fwd(e, output_size, **kw), tuple(input_size), g)

    return ref


def fn(name):
    return lambda *a, **kw: getattr(flambeau, name)(*a, **kw)


EXACT = ("float32", "float64", "bfloat16")
TESTS = [
    OpTest(
        "constant_pad_nd",
        fn("constant_pad_nd"),
        pad_ref,
        constant_samples,
        EXACT + ("int64", "bool"),
    ),
    OpTest("pad", fn("pad"), generic_pad_ref, generic_pad_samples, EXACT),
    OpTest(
        "pad_circular",
        fn("pad_circular"),
        lambda x, pad: pad_ref(x, pad, "circular"),
        pad_samples(2, "circular", "pad"),
        EXACT,
    ),
    OpTest(
        "pad_circular_backward",
        fn("pad_circular_backward"),
        pad_backward_ref("circular", "pad"),
        pad_backward_samples(2, "circular", "pad"),
        FLOATS,
    ),
]
for _kind, _mode in (("reflection", "reflect"), ("replication", "replicate")):
    for _k in (1, 2, 3):
        TESTS += [
            OpTest(
                f"{_kind}_pad{_k}d",
                fn(f"{_kind}_pad{_k}d"),
                lambda x, padding, _m=_mode: pad_ref(x, padding, _m),
                pad_samples(_k, _mode),
                EXACT,
            ),
            OpTest(
                f"{_kind}_pad{_k}d_backward",
                fn(f"{_kind}_pad{_k}d_backward"),
                pad_backward_ref(_mode),
                pad_backward_samples(_k, _mode),
                FLOATS,
            ),
        ]
_LINEAR = {1: "upsample_linear1d", 2: "upsample_bilinear2d", 3: "upsample_trilinear3d"}
for _k in (1, 2, 3):
    for _name, _lin in ((f"upsample_nearest{_k}d", False), (_LINEAR[_k], True)):
        TESTS += [
            OpTest(_name, fn(_name), resize_ref(_k, _lin), resize_samples(_k, _lin), FLOATS),
            OpTest(
                _name + "_backward",
                fn(_name + "_backward"),
                resize_backward_ref(_k, _lin),
                resize_backward_samples(_name, _k, _lin),
                FLOATS,
            ),
        ]


# --- bicubic, nearest-exact and antialiased resizing --------------------------------------------


def _source_scale(n_in, n_out, align_corners, scale):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale else n_in / n_out


def _cubic_near(x, a):
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_far(x, a):
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def cubic_matrix(n_in, n_out, align_corners, scale=None):
    """Cubic convolution (A = -0.75) at PyTorch's source positions, border clamped."""
    m = np.zeros((n_out, n_in))
    r = _source_scale(n_in, n_out, align_corners, scale)
    for o in range(n_out):
        src = r * o if align_corners else r * (o + 0.5) - 0.5
        i0 = min(int(np.floor(src)), n_in - 1)
        t = min(max(src - i0, 0.0), 1.0)
        a = -0.75
        w = [_cubic_far(t + 1, a), _cubic_near(t, a), _cubic_near(1 - t, a), _cubic_far(2 - t, a)]
        for j in range(4):
            m[o, min(max(i0 - 1 + j, 0), n_in - 1)] += w[j]
    return m


def nearest_exact_matrix(n_in, n_out, align_corners=None, scale=None):
    s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
    src = np.floor((np.arange(n_out) + 0.5).astype(np.float32) * s).astype(np.int64)
    return np.eye(n_in)[np.minimum(src, n_in - 1)]


def _aa_filter(x, cubic):
    x = abs(x)
    if not cubic:
        return max(1.0 - x, 0.0)
    return _cubic_near(x, -0.5) if x < 1 else _cubic_far(x, -0.5) if x < 2 else 0.0


def aa_matrix(n_in, n_out, align_corners, scale=None, cubic=False):
    """The antialiased separable filter: support widened by the downscale factor, each output
    row normalized to sum 1."""
    m = np.zeros((n_out, n_in))
    r = _source_scale(n_in, n_out, align_corners, scale)
    half = 2.0 if cubic else 1.0
    support, inv = (half * r, 1.0 / r) if r >= 1 else (half, 1.0)
    for o in range(n_out):
        c = r * (o + 0.5)
        lo, hi = max(int(c - support + 0.5), 0), min(int(c + support + 0.5), n_in)
        w = np.array([_aa_filter((j - c + 0.5) * inv, cubic) for j in range(lo, hi)])
        m[o, lo:hi] = w / w.sum() if w.sum() != 0 else w
    return m


def matrix_ref(k, matrix):
    def ref(x, output_size, align_corners=None, **kw):
        scales = [kw.get(n) for n in SCALES[k]]
        out = x.astype(np.float64)
        for i in range(k):
            axis = x.ndim - k + i
            mat = matrix(x.shape[axis], output_size[i], align_corners, scales[i])
            out = np.moveaxis(np.tensordot(mat, np.moveaxis(out, axis, 0), 1), 0, axis)
        return out

    return ref


def matrix_backward_ref(k, matrix):
    def ref(g, output_size, input_size, **kw):
        fwd = matrix_ref(k, matrix)
        return adjoint(lambda e: fwd(e, output_size, **kw), tuple(input_size), g)

    return ref


def aa_samples(dtype, rng):
    m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
    for align in (False, True):
        a = {"align_corners": align}
        yield Sample((m((1, 2, 8, 7)),), dict(output_size=[3, 2], **a), note="shrink")
        yield Sample((m((2, 1, 9, 5)),), dict(output_size=[4, 5], **a), note="one axis")
        yield Sample((m((1, 1, 3, 4)),), dict(output_size=[5, 6], **a), note="grow")
        yield Sample((m((1, 2, 6, 6), noncontig=True),), dict(output_size=[2, 4], **a))
        yield Sample((m((0, 2, 4, 4)),), dict(output_size=[2, 2], **a), note="empty")
        yield Sample((m((1, 1, 7, 8)),), dict(output_size=[3, 2], scales_h=0.45, scales_w=0.3, **a))
        yield Sample((m((1, 1, 5, 4)),), dict(output_size=[1, 1], **a), note="to one")


def matrix_backward_samples(k, samples, matrix):
    def backward_samples(dtype, rng):
        for s in samples(dtype, rng):
            (x,) = s.args
            g = make(matrix_ref(k, matrix)(x, **s.kwargs).shape, dtype, rng)
            yield Sample((g,), dict(s.kwargs, input_size=list(x.shape)))

    return backward_samples


def _matrix_rows(name, k, samples, matrix):
    return [
        OpTest(name, fn(name), matrix_ref(k, matrix), samples, FLOATS),
        OpTest(
            name + "_backward",
            fn(name + "_backward"),
            matrix_backward_ref(k, matrix),
            matrix_backward_samples(k, samples, matrix),
            FLOATS,
        ),
    ]


TESTS += _matrix_rows("upsample_bicubic2d", 2, resize_samples(2, True), cubic_matrix)
for _k in (1, 2, 3):
    _ne = f"_upsample_nearest_exact{_k}d"
    TESTS += _matrix_rows(_ne, _k, resize_samples(_k, False), nearest_exact_matrix)
TESTS += _matrix_rows("_upsample_bilinear2d_aa", 2, aa_samples, aa_matrix)
TESTS += _matrix_rows("_upsample_bicubic2d_aa", 2, aa_samples, lambda *a: aa_matrix(*a, cubic=True))
