"""Convolution, pooling and resize kernels beside PyTorch (run with `nox -s bench`).

conv2d forward and forward+backward at N=16, 64->64 channels, 3x3, 56x56
(padding 1), float32; max_pool2d / avg_pool2d 3x3 stride 2 and a 2x bilinear
upsample on the same activation. NumPy has no such kernels (its column is n/a).
"""

from __future__ import annotations

import os

import numpy as np

import flambeau
from flambeau_bench import attempt, measure, report

try:
    import flambeau.autograd  # noqa: F401  (enables .backward for the fwd+bwd row)
except ImportError:
    pass

try:
    import torch
    import torch.nn.functional as TF
except ImportError:
    torch = None

THREADS = os.cpu_count() or 1
LIBS = ("flambeau", "numpy", "torch")


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


def compare(name, make, *, repeat=5, number=3):
    times = []
    for lib in LIBS:
        if lib == "numpy" or (lib == "torch" and torch is None):
            times.append(None)
            continue
        times.append(
            attempt(lambda lib=lib: measure(make(lib), repeat=repeat, number=number), name)
        )
    return (name, *times)


def rows():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 64, 56, 56), dtype=np.float32)
    w = rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05
    b = rng.standard_normal(64, dtype=np.float32)
    tf = TF if torch is not None else None
    return [
        compare("conv2d fwd 16x64x56x56, 3x3", lambda lib: conv_forward(lib, x, w, b)),
        compare(
            "conv2d fwd+bwd 16x64x56x56, 3x3",
            lambda lib: conv_forward_backward(lib, x, w, b),
            number=1,
        ),
        compare(
            "max_pool2d 3x3/2",
            simple(
                lambda t: flambeau.max_pool2d(t, 3, 2, 1),
                tf and (lambda t: tf.max_pool2d(t, 3, 2, 1)),
                x,
            ),
        ),
        compare(
            "avg_pool2d 3x3/2",
            simple(
                lambda t: flambeau.avg_pool2d(t, 3, 2, 1),
                tf and (lambda t: tf.avg_pool2d(t, 3, 2, 1)),
                x,
            ),
        ),
        compare(
            "upsample_bilinear2d x2",
            simple(
                lambda t: flambeau.upsample_bilinear2d(t, [112, 112], False),
                tf and (lambda t: tf.interpolate(t, size=(112, 112), mode="bilinear")),
                x,
            ),
            number=1,
        ),
    ]


def main() -> None:
    attempt(lambda: flambeau.set_num_threads(THREADS), "flambeau.set_num_threads")
    if torch is not None:
        torch.set_num_threads(THREADS)
    print(f"flambeau {getattr(flambeau, '__version__', '?')}, torch "
          f"{torch.__version__ if torch else 'not installed'}; {THREADS} threads")  # fmt: skip
    print("best of 5 runs; ratio above 1 = flambeau faster")
    report("tensor-core: convolution, pooling, resize (float32)", rows())


if __name__ == "__main__":
    main()
