"""nn kernel benchmarks beside PyTorch (run with `nox -s bench`).

softmax / log_softmax / layer_norm over 4096x4096 float32 (the issue's target:
at least as fast as PyTorch), layer_norm forward + backward, cross_entropy on
(4096, 1000), gelu on 16M float32, and scaled dot-product attention (8 batches x 8
heads, L = S = 512, E = 64, float32) forward and forward + backward. NumPy has no
such kernels; its column shows a plain NumPy softmax / layer_norm where one is
easy to write.
"""

from __future__ import annotations

import numpy as np

import flambeau
from flambeau_bench import banner, compare, report

try:
    import torch
except ImportError:
    torch = None

M = 4096
N = 16 * 2**20


def np_softmax(a, log=False):
    z = a - a.max(axis=1, keepdims=True)
    if log:
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def np_layer_norm(a, w, b):
    mean = a.mean(axis=1, keepdims=True)
    var = a.var(axis=1, keepdims=True)
    return (a - mean) / np.sqrt(var + 1e-5) * w + b


def workloads(rng):
    x = rng.standard_normal((M, M), dtype=np.float32)
    w = rng.standard_normal(M, dtype=np.float32)
    b = rng.standard_normal(M, dtype=np.float32)
    g = rng.standard_normal((M, M), dtype=np.float32)
    logits = rng.standard_normal((4096, 1000), dtype=np.float32)
    target = rng.integers(0, 1000, 4096)
    big = rng.standard_normal(N, dtype=np.float32)

    def softmax(lib, log=False):
        if lib == "numpy":
            return lambda: np_softmax(x, log)
        mod = flambeau if lib == "flambeau" else torch
        t = mod.from_numpy(x)
        fn = mod.log_softmax if log else mod.softmax
        return lambda: fn(t, 1)

    def layer_norm(lib):
        if lib == "numpy":
            return lambda: np_layer_norm(x, w, b)
        mod = flambeau if lib == "flambeau" else torch
        t, tw, tb = (mod.from_numpy(v) for v in (x, w, b))
        if lib == "torch":
            return lambda: torch.nn.functional.layer_norm(t, (M,), tw, tb)
        return lambda: flambeau.layer_norm(t, [M], tw, tb)

    def layer_norm_fwd_bwd(lib):
        if lib == "numpy":
            return None
        if lib == "torch":
            t, tw, tb, tg = (torch.from_numpy(v) for v in (x, w, b, g))

            def run():
                out, mean, rstd = torch.native_layer_norm(t, (M,), tw, tb, 1e-5)
                return torch.ops.aten.native_layer_norm_backward(
                    tg, t, (M,), mean, rstd, tw, tb, [True, True, True]
                )

            return run
        t, tw, tb, tg = (flambeau.from_numpy(v) for v in (x, w, b, g))

        def run():
            out, mean, rstd = flambeau.native_layer_norm(t, [M], tw, tb, 1e-5)
            return flambeau.native_layer_norm_backward(
                tg, t, [M], mean, rstd, tw, tb, [True, True, True]
            )

        return run

    def cross_entropy(lib):
        if lib == "numpy":
            return lambda: -np_softmax(logits, True)[np.arange(4096), target].mean()
        if lib == "torch":
            t, tt = torch.from_numpy(logits), torch.from_numpy(target)
            return lambda: torch.nn.functional.cross_entropy(t, tt)
        t, tt = flambeau.from_numpy(logits), flambeau.from_numpy(target)
        return lambda: flambeau.cross_entropy_loss(t, tt)

    def gelu(lib):
        if lib == "numpy":
            return None
        if lib == "torch":
            t = torch.from_numpy(big)
            return lambda: torch.nn.functional.gelu(t)
        t = flambeau.from_numpy(big)
        return lambda: flambeau.gelu(t)

    qkv = [rng.standard_normal((8, 8, 512, 64), dtype=np.float32) for _ in range(4)]

    def attention(lib, backward=False):
        if lib == "numpy":
            return None
        if lib == "torch":
            q, k, v, g = (torch.from_numpy(a) for a in qkv)
            if not backward:
                return lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v)
            fwd = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu
            bwd = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward

            def run():
                out, lse = fwd(q, k, v)
                return bwd(g, q, k, v, out, lse, 0.0, False)

            return run
        q, k, v, g = (flambeau.from_numpy(a) for a in qkv)
        if not backward:
            return lambda: flambeau.scaled_dot_product_attention(q, k, v)

        def run():
            out, lse, seed, offset = flambeau._scaled_dot_product_attention_forward(q, k, v)
            return flambeau._scaled_dot_product_attention_backward(
                g, q, k, v, out, lse, seed, offset
            )

        return run

    return [
        ("softmax 4096x4096 f32", lambda lib: softmax(lib)),
        ("log_softmax 4096x4096 f32", lambda lib: softmax(lib, True)),
        ("layer_norm 4096x4096 f32", layer_norm),
        ("layer_norm fwd+bwd 4096x4096", layer_norm_fwd_bwd),
        ("cross_entropy (4096, 1000)", cross_entropy),
        ("gelu 16M f32", gelu),
        ("sdpa 8x8x512x64 f32", attention),
        ("sdpa fwd+bwd 8x8x512x64", lambda lib: attention(lib, True)),
    ]


def main() -> None:
    banner("best of 5 runs; ratio above 1 = flambeau faster; numpy is single-threaded")
    rng = np.random.default_rng(0)
    rows = [compare(name, make, number=3) for name, make in workloads(rng)]
    report("tensor-core: nn kernels", rows)


if __name__ == "__main__":
    main()
