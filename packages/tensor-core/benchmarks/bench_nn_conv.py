"""Convolution, pooling and resize kernels beside PyTorch (run with `nox -s bench`).

conv2d forward and forward+backward at N=16, 64->64 channels, 3x3, 56x56
(padding 1), float32; max_pool2d / avg_pool2d 3x3 stride 2 and a 2x bilinear
upsample on the same activation. NumPy has no such kernels (its column is n/a).
Under FLAMBEAU_BENCH_ONLY=gemm only the convolutions (GEMM-bound) run.
"""

from __future__ import annotations

import numpy as np

import flambeau
from flambeau_bench import banner, compare, gemm_only, report

try:
    import flambeau.autograd  # noqa: F401  (enables .backward for the fwd+bwd row)
except ImportError:
    pass

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None

LIBS = ("flambeau", "torch")


def tensors(lib, *arrays, grad=()):
    mod = flambeau if lib == "flambeau" else torch
    out = [mod.from_numpy(a.copy()) for a in arrays]
    for i in grad:
        out[i].requires_grad_(True)
    return out


def conv_forward(lib, x, w, b):
    xs, ws, bs = tensors(lib, x, w, b)
    if lib == "flambeau":
        return lambda: flambeau.conv2d(xs, ws, bs, padding=1)
    return lambda: TF.conv2d(xs, ws, bs, padding=1)


def conv_forward_backward(lib, x, w, b):
    xs, ws, bs = tensors(lib, x, w, b, grad=(1, 2))
    conv = flambeau.conv2d if lib == "flambeau" else TF.conv2d
    g = None

    def step():
        nonlocal g
        out = conv(xs, ws, bs, padding=1)
        if g is None:
            g = (flambeau if lib == "flambeau" else torch).ones_like(out)
        out.backward(g)
        ws.grad = bs.grad = None

    return step


def simple(fn_flambeau, fn_torch, *arrays):
    def make(lib):
        args = tensors(lib, *arrays)
        fn = fn_flambeau if lib == "flambeau" else fn_torch
        return lambda: fn(*args)

    return make


def rows():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 64, 56, 56), dtype=np.float32)
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05
    b = rng.standard_normal(64, dtype=np.float32)
    tf = TF if torch is not None else None
    conv = [
        compare(
            "conv2d 16x64->64 3x3 56^2: forward",
            lambda lib: conv_forward(lib, x, w, b),
            libs=LIBS,
            number=3,
        ),
        compare(
            "conv2d 16x64->64 3x3 56^2: forward+backward",
            lambda lib: conv_forward_backward(lib, x, w, b),
            libs=LIBS,
            number=1,
        ),
    ]
    if gemm_only():
        return conv
    return conv + [
        compare(
            "max_pool2d 3x3/2",
            simple(
                lambda t: flambeau.max_pool2d(t, 3, 2, 1),
                tf and (lambda t: tf.max_pool2d(t, 3, 2, 1)),
                x,
            ),
            libs=LIBS,
            number=3,
        ),
        compare(
            "avg_pool2d 3x3/2",
            simple(
                lambda t: flambeau.avg_pool2d(t, 3, 2, 1),
                tf and (lambda t: tf.avg_pool2d(t, 3, 2, 1)),
                x,
            ),
            libs=LIBS,
            number=3,
        ),
        compare(
            "upsample_bilinear2d x2",
            simple(
                lambda t: flambeau.upsample_bilinear2d(t, [112, 112], False),
                tf and (lambda t: tf.interpolate(t, size=(112, 112), mode="bilinear")),
                x,
            ),
            libs=LIBS,
            number=1,
        ),
    ]


def main() -> None:
    banner()
    report("tensor-core: convolution, pooling, resize (float32)", rows())


if __name__ == "__main__":
    main()
