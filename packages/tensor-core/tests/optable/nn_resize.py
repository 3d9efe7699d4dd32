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
    if mode == "constant":
        pos = [(max(a, 0), max(b, 0)) for a, b in pairs]
        out = np.pad(x, pos, constant_values=value if value is not None else 0)
        crop = tuple(slice(max(-a, 0), out.shape[i] - max(-b, 0)) for i, (a, b) in enumerate(pairs))
        return out[crop]
    return np.pad(x, pairs, mode=NP_MODE[mode])


def pad_samples(k, mode):
    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        sp = (3, 4, 5)[3 - k :]
        yield Sample((m((1, 2) + sp), [1, 2] * k), note="batched")
        yield Sample((m((2,) + sp), [2, 1] * k), note="unbatched")
        yield Sample((m((2, 2) + sp, noncontig=True), [0, 2] * k), note="strided")
        yield Sample((m((0, 2) + sp), [1, 1] * k), note="empty batch")
        if mode == "circular":
            yield Sample((m((1, 1) + sp), [3, 0] * k), note="whole period")
        else:
            yield Sample((m((1, 1) + sp), [2, 2] * k))

    return samples


def pad_backward_samples(k, mode):
    def samples(dtype, rng):
        for s in pad_samples(k, mode)(dtype, rng):
            x, pad = s.args
            yield Sample((make(pad_ref(x, pad, mode).shape, dtype, rng), x, pad))

    return samples


def pad_backward_ref(mode):
    def ref(g, x, pad):
        return adjoint(lambda e: pad_ref(e, pad, mode), x.shape, g)

    return ref


def constant_samples(dtype, rng):
    m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
    yield Sample((m((3, 4)), [1, 2]))
    yield Sample((m((2, 3, 4)), [1, 0, 2, 1]), dict(value=1.5) if "float" in dtype else {})
    yield Sample((m((2, 3, 4), noncontig=True), [-1, 2, 0, -2]), note="negative crops")
    yield Sample((m((2, 3)), [1, 1, 1, 1]), note="all dims")
    yield Sample((m((0, 3)), [2, 2]), note="empty")
    yield Sample((m(()), []), note="0-dim, no padding")


def generic_pad_samples(dtype, rng):
    m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
    yield Sample((m((2, 3, 4)), [1, 2]), note="constant")
    yield Sample((m((2, 3, 4)), [1, 2, 0, 1]), dict(value=2.0))
    yield Sample((m((1, 2, 3, 4)), [1, 2, 2, 1]), dict(mode="reflect"))
    yield Sample((m((2, 3, 4)), [1, 2]), dict(mode="replicate"))
    yield Sample((m((1, 2, 3, 4, 5)), [1, 1, 2, 0, 0, 2]), dict(mode="circular"))
    yield Sample((m((3, 4), noncontig=True), [2, 1]), dict(mode="reflect"), note="unbatched 1-D")


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


def resize_ref(k, linear):
    def ref(x, output_size, *args):
        align = args[0] if linear else None
        scales = list(args[1:] if linear else args) + [None] * k
        out = x.astype(np.float64)
        for i in range(k):
            axis = x.ndim - k + i
            n_in, n_out = x.shape[axis], output_size[i]
            if linear:
                out = np.moveaxis(
                    np.tensordot(
                        linear_matrix(n_in, n_out, align, scales[i]), np.moveaxis(out, axis, 0), 1
                    ),
                    0,
                    axis,
                )
            else:
                out = np.take(out, nearest_index(n_in, n_out, scales[i]), axis=axis)
        return out

    return ref


def resize_samples(k, linear):
    def samples(dtype, rng):
        m = lambda s, **kw: make(s, dtype, rng, **kw)  # noqa: E731
        flags = (False,) if not linear else (False, True)
        for align in flags:
            extra = (align,) if linear else ()
            yield Sample((m((1, 2) + (3,) * k), [6] * k) + extra, note="x2")
            yield Sample((m((2, 1) + (4,) * k), [3] * k) + extra, note="shrink")
            yield Sample((m((1, 2) + (3,) * k, noncontig=True), [5] * k) + extra, note="strided")
            yield Sample((m((0, 2) + (3,) * k), [4] * k) + extra, note="empty batch")
            yield Sample((m((1, 1) + (2,) * k), [5] * k) + extra + (1.7,) * k, note="scales")
            yield Sample((m((1, 1) + (1,) * k), [3] * k) + extra, note="from one")

    return samples


def resize_backward_samples(name, k, linear):
    def samples(dtype, rng):
        for s in resize_samples(k, linear)(dtype, rng):
            x, size, *rest = s.args
            g = make(resize_ref(k, linear)(x, size, *rest).shape, dtype, rng)
            yield Sample((g, size, list(x.shape)) + tuple(rest))

    return samples


def resize_backward_ref(k, linear):
    def ref(g, size, input_size, *rest):
        return adjoint(lambda e: resize_ref(k, linear)(e, size, *rest), tuple(input_size), g)

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
        "_pad_circular",
        fn("_pad_circular"),
        lambda x, p: pad_ref(x, p, "circular"),
        pad_samples(2, "circular"),
        EXACT,
    ),
    OpTest(
        "_pad_circular_backward",
        fn("_pad_circular_backward"),
        pad_backward_ref("circular"),
        pad_backward_samples(2, "circular"),
        FLOATS,
    ),
]
for _kind, _mode in (("reflection", "reflect"), ("replication", "replicate")):
    for _k in (1, 2, 3):
        TESTS += [
            OpTest(
                f"{_kind}_pad{_k}d",
                fn(f"{_kind}_pad{_k}d"),
                lambda x, p, _m=_mode: pad_ref(x, p, _m),
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
